import type { IncomingMessage, ServerResponse } from 'node:http';
import { serve } from '@ai4ts/test-kit';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  CancelledNotificationSchema,
  ListToolsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';

/** One page of a `tools/list` answer, as the server chooses to send it (malformed on purpose, when it likes). */
export interface HostilePage {
  tools: unknown;
  nextCursor?: string;
}

/** How the hostile server answers; `call` may never resolve (a server that hangs). */
export interface HostileBehaviour {
  list(cursor: string | undefined): HostilePage | Promise<HostilePage>;
  call?(name: string, args: Record<string, unknown>): CallToolResult | Promise<CallToolResult>;
}

export interface HostileServer {
  url: string;
  /** The cursor of each `tools/list` request, in order (undefined for the first page). */
  listed: (string | undefined)[];
  /** Each `tools/call`: the server's tool name and the arguments. */
  calls: { name: string; args: Record<string, unknown> }[];
  /** The request ids of `notifications/cancelled` the client sent. */
  cancelled: unknown[];
  close(): Promise<void>;
}

/**
 * An MCP server made with the official SDK's low-level `Server` (which sends a `tools/list` result as the handler
 * returns it, unchecked) over stateless Streamable HTTP on 127.0.0.1: a fresh server and transport per request.
 */
export async function hostileServer(behaviour: HostileBehaviour): Promise<HostileServer> {
  const listed: HostileServer['listed'] = [];
  const calls: HostileServer['calls'] = [];
  const cancelled: unknown[] = [];
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== 'POST') {
      res.writeHead(405).end();
      return;
    }
    const server = new Server({ name: 'hostile', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, async (request) => {
      listed.push(request.params?.cursor);
      return (await behaviour.list(request.params?.cursor)) as never;
    });
    server.setRequestHandler(CallToolRequestSchema, async (request) => {
      const { name, arguments: args = {} } = request.params;
      calls.push({ name, args });
      if (!behaviour.call) throw new Error(`no tool "${name}"`);
      return behaviour.call(name, args);
    });
    server.setNotificationHandler(CancelledNotificationSchema, (notification) => {
      cancelled.push(notification.params.requestId);
    });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res);
  };
  const http = await serve((req, res) => void handle(req, res).catch(() => res.destroy()), { readBody: false });
  return { url: new URL('/mcp', http.url).href, listed, calls, cancelled, close: () => http.close() };
}

/** A well-formed tool listing entry. */
export function tool(name: string, inputSchema: unknown = { type: 'object' }): Record<string, unknown> {
  return { name, inputSchema };
}

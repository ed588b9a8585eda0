/**
 * ai4ts tools served over MCP, so MCP hosts (Claude Desktop, IDEs, other agents) can call them. Built on the SDK's
 * low-level `Server` rather than `McpServer`: a tool already carries its JSON Schema and its validation, and the
 * call then runs exactly as in the tool loop (same validation, timeout, abort and error results).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { runTool, type Tool, ToolError, type ToolProgress, validateToolCall } from '@ai4ts/core';
import { toolsByName } from '@ai4ts/core/internal';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import { toMcpResult } from './content.js';

/** Who the server says it is, and what it tells clients. */
export interface ServeMcpOptions {
  name: string;
  version: string;
  /** Told to the client at the handshake: how to use these tools. */
  instructions?: string;
}

/** A running MCP server over ai4ts tools (see {@link serveMcp}). */
export interface ServedMcp {
  /** A node:http request listener serving Streamable HTTP wherever it is mounted (any path). */
  handler(req: IncomingMessage, res: ServerResponse): void;
  /** The same as a fetch-style handler (`Request` in, `Response` out), for edge runtimes, Bun, Deno, Hono... */
  fetch(request: Request): Promise<Response>;
  /** Serves over this process's stdin and stdout (a server a host starts as a command). */
  connectStdio(): Promise<void>;
  /** Ends every session and the stdio connection. */
  close(): Promise<void>;
}

/**
 * Serves `tools` as an MCP server. `tools/list` publishes each tool's JSON Schema (a zod schema's as
 * `z.toJSONSchema` gives it); `tools/call` validates the arguments as the tool loop does, and invalid arguments,
 * a throw or a timeout come back as `isError` results; a client's cancellation aborts the tool's signal, and
 * `ctx.progress` reaches the client as progress notifications.
 *
 * Over HTTP each client gets a session (the `mcp-session-id` header); `DELETE` ends it.
 *
 * @throws TypeError when two tools share a name or a tool has no `execute` (a passthrough tool cannot be served).
 */
export function serveMcp(tools: readonly Tool[], options: ServeMcpOptions): ServedMcp {
  const byName = toolsByName(tools);
  for (const tool of tools)
    if (!tool.execute) throw new TypeError(`Tool "${tool.name}" has no execute function and cannot be served`);
  const sessions = new Map<string, WebStandardStreamableHTTPServerTransport>();
  const servers = new Set<Server>();

  const createServer = (): Server => {
    const server = new Server(
      { name: options.name, version: options.version },
      {
        capabilities: { tools: {} },
        ...(options.instructions === undefined ? {} : { instructions: options.instructions }),
      },
    );
    server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: tools.map((tool) => ({
        name: tool.name,
        ...(tool.description === undefined ? {} : { description: tool.description }),
        inputSchema: { ...tool.jsonSchema, type: 'object' as const },
      })),
    }));
    server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
      const { name, arguments: args = {} } = request.params;
      if (!byName.has(name)) throw new McpError(ErrorCode.InvalidParams, `Unknown tool "${name}"`);
      const call = { id: String(extra.requestId), name, arguments: JSON.stringify(args) };
      const checked = await validateToolCall(call, byName);
      if (checked instanceof ToolError) return { content: [{ type: 'text', text: checked.message }], isError: true };
      const token = extra._meta?.progressToken;
      const progress = (update: ToolProgress) => {
        if (token === undefined) return;
        void extra
          .sendNotification({ method: 'notifications/progress', params: { progressToken: token, ...update } })
          .catch(() => {});
      };
      const result = await runTool(checked.tool, checked.args, {
        signal: extra.signal,
        toolCallId: call.id,
        step: 1,
        messages: [],
        progress,
      });
      return toMcpResult(result);
    });
    servers.add(server);
    server.onclose = () => servers.delete(server);
    return server;
  };

  const fetch = async (request: Request): Promise<Response> => {
    const id = request.headers.get('mcp-session-id');
    if (id !== null) {
      const transport = sessions.get(id);
      if (transport) return transport.handleRequest(request);
      return jsonRpcError(404, ErrorCode.ConnectionClosed, 'Session not found');
    }
    // No session yet: this must be the handshake (`initialize`); the transport refuses anything else.
    const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => crypto.randomUUID(),
      onsessioninitialized: (sessionId) => void sessions.set(sessionId, transport),
      onsessionclosed: (sessionId) => void sessions.delete(sessionId),
    });
    const server = createServer();
    await server.connect(transport);
    const response = await transport.handleRequest(request);
    if (transport.sessionId === undefined) await server.close();
    return response;
  };

  let nodeListener: Promise<(req: IncomingMessage, res: ServerResponse) => Promise<void>> | undefined;
  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    // @hono/node-server (the SDK's own node adapter) turns node:http into Request/Response, streams included.
    nodeListener ??= import('@hono/node-server').then(({ getRequestListener }) => getRequestListener(fetch));
    nodeListener.then((listen) => listen(req, res)).catch(() => res.destroy());
  };

  return {
    handler,
    fetch,
    async connectStdio() {
      const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js');
      await createServer().connect(new StdioServerTransport());
    },
    async close() {
      const open = [...servers];
      sessions.clear();
      await Promise.all(open.map((server) => server.close()));
    },
  };
}

function jsonRpcError(status: number, code: number, message: string): Response {
  return Response.json({ jsonrpc: '2.0', error: { code, message }, id: null }, { status });
}

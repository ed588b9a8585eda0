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
import { jsonRpcError, McpHttpGuard, type McpHttpGuardOptions } from './guard.js';

/** Who the server says it is, what it tells clients, and (over HTTP) who may reach it and for how long. */
export interface ServeMcpOptions extends McpHttpGuardOptions {
  name: string;
  version: string;
  /** Told to the client at the handshake: how to use these tools. */
  instructions?: string;
  /** The most HTTP sessions open at once (100 by default); past it a new client gets 503 until one ends. */
  maxSessions?: number;
  /**
   * Milliseconds an HTTP session may stay idle, with no request running or arriving, before it is closed (30
   * minutes by default); its client then gets 404 and starts a new one, as MCP clients do.
   */
  sessionIdleTimeout?: number;
}

const DEFAULT_MAX_SESSIONS = 100;
const DEFAULT_SESSION_IDLE_MS = 30 * 60_000;

/** An HTTP session: its transport, the requests of it still running, and the timer that closes it once idle. */
interface Session {
  transport: WebStandardStreamableHTTPServerTransport;
  running: number;
  idle: ReturnType<typeof setTimeout> | undefined;
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
 * Over HTTP each client gets a session (the `mcp-session-id` header); `DELETE` ends it, and so does
 * `sessionIdleTimeout`; at most `maxSessions` are open. Before any JSON-RPC runs, a request must be for an allowed
 * host from an allowed origin (this machine only, by default: DNS rebinding) and pass `bearerToken` and
 * `authenticate` when they are set: 403 and 401 otherwise.
 *
 * @throws TypeError when two tools share a name or a tool has no `execute` (a passthrough tool cannot be served).
 * @throws RangeError when `maxSessions` or `sessionIdleTimeout` is not a positive integer.
 */
export function serveMcp(tools: readonly Tool[], options: ServeMcpOptions): ServedMcp {
  const byName = toolsByName(tools);
  for (const tool of tools)
    if (!tool.execute) throw new TypeError(`Tool "${tool.name}" has no execute function and cannot be served`);
  const { maxSessions = DEFAULT_MAX_SESSIONS, sessionIdleTimeout = DEFAULT_SESSION_IDLE_MS } = options;
  for (const [name, value] of Object.entries({ maxSessions, sessionIdleTimeout }))
    if (!(Number.isInteger(value) && value > 0)) throw new RangeError(`serveMcp: ${name} must be a positive integer`);
  const guard = new McpHttpGuard(options);
  const sessions = new Map<string, Session>();
  /** Handshakes under way: they count against `maxSessions` before their session exists. */
  let opening = 0;
  const servers = new Set<Server>();

  const end = (id: string, session: Session) => {
    clearTimeout(session.idle);
    if (sessions.get(id) === session) sessions.delete(id);
  };
  /** Runs one request of a session; once none is running, the idle timer starts. */
  const track = async (id: string, session: Session, respond: () => Promise<Response>): Promise<Response> => {
    clearTimeout(session.idle);
    session.running++;
    const settle = () => {
      if (--session.running > 0 || sessions.get(id) !== session) return;
      session.idle = setTimeout(() => {
        end(id, session);
        void session.transport.close();
      }, sessionIdleTimeout);
      // An idle session's timer must not keep a Node process alive.
      session.idle.unref?.();
    };
    let response: Response;
    try {
      response = await respond();
    } catch (error) {
      settle();
      throw error;
    }
    return whenBodyEnds(response, settle);
  };

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
    const refused = await guard.check(request);
    if (refused) return refused;
    const id = request.headers.get('mcp-session-id');
    if (id !== null) {
      const session = sessions.get(id);
      if (session) return track(id, session, () => session.transport.handleRequest(request));
      return jsonRpcError(404, ErrorCode.ConnectionClosed, 'Session not found');
    }
    if (sessions.size + opening >= maxSessions)
      return jsonRpcError(
        503,
        -32000,
        `Too many sessions: at most ${maxSessions} MCP sessions at once (maxSessions); end one (DELETE) or wait for an idle one to close`,
      );
    // No session yet: this must be the handshake (`initialize`); the transport refuses anything else.
    opening++;
    let opened: { id: string; session: Session } | undefined;
    try {
      const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => crypto.randomUUID(),
        onsessioninitialized: (sessionId) => {
          opened = { id: sessionId, session: { transport, running: 0, idle: undefined } };
          sessions.set(sessionId, opened.session);
        },
        onsessionclosed: (sessionId) => {
          const session = sessions.get(sessionId);
          if (session) end(sessionId, session);
        },
      });
      const server = createServer();
      await server.connect(transport);
      const response = await transport.handleRequest(request);
      if (!opened) {
        await server.close();
        return response;
      }
      const { id: sessionId, session } = opened;
      return track(sessionId, session, async () => response);
    } finally {
      opening--;
    }
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
      for (const [id, session] of sessions) end(id, session);
      await Promise.all(open.map((server) => server.close()));
    },
  };
}

/** `response` with `done` called once its body has been read to the end, failed or been cancelled. */
function whenBodyEnds(response: Response, done: () => void): Response {
  const body = response.body;
  if (!body) {
    done();
    return response;
  }
  let ended = false;
  const finish = () => {
    if (ended) return;
    ended = true;
    done();
  };
  const reader = body.getReader();
  const watched = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done: last, value } = await reader.read();
        if (last) {
          finish();
          controller.close();
        } else controller.enqueue(value);
      } catch (error) {
        finish();
        controller.error(error);
      }
    },
    cancel(reason) {
      finish();
      return reader.cancel(reason);
    },
  });
  return new Response(watched, { status: response.status, statusText: response.statusText, headers: response.headers });
}

import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { serve } from '@ai4ts/test-kit';
import { buildServer } from './fixtures/server.mjs';
import type { FixtureRecord } from './helpers.ts';

/** The fixture server over HTTP on 127.0.0.1, one McpServer per session, recording into `records`. */
export interface HttpFixture {
  url: string;
  records: FixtureRecord[];
  /** Requests the server received, to see which transport a client used and what it sent. */
  requests: { method: string; url: string; authorization: string | undefined }[];
  /** Forgets every session, as a restarted server would: their requests get 404. */
  forgetSessions(): void;
  close(): Promise<void>;
}

type Record = (entry: FixtureRecord) => void;
type Connectable = ReturnType<typeof buildServer>;

/** Streamable HTTP at `/mcp` (sessions by `mcp-session-id`), as the SDK's own examples serve it. */
export function streamableFixture(): Promise<HttpFixture> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const servers: Connectable[] = [];
  return listen(async (req, res, record) => {
    const id = req.headers['mcp-session-id'];
    if (typeof id === 'string') {
      const existing = sessions.get(id);
      if (existing) return existing.handleRequest(req, res);
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }));
      return;
    }
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      onsessioninitialized: (sessionId) => void sessions.set(sessionId, transport),
    });
    const server = buildServer(record);
    servers.push(server);
    await server.connect(transport);
    await transport.handleRequest(req, res);
  }, async () => {
    sessions.clear();
    await Promise.all(servers.map((server) => server.close()));
  }, () => sessions.clear());
}

/** Only the older HTTP+SSE transport: `GET /sse` opens the stream, `POST /messages?sessionId=` carries requests. */
export function sseOnlyFixture(): Promise<HttpFixture> {
  const sessions = new Map<string, SSEServerTransport>();
  const servers: Connectable[] = [];
  return listen(async (req, res, record) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (req.method === 'GET' && url.pathname === '/sse') {
      const transport = new SSEServerTransport('/messages', res);
      sessions.set(transport.sessionId, transport);
      const server = buildServer(record);
      servers.push(server);
      await server.connect(transport);
      return;
    }
    const transport = sessions.get(url.searchParams.get('sessionId') ?? '');
    if (req.method === 'POST' && url.pathname === '/messages' && transport) return transport.handlePostMessage(req, res);
    res.writeHead(405).end('Method Not Allowed');
  }, async () => {
    sessions.clear();
    await Promise.all(servers.map((server) => server.close()));
  }, () => sessions.clear(), '/sse');
}

async function listen(
  handle: (req: IncomingMessage, res: ServerResponse, record: Record) => Promise<void>,
  closeServers: () => Promise<void>,
  forgetSessions: () => void,
  path = '/mcp',
): Promise<HttpFixture> {
  const records: FixtureRecord[] = [];
  const requests: HttpFixture['requests'] = [];
  const record: Record = (entry) => void records.push(entry);
  // The SDK's transports read the request body themselves.
  const server = await serve(
    (req, res) => {
      requests.push({ method: req.method ?? '', url: req.url ?? '', authorization: req.headers.authorization });
      handle(req, res, record).catch(() => res.destroy());
    },
    { readBody: false },
  );
  return {
    url: new URL(path, server.url).href,
    records,
    requests,
    forgetSessions,
    close: async () => {
      await closeServers();
      await server.close();
    },
  };
}

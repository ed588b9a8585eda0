/** Test helpers: a scripted daemon and a fetch handler on the kit's server, and readers of the gateway's SSE. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { serve } from '@ai4ts/test-kit';
import { lingerOnClose } from '../src/http/connection.js';

export interface DaemonRequest {
  method: string | undefined;
  url: string | undefined;
  headers: IncomingMessage['headers'];
  body: unknown;
}

export interface Daemon {
  url: string;
  requests: DaemonRequest[];
  /** Resolves when a request's connection closed before the daemon ended its response. */
  cut: Promise<void>;
  close(): Promise<void>;
}

/** A scripted daemon on the kit's server. `script` answers each request (the body is already read as JSON). */
export async function startDaemon(
  script: (res: ServerResponse, request: DaemonRequest) => void | Promise<void>,
): Promise<Daemon> {
  const requests: DaemonRequest[] = [];
  let onCut!: () => void;
  const cut = new Promise<void>((resolve) => {
    onCut = resolve;
  });
  const server = await serve((req, res, n) => {
    const text = server.bodies[n - 1];
    const request = { method: req.method, url: req.url, headers: req.headers, body: text ? JSON.parse(text) : undefined };
    requests.push(request);
    res.on('close', () => {
      if (!res.writableFinished) onCut();
    });
    void script(res, request);
  });
  return { url: `${server.url}chat`, requests, cut, close: server.close };
}

/** Splits an SSE response body into its `data:` payloads (one per block), comments left out. */
export function dataLines(body: string): string[] {
  return body
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) =>
      block
        .split('\n')
        .filter((line) => line.startsWith('data: '))
        .map((line) => line.slice(6))
        .join('\n'),
    )
    .filter((data) => data !== '');
}

/** One OpenAI chunk as the tests read it. */
export interface Chunk {
  id?: string;
  model?: string;
  choices?: Array<{
    delta: {
      role?: string;
      content?: string;
      reasoning_content?: string;
      tool_calls?: unknown;
      daemon_tools?: unknown;
    };
    finish_reason: string | null;
  }>;
  usage?: unknown;
  session_id?: string;
  error?: { message: string; type: string; param: string | null; code: string | null };
}

/** An OpenAI SSE body read back: its chunks, whether it ended with `[DONE]`, and the text and reasoning. */
export function readChunks(body: string): { chunks: Chunk[]; done: boolean; text: string; reasoning: string } {
  const lines = dataLines(body);
  const done = lines.at(-1) === '[DONE]';
  const chunks = lines.filter((d) => d !== '[DONE]').map((d) => JSON.parse(d) as Chunk);
  const join = (key: 'content' | 'reasoning_content') => chunks.map((c) => c.choices?.[0]?.delta[key] ?? '').join('');
  return { chunks, done, text: join('content'), reasoning: join('reasoning_content') };
}

/** A fetch handler served over node:http on 127.0.0.1, and every rejection the handler returned. */
export interface FetchServer {
  url: string;
  /** What the handler rejected with: a fetch handler must always answer, so tests expect none. */
  rejections: unknown[];
  /** Bytes read from client sockets so far. */
  bytesRead(): number;
  close(): Promise<void>;
}

/**
 * Serves `handler` on 127.0.0.1 the way fetch-style runtimes do: the request body streams in (never read ahead),
 * the response body streams out with backpressure, and a client that leaves cancels the response body. A rejection
 * is recorded and answered with a bare 500.
 */
export async function serveFetchHandler(handler: (request: Request) => Promise<Response>): Promise<FetchServer> {
  const rejections: unknown[] = [];
  // Each socket is counted from its first request: one that never carried a request has read nothing of a body.
  const sockets = new Set<Socket>();
  let read = 0;
  const server = await serve(async (req, res) => {
    const { socket } = req;
    if (!sockets.has(socket)) {
      sockets.add(socket);
      socket.once('close', () => {
        read += socket.bytesRead;
        sockets.delete(socket);
      });
    }
    const controller = new AbortController();
    res.on('close', () => controller.abort());
    const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers))
      if (typeof value === 'string') headers.set(name, value);
    const init: RequestInit & { duplex?: 'half' } = { method: req.method, headers, signal: controller.signal };
    let cancelled = false;
    if (hasBody) {
      // Pulled one chunk at a time (no read-ahead); a cancelled body leaves the rest unread.
      const chunks = req[Symbol.asyncIterator]();
      init.body = new ReadableStream<Uint8Array>(
        {
          async pull(stream) {
            const next = await chunks.next();
            if (next.done) stream.close();
            else stream.enqueue(new Uint8Array(next.value));
          },
          cancel() {
            cancelled = true;
            req.pause();
          },
        },
        { highWaterMark: 0 },
      );
      init.duplex = 'half';
    }
    let response: Response;
    try {
      response = await handler(new Request(`http://127.0.0.1${req.url ?? '/'}`, init));
    } catch (error) {
      rejections.push(error);
      res.writeHead(500).end();
      return;
    }
    const out = Object.fromEntries(response.headers);
    if (cancelled) lingerOnClose(req.socket); // as the gateway's own node adapter does
    res.writeHead(response.status, cancelled ? { ...out, connection: 'close' } : out);
    if (!response.body) {
      res.end();
      return;
    }
    const reader = response.body.getReader();
    res.on('close', () => {
      if (!res.writableFinished) reader.cancel().catch(() => {});
    });
    try {
      for (let next = await reader.read(); !next.done; next = await reader.read())
        if (!res.write(next.value)) await new Promise((resolve) => res.once('drain', resolve));
      res.end();
    } catch {
      res.destroy();
    }
  }, { readBody: false });
  return {
    url: new URL(server.url).origin,
    rejections,
    bytesRead: () => read + [...sockets].reduce((sum, socket) => sum + socket.bytesRead, 0),
    close: server.close,
  };
}

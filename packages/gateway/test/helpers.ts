/** Test helpers: a scripted daemon on 127.0.0.1, SSE framing for both dialects, and readers for results. */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { BridgeEvent } from '@ai4ts/bridge';
import { lingerOnClose } from '../src/http/connection.js';

/** One `data:` block of the typed-event dialect. */
export const typed = (event: Record<string, unknown>): string => `data: ${JSON.stringify(event)}\n\n`;

/** One block of the named-event dialect. */
export const named = (event: string, data: unknown): string => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

/** A whole typed-dialect answer: reasoning, a daemon-run tool round, text over two rounds, usage per round, done. */
export const TYPED_ANSWER = [
  typed({ type: 'reasoning', content: 'Let me ' }),
  typed({ type: 'reasoning', content: 'check.' }),
  typed({ type: 'tool_start', id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' }),
  typed({ type: 'tool_result', id: 'call_1', name: 'get_weather', output: '18C', success: true, duration_ms: 42 }),
  typed({ type: 'tokens', prompt: 10, completion: 5, total: 15 }),
  typed({ type: 'reasoning', content: ' Now answer.' }),
  typed({ type: 'text', content: 'It is ' }),
  typed({ type: 'text', content: '18C in Paris.' }),
  typed({ type: 'tokens', prompt: 20, completion: 7, total: 27 }),
  typed({
    type: 'done',
    tokens: { prompt: 30, completion: 12, total: 42 },
    tool_calls: 1,
    session_id: 'daemon-session',
  }),
].join('');

/** A whole named-dialect answer. */
export const NAMED_ANSWER = [
  named('start', { message_id: 'm-1' }),
  named('message', { content: 'Hello' }),
  named('message', { content: ', world' }),
  named('done', { message_id: 'm-1' }),
].join('');

/** A body as a ReadableStream cut into the given pieces. */
export function streamOf(pieces: Array<string | Uint8Array>): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let i = 0;
  return new ReadableStream({
    pull(controller) {
      const piece = pieces[i++];
      if (piece === undefined) controller.close();
      else controller.enqueue(typeof piece === 'string' ? encoder.encode(piece) : piece);
    },
  });
}

/** Collects every event of a reader, or the error it threw. */
export async function drain(events: AsyncIterable<BridgeEvent>): Promise<{ events: BridgeEvent[]; error?: unknown }> {
  const out: BridgeEvent[] = [];
  try {
    for await (const event of events) out.push(event);
    return { events: out };
  } catch (error) {
    return { events: out, error };
  }
}

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

/** A scripted daemon on 127.0.0.1, port 0. `script` answers each request (the body is already read as JSON). */
export async function startDaemon(
  script: (res: ServerResponse, request: DaemonRequest) => void | Promise<void>,
): Promise<Daemon> {
  const requests: DaemonRequest[] = [];
  let onCut!: () => void;
  const cut = new Promise<void>((resolve) => {
    onCut = resolve;
  });
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const request = {
        method: req.method,
        url: req.url,
        headers: req.headers,
        body: text ? JSON.parse(text) : undefined,
      };
      requests.push(request);
      res.on('close', () => {
        if (!res.writableFinished) onCut();
      });
      void script(res, request);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/chat`,
    requests,
    cut,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Answers with SSE headers and the given text, then ends. */
export function sse(res: ServerResponse, body: string): void {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.end(body);
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

/** The body reader of a response that must have a body. */
export function readerOf(response: Response): ReadableStreamDefaultReader<Uint8Array> {
  if (!response.body) throw new Error('The response has no body');
  return response.body.getReader();
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
  const sockets = new Set<Socket>();
  let read = 0;
  const server = createServer(async (req, res) => {
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
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => {
      read += socket.bytesRead;
      sockets.delete(socket);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    rejections,
    bytesRead: () => read + [...sockets].reduce((sum, socket) => sum + socket.bytesRead, 0),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * A real HTTP server on 127.0.0.1 for one test, on a free port: counts requests and the connections that carried
 * one, records each request's body, and its close ends the connections still open (a hanging stream included).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface TestServer {
  /** `http://127.0.0.1:<port>/`. */
  url: string;
  /** `http://127.0.0.1:<port>/v1`: the base URL of a model API client. */
  baseURL: string;
  /** Requests received so far. */
  readonly requests: number;
  /** The body of each request as text, in arrival order (empty when the handler reads it itself). */
  readonly bodies: readonly string[];
  /**
   * Connections open now that carried a request. (undici may open a spare connection after one is destroyed; one
   * that never carried a request holds nothing.)
   */
  readonly sockets: number;
  /** Resolves once no connection that carried a request is open; rejects after `withinMs` with how many still are. */
  socketsClosed(withinMs?: number): Promise<void>;
  /** Resolves when the response of request `n` (1-based) is closed, by either side; asked before it arrived too. */
  closed(n: number): Promise<void>;
  /** Ends every open connection, then stops listening. */
  close(): Promise<void>;
}

/** Answers request `n` (1-based). */
export type RequestHandler = (req: IncomingMessage, res: ServerResponse, n: number) => void;

export interface ServeOptions {
  /**
   * The server's keep-alive after a response (Node's default 5 s when absent). Under 1 s the server advertises
   * `Keep-Alive: timeout=0`, so undici closes each connection once its response is done: a connection still open
   * then is one the client holds.
   */
  keepAliveTimeoutMs?: number;
  /**
   * By default the handler runs once the whole body arrived (in `bodies`), so no answer races the upload. `false`
   * hands it the request as it comes, for a handler that reads the body itself (the MCP SDK's transports do).
   */
  readBody?: boolean;
}

const open = new Set<TestServer>();

export async function serve(handler: RequestHandler, options: ServeOptions = {}): Promise<TestServer> {
  let requests = 0;
  const bodies: string[] = [];
  // One close per request, made by whichever comes first: the request, or a test asking for its close.
  const closes = new Map<number, { promise: Promise<void>; resolve: () => void }>();
  const closeOf = (n: number) => {
    let close = closes.get(n);
    if (!close) {
      let resolve!: () => void;
      const promise = new Promise<void>((done) => {
        resolve = done;
      });
      close = { promise, resolve };
      closes.set(n, close);
    }
    return close;
  };
  let sockets = 0;
  let onIdle: (() => void) | undefined;
  const used = new WeakSet<object>();
  const server: Server = createServer((req, res) => {
    const n = ++requests;
    const socket = req.socket;
    if (!used.has(socket)) {
      used.add(socket);
      sockets++;
      socket.once('close', () => {
        if (--sockets === 0) onIdle?.();
      });
    }
    const { resolve } = closeOf(n);
    res.once('close', () => resolve());
    bodies[n - 1] = '';
    if (options.readBody === false) return handler(req, res, n);
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      bodies[n - 1] += chunk;
    });
    req.once('end', () => handler(req, res, n));
  });
  if (options.keepAliveTimeoutMs !== undefined) server.keepAliveTimeout = options.keepAliveTimeoutMs;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}/`;
  const handle: TestServer = {
    url,
    baseURL: `${url}v1`,
    get requests() {
      return requests;
    },
    bodies,
    get sockets() {
      return sockets;
    },
    socketsClosed(withinMs = 2000) {
      if (sockets === 0) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${sockets} socket(s) still open after ${withinMs} ms`)), withinMs);
        onIdle = () => {
          clearTimeout(timer);
          onIdle = undefined;
          resolve();
        };
      });
    },
    closed: (n) => closeOf(n).promise,
    close() {
      open.delete(handle);
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
  open.add(handle);
  return handle;
}

/** Closes every server still open (for afterEach). */
export async function closeAll(): Promise<void> {
  await Promise.all([...open].map((server) => server.close()));
}

/** Resolves when this response is closed, by either side. */
export function closed(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => res.once('close', () => resolve()));
}

export const SSE_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' };

/** Writes the SSE response headers right away, so the client has its response and waits for the body. */
export function startSse(res: ServerResponse): void {
  res.writeHead(200, SSE_HEADERS);
  res.flushHeaders();
}

/** Answers 200 with the SSE headers and the whole text, then ends: a server whose answer is ready at once. */
export function sendSse(res: ServerResponse, text: string): void {
  res.writeHead(200, SSE_HEADERS);
  res.end(text);
}

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A real HTTP server on 127.0.0.1 for one test: counts requests and sockets, reports when each connection closes. */
export interface TestServer {
  url: string;
  /** Requests received so far. */
  readonly requests: number;
  /**
   * Connections open now that carried a request. (undici may open a spare connection after one is destroyed; one
   * that never carried a request holds nothing.)
   */
  readonly sockets: number;
  /** Resolves once no connection that carried a request is open; rejects after `withinMs` with how many still are. */
  socketsClosed(withinMs?: number): Promise<void>;
  /** Resolves when the response of request `n` (1-based) is closed, by either side. */
  closed(n: number): Promise<void>;
  stop(): Promise<void>;
}

type Handler = (req: IncomingMessage, res: ServerResponse, n: number) => void;

/**
 * `keepAliveTimeoutMs` is the server's keep-alive after a response (Node's default 5 s when absent). Under 1 s the
 * server advertises `Keep-Alive: timeout=0`, so undici closes each connection once its response is done: a
 * connection still open then is one the client holds.
 */
export async function serve(handler: Handler, options: { keepAliveTimeoutMs?: number } = {}): Promise<TestServer> {
  let requests = 0;
  const closes = new Map<number, Promise<void>>();
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
    closes.set(n, new Promise((resolve) => res.once('close', () => resolve())));
    req.resume();
    req.once('end', () => handler(req, res, n));
  });
  if (options.keepAliveTimeoutMs !== undefined) server.keepAliveTimeout = options.keepAliveTimeoutMs;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    get requests() {
      return requests;
    },
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
    closed(n) {
      const close = closes.get(n);
      if (!close) throw new Error(`request ${n} never arrived`);
      return close;
    },
    stop: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Writes the SSE response headers right away, so the client has its response and waits for the body. */
export function startSse(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  res.flushHeaders();
}

export const sseEvent = (data: unknown): string => `data: ${JSON.stringify(data)}\n\n`;

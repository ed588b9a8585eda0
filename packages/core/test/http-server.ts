import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A real HTTP server on 127.0.0.1 for one test: counts requests and sockets, reports when each connection closes. */
export interface TestServer {
  url: string;
  /** Requests received so far. */
  readonly requests: number;
  /** TCP connections open now. */
  readonly sockets: number;
  /** Resolves once no connection is open; rejects after `withinMs` with how many still are. */
  socketsClosed(withinMs?: number): Promise<void>;
  /** Resolves when the response of request `n` (1-based) is closed, by either side. */
  closed(n: number): Promise<void>;
  stop(): Promise<void>;
}

type Handler = (req: IncomingMessage, res: ServerResponse, n: number) => void;

export async function serve(handler: Handler): Promise<TestServer> {
  let requests = 0;
  const closes = new Map<number, Promise<void>>();
  let sockets = 0;
  let onIdle: (() => void) | undefined;
  const server: Server = createServer((req, res) => {
    const n = ++requests;
    closes.set(n, new Promise((resolve) => res.once('close', () => resolve())));
    req.resume();
    req.once('end', () => handler(req, res, n));
  });
  server.on('connection', (socket) => {
    sockets++;
    socket.once('close', () => {
      if (--sockets === 0) onIdle?.();
    });
  });
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

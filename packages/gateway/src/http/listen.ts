/** The gateway on node:http: its server's timeouts on client connections, and a graceful shutdown. */
import { createServer, type Server } from 'node:http';
import type { GatewayOptions } from '../context.js';
import { createGateway, type Gateway } from '../gateway.js';

/** node:http's timeouts on client connections, in milliseconds; 0 turns one off. */
export interface ServerTimeouts {
  /** Until a request's headers have arrived; a slower client gets a 408. Default 30000. */
  headersMs?: number;
  /**
   * Until a whole request (headers and body, at most 4 MiB) has arrived; a slower client gets a 408. Answers are
   * not bounded by it: a stream may last longer. Default 60000; must not be below `headersMs` unless 0.
   */
  requestMs?: number;
  /** How long an idle kept-alive connection waits for its next request. Default 5000. */
  keepAliveMs?: number;
}

/** The defaults: shorter than Node's for headers (60 s) and requests (300 s), Node's own for keep-alive. */
export const DEFAULT_SERVER_TIMEOUTS: Readonly<Required<ServerTimeouts>> = {
  headersMs: 30_000,
  requestMs: 60_000,
  keepAliveMs: 5_000,
};

/** The gateway's options, and where to listen. */
export interface ListenOptions extends GatewayOptions {
  /** 0 (the default) picks a free port. */
  port?: number;
  /** Default `127.0.0.1`: reachable from this machine only, unless you say otherwise. */
  host?: string;
  /** The server's timeouts on client connections; see {@link ServerTimeouts}. */
  serverTimeouts?: ServerTimeouts;
}

/** A running gateway server. */
export interface ListeningGateway {
  server: Server;
  /** `http://HOST:PORT`, with the port actually bound. */
  url: string;
  /** Stops accepting connections, ends open ones, and resolves when the server is closed. */
  close(): Promise<void>;
  /**
   * A graceful shutdown (what the CLI does on SIGTERM): stops accepting connections, refuses new requests (`/readyz`
   * 503), lets streams finish for up to `deadlineMs` (default 30000), then closes every connection, so that clients
   * of resumable streams reconnect to another instance while their generations go on into the store for up to
   * `generationsMs` more (default: `deadlineMs`), and releases the store.
   */
  shutdown(options?: { deadlineMs?: number; generationsMs?: number }): Promise<void>;
  /** {@link Gateway.setRoutes}: replaces the routes; streams in flight keep their upstream. */
  setRoutes: Gateway['setRoutes'];
}

/** Starts {@link createGateway} on node:http, on 127.0.0.1 unless `host` says otherwise. */
export async function listenGateway(options: ListenOptions): Promise<ListeningGateway> {
  const { port = 0, host = '127.0.0.1', serverTimeouts, ...gatewayOptions } = options;
  const timeouts = { ...DEFAULT_SERVER_TIMEOUTS };
  for (const key of ['headersMs', 'requestMs', 'keepAliveMs'] as const) {
    const value = serverTimeouts?.[key];
    if (value === undefined) continue;
    if (!Number.isFinite(value) || value < 0) throw new RangeError(`serverTimeouts.${key} must be 0 or more`);
    timeouts[key] = value;
  }
  const shortest = Math.min(...[timeouts.headersMs, timeouts.requestMs].filter((ms) => ms > 0));
  const gateway = createGateway(gatewayOptions);
  const server = createServer(
    {
      headersTimeout: timeouts.headersMs,
      requestTimeout: timeouts.requestMs,
      keepAliveTimeout: timeouts.keepAliveMs,
      // Node checks the header and request timeouts every 30 s by default, too coarse for short ones.
      connectionsCheckingInterval: Number.isFinite(shortest) ? Math.min(1000, Math.max(10, shortest / 4)) : 30_000,
    },
    gateway.node,
  );
  server.keepAliveTimeout = timeouts.keepAliveMs;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('The proxy is not listening on a TCP port');
  const hostname = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const closed = new Promise<void>((resolve) => server.once('close', () => resolve()));
  return {
    server,
    url: `http://${hostname}:${address.port}`,
    setRoutes: gateway.setRoutes,
    shutdown: async ({ deadlineMs = 30_000, generationsMs = deadlineMs } = {}) => {
      server.close();
      await gateway.drain(deadlineMs);
      server.closeAllConnections();
      await gateway.finish(generationsMs);
      await closed;
    },
    close: () =>
      new Promise((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

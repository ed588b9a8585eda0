import { createServer, type Server } from 'node:http';
import { createOpenAIProxy, type OpenAIProxyOptions } from './proxy.js';

/** The proxy's options, and where to listen. */
export interface ListenOptions extends OpenAIProxyOptions {
  /** 0 (the default) picks a free port. */
  port?: number;
  /** Default `127.0.0.1`: reachable from this machine only, unless you say otherwise. */
  host?: string;
}

/** A running proxy server. */
export interface ListeningProxy {
  server: Server;
  /** `http://HOST:PORT`, with the port actually bound. */
  url: string;
  /** Stops accepting connections, ends open ones, and resolves when the server is closed. */
  close(): Promise<void>;
}

/** Starts {@link createOpenAIProxy} on node:http, on 127.0.0.1 unless `host` says otherwise. */
export async function listenOpenAIProxy(options: ListenOptions): Promise<ListeningProxy> {
  const { port = 0, host = '127.0.0.1', ...proxyOptions } = options;
  const server = createServer(createOpenAIProxy(proxyOptions).node);
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
  return {
    server,
    url: `http://${hostname}:${address.port}`,
    close: () =>
      new Promise((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface TestServer {
  url: string;
  close(): Promise<void>;
}

const open = new Set<TestServer>();

/** A real node:http server on 127.0.0.1, port 0. */
export async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<TestServer> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const handle: TestServer = {
    url: `http://127.0.0.1:${port}/`,
    close: () => {
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
  await Promise.all([...open].map((s) => s.close()));
}

/** Resolves when the client side of this response goes away. */
export function closed(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => res.on('close', () => resolve()));
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export const SSE_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' };

/**
 * The proxy's limits over real sockets: a body past the limit is refused while it is read (413 before the client
 * has sent it all, the server having read little more than the limit, memory bounded), with or without
 * Content-Length, through both handlers; and `Connection: close` is honoured on streams.
 */
import { connect, type Socket } from 'node:net';
import { createGateway, listenGateway, type GatewayOptions } from '@ai4ts/gateway';
import { sendSse } from '@ai4ts/test-kit';
import { afterEach, describe, expect, it } from 'vitest';
import { TYPED_ANSWER } from '../../bridge/test/helpers.js';
import { serveFetchHandler, startDaemon } from './helpers.js';

const MiB = 1024 * 1024;
const LIMIT = 4 * MiB;
const HUGE = 20 * MiB;

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const server of open.splice(0).reverse()) await server.close();
});

/** Both adapters over 127.0.0.1, each with a count of the bytes its server read from client sockets. */
async function adapters(): Promise<Array<{ adapter: string; url: string; bytesRead: () => number }>> {
  const daemon = await startDaemon((res) => sendSse(res, TYPED_ANSWER));
  open.push(daemon);
  const options: GatewayOptions = { upstream: daemon.url, dialect: 'typed' };
  const node = await listenGateway(options);
  open.push(node);
  const sockets: Socket[] = [];
  node.server.on('connection', (socket: Socket) => sockets.push(socket));
  const viaFetch = await serveFetchHandler(createGateway(options).fetch);
  open.push(viaFetch);
  return [
    { adapter: 'node', url: node.url, bytesRead: () => sockets.reduce((sum, socket) => sum + socket.bytesRead, 0) },
    { adapter: 'fetch', url: viaFetch.url, bytesRead: () => viaFetch.bytesRead() },
  ];
}

/** What came back on a raw connection: the response text, and whether the server closed the connection. */
interface Exchange {
  response: string;
  closed: boolean;
  sent: number;
}

/**
 * Sends a request head on a raw socket, then (when `body` is set) that many bytes of chunked body in 64 KiB
 * chunks, stopping as soon as a response arrives; resolves when the server closed the connection or `waitMs`
 * passed after the response began.
 */
function rawExchange(url: string, head: string, body: number, waitMs = 2000): Promise<Exchange> {
  const { port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), '127.0.0.1');
    let response = '';
    let sent = 0;
    let settle: ReturnType<typeof setTimeout> | undefined;
    const finish = (closed: boolean) => {
      clearTimeout(settle);
      socket.destroy();
      resolve({ response, closed, sent });
    };
    socket.on('data', (data: Buffer) => {
      response += data.toString('latin1');
      settle ??= setTimeout(() => finish(false), waitMs);
    });
    socket.on('end', () => finish(true));
    socket.on('error', () => finish(true)); // a reset after the answer: the server is done with us
    socket.on('connect', async () => {
      socket.write(head);
      const chunk = Buffer.alloc(64 * 1024, 'x');
      const frame = Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]);
      while (body > 0 && sent < body && response === '' && !socket.destroyed) {
        sent += chunk.length;
        if (!socket.write(frame))
          await new Promise<void>((resume) => {
            const go = () => {
              socket.off('drain', go);
              socket.off('data', go);
              socket.off('close', go);
              resume();
            };
            socket.on('drain', go);
            socket.on('data', go);
            socket.on('close', go);
          });
      }
      if (body > 0 && sent >= body && !socket.destroyed) socket.write('0\r\n\r\n');
    });
  });
}

const post = (extra: string) =>
  `POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n${extra}\r\n`;

describe('the body limit is enforced while reading', () => {
  it('a 20 MiB chunked body gets a 413 before it is all sent, the server having read about the limit', async () => {
    for (const { adapter, url, bytesRead } of await adapters()) {
      const before = bytesRead();
      const { response, sent } = await rawExchange(url, post('Transfer-Encoding: chunked\r\n'), HUGE);
      expect(response.startsWith('HTTP/1.1 413 '), `${adapter}: ${response.slice(0, 80)}`).toBe(true);
      expect(response).toContain('request_too_large');
      expect(sent, adapter).toBeLessThan(HUGE);
      // The limit, plus what was in flight in the socket's buffers when reading stopped.
      expect(bytesRead() - before, adapter).toBeLessThan(LIMIT + 2 * MiB);
    }
  });

  it('a Content-Length over the limit gets a 413 before any of the body is read', async () => {
    for (const { adapter, url, bytesRead } of await adapters()) {
      const before = bytesRead();
      const { response } = await rawExchange(url, post(`Content-Length: ${HUGE}\r\n`), 0, 500);
      expect(response.startsWith('HTTP/1.1 413 '), adapter).toBe(true);
      expect(bytesRead() - before, adapter).toBeLessThan(4096);
    }
  });

  it('a body the node handler never reads (a 401 answered first) is not read to its end either', async () => {
    const daemon = await startDaemon((res) => sendSse(res, TYPED_ANSWER));
    open.push(daemon);
    const proxy = await listenGateway({ upstream: daemon.url, dialect: 'typed', auth: 'tok-limits-3c1f' });
    open.push(proxy);
    const sockets: Socket[] = [];
    proxy.server.on('connection', (socket: Socket) => sockets.push(socket));
    const { response, sent, closed } = await rawExchange(proxy.url, post('Transfer-Encoding: chunked\r\n'), HUGE);
    expect(response.startsWith('HTTP/1.1 401 ')).toBe(true);
    expect(response.toLowerCase()).toContain('connection: close');
    expect(closed).toBe(true);
    expect(sent).toBeLessThan(HUGE);
    expect(sockets.reduce((sum, socket) => sum + socket.bytesRead, 0)).toBeLessThan(LIMIT + 2 * MiB);
    expect(daemon.requests).toHaveLength(0);
  });

  it('the fetch handler pulls little more than the limit from an endless body, so memory stays bounded', async () => {
    const handler = createGateway({ upstream: 'http://127.0.0.1:9/unused', dialect: 'typed' });
    let pulled = 0;
    let cancelled = false;
    const chunk = new Uint8Array(256 * 1024).fill(0x20);
    const body = new ReadableStream<Uint8Array>(
      {
        pull(stream) {
          pulled += chunk.length;
          stream.enqueue(chunk);
        },
        cancel() {
          cancelled = true;
        },
      },
      { highWaterMark: 0 },
    );
    const heapBefore = process.memoryUsage().heapUsed;
    const init: RequestInit & { duplex: 'half' } = { method: 'POST', body, duplex: 'half' };
    const response = await handler.fetch(new Request('http://proxy.local/v1/chat/completions', init));
    expect(response.status).toBe(413);
    expect(pulled).toBeLessThanOrEqual(LIMIT + chunk.length);
    expect(cancelled).toBe(true);
    expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(64 * MiB);
  });
});

describe('Connection: close', () => {
  it('a streamed answer ends with the connection closed when the request asked for it', async () => {
    for (const { adapter, url } of await adapters()) {
      const payload = JSON.stringify({ model: 'daemon', messages: [{ role: 'user', content: 'hi' }], stream: true });
      const { response, closed } = await rawExchange(
        url,
        `${post(`Connection: close\r\nContent-Length: ${Buffer.byteLength(payload)}\r\n`)}${payload}`,
        0,
      );
      expect(response.startsWith('HTTP/1.1 200 '), adapter).toBe(true);
      expect(response.toLowerCase(), adapter).toContain('connection: close');
      expect(closed, `${adapter} kept the connection open`).toBe(true);
      const body = response.slice(response.indexOf('\r\n\r\n') + 4);
      expect(body).toContain('data: [DONE]');
    }
  });

  it('without it, a streamed answer keeps the connection open for the next request', async () => {
    for (const { adapter, url } of await adapters()) {
      const payload = JSON.stringify({ model: 'daemon', messages: [{ role: 'user', content: 'hi' }], stream: true });
      const { response, closed } = await rawExchange(
        url,
        `${post(`Content-Length: ${Buffer.byteLength(payload)}\r\n`)}${payload}`,
        0,
        300,
      );
      expect(response.startsWith('HTTP/1.1 200 '), adapter).toBe(true);
      expect(closed, adapter).toBe(false);
      expect(response).toContain('data: [DONE]');
    }
  });
});

/**
 * node:http's timeouts on client connections, set through listenGateway and checked over raw sockets: a client
 * slow to send its headers or its body gets a 408 and the connection closed, and an idle kept-alive connection is
 * closed after keepAliveMs.
 */
import { connect } from 'node:net';
import { DEFAULT_SERVER_TIMEOUTS, listenGateway } from '@ai4ts/gateway';
import { afterEach, describe, expect, it } from 'vitest';

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const server of open.splice(0).reverse()) await server.close();
});

/** Far above the timeouts set, far below Node's defaults. */
const WITHIN_MS = 5_000;

/** Writes `text` on a raw connection and resolves with what came back once the server closed it. */
function exchange(url: string, text: string): Promise<{ response: string }> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1', () => socket.write(text));
    let response = '';
    socket.on('data', (data: Buffer) => {
      response += data.toString('latin1');
    });
    socket.on('close', () => resolve({ response }));
    socket.on('error', reject);
    setTimeout(() => {
      socket.destroy();
      reject(new Error(`The server kept the connection open; it sent: ${response}`));
    }, WITHIN_MS);
  });
}

async function proxyWith(serverTimeouts: { headersMs?: number; requestMs?: number; keepAliveMs?: number }) {
  // No daemon is needed: these requests never get that far.
  const proxy = await listenGateway({ upstream: 'http://127.0.0.1:9/chat', dialect: 'typed', serverTimeouts });
  open.push(proxy);
  return proxy;
}

describe('server timeouts', () => {
  it('has documented defaults', async () => {
    const proxy = await listenGateway({ upstream: 'http://127.0.0.1:9/chat', dialect: 'typed' });
    open.push(proxy);
    expect(DEFAULT_SERVER_TIMEOUTS).toEqual({ headersMs: 30_000, requestMs: 60_000, keepAliveMs: 5_000 });
    expect(proxy.server.headersTimeout).toBe(30_000);
    expect(proxy.server.requestTimeout).toBe(60_000);
    expect(proxy.server.keepAliveTimeout).toBe(5_000);
  });

  it('answers 408 and closes when the headers are too slow', async () => {
    const proxy = await proxyWith({ headersMs: 100, requestMs: 200 });
    const { response } = await exchange(proxy.url, 'POST /v1/chat/completions HTTP/1.1\r\nHost: proxy\r\n');
    expect(response).toMatch(/^HTTP\/1\.1 408 /);
  });

  it('answers 408 and closes when the body is too slow', async () => {
    const proxy = await proxyWith({ headersMs: 100, requestMs: 200 });
    const head = 'POST /v1/chat/completions HTTP/1.1\r\nHost: proxy\r\nContent-Length: 100\r\n\r\n';
    const { response } = await exchange(proxy.url, `${head}{"model":`);
    expect(response).toMatch(/^HTTP\/1\.1 408 /);
  });

  it('closes an idle kept-alive connection after keepAliveMs', async () => {
    const proxy = await proxyWith({ keepAliveMs: 100 });
    const { response } = await exchange(proxy.url, 'GET /v1/models HTTP/1.1\r\nHost: proxy\r\n\r\n');
    expect(response).toMatch(/^HTTP\/1\.1 200 /);
    expect(response).toContain('"object":"list"');
  });

  it('refuses a negative timeout', async () => {
    await expect(proxyWith({ keepAliveMs: -1 })).rejects.toThrow(RangeError);
  });
});

/** The CLI's upstream fetch over node:http: what the proxy reads of a Response must be what fetch gives. */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { httpFetch } from '../src/upstreams/http-fetch.js';

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** A server whose handler sees the request's method, headers and body. */
async function serve(
  handler: (request: { method: string; headers: Record<string, unknown>; body: string }, res: ServerResponse) => void,
): Promise<string> {
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      body += chunk;
    });
    req.on('end', () => handler({ method: req.method ?? '', headers: req.headers, body }, res));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/path?q=1`;
}

describe('httpFetch', () => {
  it('sends the method, headers and body, and reads the status, headers and body as fetch does', async () => {
    const url = await serve((request, res) => {
      res.setHeader('set-cookie', ['a=1', 'b=2']);
      res.writeHead(201, 'Made', { 'content-type': 'text/event-stream', 'x-echo': `${request.method} ${request.headers.authorization}` });
      res.write('data: one\n\n');
      res.end(`data: ${request.body}\n\n`);
    });
    const response = await httpFetch(new URL(url), {
      method: 'POST',
      headers: { authorization: 'Bearer t', 'content-type': 'application/json' },
      body: '{"message":"hi"}',
    });
    expect(response.status).toBe(201);
    expect(response.ok).toBe(true);
    expect(response.statusText).toBe('Made');
    expect(response.headers.get('x-echo')).toBe('POST Bearer t');
    expect(response.headers.getSetCookie()).toEqual(['a=1', 'b=2']);
    expect(await response.text()).toBe('data: one\n\ndata: {"message":"hi"}\n\n');
  });

  it('gives an error status with its body, and a 204 with none', async () => {
    const url = await serve((request, res) => {
      if (request.method === 'DELETE') res.writeHead(204).end();
      else res.writeHead(429, { 'retry-after': '3' }).end('{"error":{"message":"slow down"}}');
    });
    const limited = await httpFetch(url, { method: 'POST', body: new TextEncoder().encode('{}') });
    expect([limited.status, limited.ok, limited.headers.get('retry-after')]).toEqual([429, false, '3']);
    expect(await limited.json()).toEqual({ error: { message: 'slow down' } });
    const empty = await httpFetch(url, { method: 'DELETE' });
    expect([empty.status, empty.body]).toEqual([204, null]);
  });

  it('rejects as fetch does: a TypeError when nothing listens, the reason when the signal aborts', async () => {
    const url = await serve(() => undefined);
    const port = new URL(url).port;
    servers.splice(0).map((server) => server.close());
    await expect(httpFetch(`http://127.0.0.1:${port}/`)).rejects.toThrow(TypeError);
    const reason = new Error('gave up');
    await expect(httpFetch(url, { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
  });

  it('an abort while the body streams fails its read and closes the connection', async () => {
    let closed!: () => void;
    const serverClosed = new Promise<void>((resolve) => {
      closed = resolve;
    });
    const url = await serve((_request, res) => {
      res.on('close', closed);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: first\n\n'); // and never ends
    });
    const controller = new AbortController();
    const response = await httpFetch(url, { signal: controller.signal });
    const reader = response.body?.getReader();
    const first = await reader?.read();
    expect(new TextDecoder().decode(first?.value)).toBe('data: first\n\n');
    controller.abort(new Error('client left'));
    await expect(reader?.read()).rejects.toThrow();
    await serverClosed;
  });
});

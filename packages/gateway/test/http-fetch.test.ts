/** The CLI's upstream fetch over node:http: what the proxy reads of a Response must be what fetch gives. */
import { closeAll, serve, SSE_HEADERS } from '@ai4ts/test-kit';
import { afterEach, describe, expect, it } from 'vitest';
import { httpFetch } from '../src/upstreams/http-fetch.js';

afterEach(closeAll);

/** The URL the tests call: a path and a query, which httpFetch must send as they are. */
const target = (server: { url: string }) => `${server.url}path?q=1`;

describe('httpFetch', () => {
  it('sends the method, headers and body, and reads the status, headers and body as fetch does', async () => {
    const server = await serve((req, res, n) => {
      res.setHeader('set-cookie', ['a=1', 'b=2']);
      res.writeHead(201, 'Made', { 'content-type': 'text/event-stream', 'x-echo': `${req.method} ${req.headers.authorization}` });
      res.write('data: one\n\n');
      res.end(`data: ${server.bodies[n - 1]}\n\n`);
    });
    const response = await httpFetch(new URL(target(server)), {
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
    const url = target(await serve((req, res) => {
      if (req.method === 'DELETE') res.writeHead(204).end();
      else res.writeHead(429, { 'retry-after': '3' }).end('{"error":{"message":"slow down"}}');
    }));
    const limited = await httpFetch(url, { method: 'POST', body: new TextEncoder().encode('{}') });
    expect([limited.status, limited.ok, limited.headers.get('retry-after')]).toEqual([429, false, '3']);
    expect(await limited.json()).toEqual({ error: { message: 'slow down' } });
    const empty = await httpFetch(url, { method: 'DELETE' });
    expect([empty.status, empty.body]).toEqual([204, null]);
  });

  it('rejects as fetch does: a TypeError when nothing listens, the reason when the signal aborts', async () => {
    const server = await serve(() => undefined);
    const url = target(server);
    const port = new URL(url).port;
    await server.close();
    await expect(httpFetch(`http://127.0.0.1:${port}/`)).rejects.toThrow(TypeError);
    const reason = new Error('gave up');
    await expect(httpFetch(url, { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
  });

  it('an abort while the body streams fails its read and closes the connection', async () => {
    const server = await serve((_req, res) => {
      res.writeHead(200, SSE_HEADERS);
      res.write('data: first\n\n'); // and never ends
    });
    const controller = new AbortController();
    const response = await httpFetch(target(server), { signal: controller.signal });
    const reader = response.body?.getReader();
    const first = await reader?.read();
    expect(new TextDecoder().decode(first?.value)).toBe('data: first\n\n');
    controller.abort(new Error('client left'));
    await expect(reader?.read()).rejects.toThrow();
    await server.closed(1);
  });
});

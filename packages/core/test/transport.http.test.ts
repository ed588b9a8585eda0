/** Transport behaviour over real sockets: retries, Retry-After, timeouts, aborts, disconnects. */
import {
  AbortError,
  type Ai4tsError,
  AuthenticationError,
  BadRequestError,
  ConnectionError,
  ProtocolError,
  RateLimitError,
  ServerError,
  TimeoutError,
  Transport,
  type TransportOptions,
} from '@ai4ts/core';
import type { SseEvent } from '@ai4ts/sse';
import { afterEach, describe, expect, it } from 'vitest';
import { serve, sseFrame, startSse, type TestServer } from '@ai4ts/test-kit';
import { expectNoSecret } from './secret.js';

const KEY = 'sk-live-abcdef0123456789';
/** So long that a test relying on it would hang: proves a wait came from the server's hint, not from backoff. */
const NEVER = { initialMs: 600_000, maxMs: 600_000 };

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const transport = (options: TransportOptions = {}) =>
  new Transport({ baseURL: server?.baseURL, apiKey: KEY, backoff: { initialMs: 1, maxMs: 5 }, ...options });

/** Iterates to the end; returns the events and the error that ended it, if any. */
async function drain(stream: AsyncIterable<SseEvent>, onEvent?: (event: SseEvent) => void) {
  const events: SseEvent[] = [];
  try {
    for await (const event of stream) {
      events.push(event);
      onEvent?.(event);
    }
    return { events, error: undefined };
  } catch (error) {
    return { events, error: error as Ai4tsError };
  }
}

describe('retries', () => {
  it('retries 503 then 429 and succeeds, honouring retry-after-ms and Retry-After', async () => {
    server = await serve((_req, res, n) => {
      if (n === 1) res.writeHead(503, { 'retry-after-ms': '20' }).end('{"error":{"message":"overloaded"}}');
      else if (n === 2) res.writeHead(429, { 'retry-after': '0' }).end('{"error":"slow down"}');
      else res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
    const body = await transport({ backoff: NEVER }).json('/chat/completions', { body: {} });
    expect(body).toEqual({ ok: true });
    expect(server.requests).toBe(3);
  });

  it('retries 408, 409 and 500 with backoff', async () => {
    const statuses = [408, 409, 500];
    server = await serve((_req, res, n) => {
      const status = statuses[n - 1];
      if (status) res.writeHead(status).end();
      else res.writeHead(200).end('{"ok":1}');
    });
    expect(await transport({ maxRetries: 3 }).json('/x', { body: {} })).toEqual({ ok: 1 });
    expect(server.requests).toBe(4);
  });

  it('gives up after maxRetries and throws the last typed error', async () => {
    server = await serve((_req, res) => res.writeHead(503).end('{"error":{"message":"down","code":"busy"}}'));
    const error = await transport().json('/x', { body: {} }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServerError);
    expect(error).toMatchObject({ status: 503, code: 'busy' });
    expect(server.requests).toBe(3);
    expectNoSecret(error, KEY);
  });

  it('does not retry when the server asks for a wait above the cap: the error comes at once', async () => {
    server = await serve((_req, res) => res.writeHead(429, { 'retry-after': '3600' }).end());
    const error = await transport().json('/x', { body: {} }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitError);
    expect((error as RateLimitError).retryAfterMs).toBe(3_600_000);
    expect(server.requests).toBe(1);
  });

  it.each([
    [400, BadRequestError],
    [401, AuthenticationError],
    [404, BadRequestError],
  ])('never retries %i', async (status, type) => {
    server = await serve((_req, res) => res.writeHead(status).end('{"error":{"message":"no"}}'));
    const error = await transport().json('/x', { body: {} }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(type);
    expect(server.requests).toBe(1);
    expectNoSecret(error, KEY);
  });

  it('retries a connection that drops before the response', async () => {
    server = await serve((req, res, n) => {
      if (n === 1) req.socket.destroy();
      else res.writeHead(200).end('{"ok":true}');
    });
    expect(await transport().json('/x', { body: {} })).toEqual({ ok: true });
    expect(server.requests).toBe(2);
  });

  it('throws ConnectionError with its cause when nothing listens, after the retries', async () => {
    server = await serve(() => undefined);
    const url = server.baseURL;
    await server.close();
    server = undefined;
    const error = await transport({ baseURL: url }).json('/x').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectionError);
    expect((error as ConnectionError).cause).toBeInstanceOf(Error);
    expect((error as Error).message).toContain('/v1/x');
    expectNoSecret(error, KEY);
  });

  it('an abort during the backoff sleep ends it at once with AbortError', async () => {
    const controller = new AbortController();
    server = await serve((_req, res) => {
      res.writeHead(503).end();
      setTimeout(() => controller.abort(), 10);
    });
    const error = await transport({ backoff: NEVER })
      .json('/x', { body: {}, options: { signal: controller.signal } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AbortError);
    expect(server.requests).toBe(1);
  });

  it('never retries once the stream body has started: one event, a dropped socket, ConnectionError', async () => {
    server = await serve((req, res) => {
      startSse(res);
      res.write(sseFrame({ n: 1 }), () => setTimeout(() => req.socket.destroy(), 10));
    });
    const stream = await transport({ maxRetries: 5 }).stream('/chat/completions', { body: {} });
    const { events, error } = await drain(stream);
    expect(events.map((e) => e.data)).toEqual(['{"n":1}']);
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error?.cause).toBeDefined();
    expect(server.requests).toBe(1);
    expectNoSecret(error, KEY);
  });
});

describe('stream timeouts', () => {
  it('firstTokenTimeout: headers then silence -> TimeoutError(first_token), socket closed', async () => {
    server = await serve((_req, res) => startSse(res));
    const stream = await transport({ firstTokenTimeout: 40 }).stream('/chat/completions', { body: {} });
    const { events, error } = await drain(stream);
    expect(events).toEqual([]);
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toMatchObject({ phase: 'first_token', timeoutMs: 40 });
    await server.closed(1);
    expect(server.requests).toBe(1);
    expectNoSecret(error, KEY);
  });

  it('comments do not count as the first event', async () => {
    server = await serve((_req, res) => {
      startSse(res);
      const ping = setInterval(() => res.write(': ping\n\n'), 10);
      res.once('close', () => clearInterval(ping));
    });
    const stream = await transport().stream('/x', { body: {}, options: { firstTokenTimeout: 60 } });
    const { error } = await drain(stream);
    expect(error).toMatchObject({ name: 'TimeoutError', phase: 'first_token' });
    await server.closed(1);
  });

  it('idleTimeout: one event then silence -> TimeoutError(idle) after the event, socket closed', async () => {
    server = await serve((_req, res) => {
      startSse(res);
      res.write(sseFrame({ n: 1 }));
    });
    const stream = await transport({ idleTimeout: 40 }).stream('/chat/completions', { body: {} });
    const { events, error } = await drain(stream);
    expect(events.map((e) => e.data)).toEqual(['{"n":1}']);
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toMatchObject({ phase: 'idle', timeoutMs: 40 });
    await server.closed(1);
  });

  it('a stream that keeps its pace completes under both limits', async () => {
    server = await serve((_req, res) => {
      startSse(res);
      let n = 0;
      const tick = setInterval(() => {
        n++;
        if (n <= 3) res.write(sseFrame({ n }));
        else {
          clearInterval(tick);
          res.end('data: [DONE]\n\n');
        }
      }, 5);
    });
    const stream = await transport({ firstTokenTimeout: 2000, idleTimeout: 2000 }).stream('/x', { body: {} });
    const { events, error } = await drain(stream);
    expect(error).toBeUndefined();
    expect(events.map((e) => e.data)).toEqual(['{"n":1}', '{"n":2}', '{"n":3}', '[DONE]']);
  });

  it('timeout: no response headers in time -> TimeoutError(headers), not retried, socket closed', async () => {
    server = await serve(() => undefined);
    // Long enough for the request to reach the server on a loaded 2-core CI box (40 ms once did not).
    const error = await transport({ timeout: 500 }).stream('/x', { body: {} }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toMatchObject({ phase: 'headers', timeoutMs: 500 });
    await server.closed(1);
    expect(server.requests).toBe(1);
    expectNoSecret(error, KEY);
  });
});

describe('abort and early exit release the connection', () => {
  it('abort mid-stream -> AbortError, the server sees the socket close', async () => {
    server = await serve((_req, res) => {
      startSse(res);
      res.write(sseFrame({ n: 1 }));
    });
    const controller = new AbortController();
    const stream = await transport().stream('/x', { body: {}, options: { signal: controller.signal } });
    const { events, error } = await drain(stream, () => setTimeout(() => controller.abort(), 10));
    expect(events).toHaveLength(1);
    expect(error).toBeInstanceOf(AbortError);
    await server.closed(1);
    expectNoSecret(error, KEY);
  });

  it('abort while the consumer is busy with an event -> AbortError on the next read', async () => {
    server = await serve((_req, res) => {
      startSse(res);
      res.write(sseFrame({ n: 1 }));
    });
    const controller = new AbortController();
    const stream = await transport().stream('/x', { body: {}, options: { signal: controller.signal } });
    const { error } = await drain(stream, () => controller.abort());
    expect(error).toBeInstanceOf(AbortError);
    await server.closed(1);
  });

  it('abort before the headers -> AbortError, not retried', async () => {
    const controller = new AbortController();
    server = await serve(() => setTimeout(() => controller.abort(), 10));
    const error = await transport()
      .stream('/x', { body: {}, options: { signal: controller.signal } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AbortError);
    await server.closed(1);
    expect(server.requests).toBe(1);
  });

  it('an already aborted signal sends nothing', async () => {
    server = await serve((_req, res) => res.end());
    const error = await transport()
      .json('/x', { options: { signal: AbortSignal.abort() } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AbortError);
    expect(server.requests).toBe(0);
  });

  it('breaking out of the loop cancels the body', async () => {
    server = await serve((_req, res) => {
      startSse(res);
      res.write(sseFrame({ n: 1 }) + sseFrame({ n: 2 }));
    });
    const stream = await transport().stream('/x', { body: {} });
    for await (const event of stream) {
      expect(event.data).toBe('{"n":1}');
      break;
    }
    await server.closed(1);
  });

  it('a stream can be iterated only once', async () => {
    server = await serve((_req, res) => {
      startSse(res);
      res.end(sseFrame({ n: 1 }));
    });
    const stream = await transport().stream('/x', { body: {} });
    expect((await drain(stream)).events).toHaveLength(1);
    expect(() => stream[Symbol.asyncIterator]()).toThrow(/already iterated/);
  });

  it('a body cut inside an event ends the iteration and reports incomplete', async () => {
    server = await serve((_req, res) => {
      startSse(res);
      res.end(`${sseFrame({ n: 1 })}data: {"n":`);
    });
    const stream = await transport().stream('/x', { body: {} });
    const { events, error } = await drain(stream);
    expect(error).toBeUndefined();
    expect(events.map((e) => e.data)).toEqual(['{"n":1}']);
    expect(stream.incomplete).toBe(true);
  });
});

describe('bad data', () => {
  it('an event beyond the size limit -> ProtocolError, body released', async () => {
    server = await serve((_req, res) => {
      startSse(res);
      const block = 'x'.repeat(1 << 20);
      res.write('data: ');
      for (let i = 0; i < 17; i++) res.write(block);
    });
    const stream = await transport().stream('/x', { body: {} });
    const { error } = await drain(stream);
    expect(error).toBeInstanceOf(ProtocolError);
    await server.closed(1);
  });
});

describe('custom fetch', () => {
  it('is called as fetch(url, init) with the method, headers and JSON body as sent, and the key only in the auth header', async () => {
    let received: string | undefined;
    server = await serve((req, res) => {
      received = `${req.method} ${req.headers['content-length']}`;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
    const log: string[] = [];
    const calls: Array<{ input: unknown; init: RequestInit }> = [];
    const logging = (input: string, init: RequestInit) => {
      calls.push({ input, init });
      log.push(`${init.method} ${input} ${JSON.stringify(init)} ${String(init.body)}`);
      return fetch(input, init);
    };
    const body = await transport({ fetch: logging }).json('/chat/completions', {
      body: { model: 'm', messages: [{ role: 'user', content: 'Zürich' }] },
      options: { extraBody: { top_k: 3 } },
    });
    expect(body).toEqual({ ok: true });
    expect(calls).toHaveLength(1);
    const [{ input, init }] = calls as [{ input: unknown; init: RequestInit }];
    expect(input).toBe(`${server.baseURL}/chat/completions`);
    expect(init.method).toBe('POST');
    const expected = '{"model":"m","messages":[{"role":"user","content":"Zürich"}],"top_k":3}';
    expect(init.body).toBe(expected);
    expect(received).toBe(`POST ${Buffer.byteLength(expected)}`);
    expect(init.signal).toBeInstanceOf(AbortSignal);
    const headers = new Headers(init.headers);
    expect(headers.get('content-type')).toContain('application/json');
    expect(headers.get('authorization')).toBe(`Bearer ${KEY}`);
    expect(log[0]).toContain('POST');
    expect(log.join('\n')).not.toContain(KEY);
  });

  it('gets a GET without a body', async () => {
    server = await serve((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
    const inits: RequestInit[] = [];
    await transport({
      fetch: (input, init) => {
        inits.push(init);
        return fetch(input, init);
      },
    }).json('/models');
    expect(inits.map((init) => [init.method, init.body])).toEqual([['GET', undefined]]);
  });
});

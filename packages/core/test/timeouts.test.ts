/**
 * The timeouts' defaults and precedence: the call, the client, the environment, then the defaults; `0` disables.
 * `timeouts: { headers, firstEvent, idle }` wins over the deprecated `timeout` / `firstTokenTimeout` / `idleTimeout`.
 */
import {
  Ai4tsError,
  DEFAULT_FIRST_TOKEN_TIMEOUT,
  DEFAULT_IDLE_TIMEOUT,
  DEFAULT_TIMEOUTS,
  resolveStreamTimeouts,
  resolveTimeouts,
  TimeoutError,
  Transport,
  type TransportOptions,
} from '@ai4ts/core';
import type { SseEvent } from '@ai4ts/sse';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { serve, sseFrame, startSse, type TestServer } from '@ai4ts/test-kit';

let server: TestServer | undefined;

afterEach(async () => {
  vi.unstubAllEnvs();
  await server?.close();
  server = undefined;
});

describe('resolveStreamTimeouts', () => {
  it('defaults to 60 s each, long enough for a reasoning model thinking before its first event', () => {
    vi.stubEnv('AI4TS_FIRST_TOKEN_TIMEOUT_MS', '');
    vi.stubEnv('AI4TS_IDLE_TIMEOUT_MS', '');
    expect(resolveStreamTimeouts({}, {})).toEqual({ firstTokenTimeout: 60_000, idleTimeout: 60_000 });
    expect([DEFAULT_FIRST_TOKEN_TIMEOUT, DEFAULT_IDLE_TIMEOUT]).toEqual([60_000, 60_000]);
  });

  it('takes the call over the client over the environment', () => {
    vi.stubEnv('AI4TS_FIRST_TOKEN_TIMEOUT_MS', '1000');
    vi.stubEnv('AI4TS_IDLE_TIMEOUT_MS', '2000');
    expect(resolveStreamTimeouts({}, {})).toEqual({ firstTokenTimeout: 1000, idleTimeout: 2000 });
    expect(resolveStreamTimeouts({}, { firstTokenTimeout: 3000 })).toEqual({ firstTokenTimeout: 3000, idleTimeout: 2000 });
    expect(resolveStreamTimeouts({ firstTokenTimeout: 4000, idleTimeout: 5000 }, { firstTokenTimeout: 3000 })).toEqual({
      firstTokenTimeout: 4000,
      idleTimeout: 5000,
    });
  });

  it('0 disables a timeout at any level', () => {
    vi.stubEnv('AI4TS_IDLE_TIMEOUT_MS', '0');
    vi.stubEnv('AI4TS_FIRST_TOKEN_TIMEOUT_MS', '1000');
    expect(resolveStreamTimeouts({ firstTokenTimeout: 0 }, {})).toEqual({
      firstTokenTimeout: undefined,
      idleTimeout: undefined,
    });
    expect(resolveStreamTimeouts({}, { firstTokenTimeout: 0 }).firstTokenTimeout).toBeUndefined();
  });

  it('names an environment variable that is not a number of ms', () => {
    vi.stubEnv('AI4TS_IDLE_TIMEOUT_MS', '30s');
    expect(() => resolveStreamTimeouts({}, {})).toThrow(Ai4tsError);
    expect(() => resolveStreamTimeouts({}, {})).toThrow(/AI4TS_IDLE_TIMEOUT_MS.*"30s"/);
  });

  it('reads the environment when the request is sent: a real stall ends at its value', async () => {
    server = await serve((_req, res) => startSse(res));
    const transport = new Transport({ baseURL: server.baseURL, apiKey: 'sk-local', maxRetries: 0 });
    vi.stubEnv('AI4TS_FIRST_TOKEN_TIMEOUT_MS', '50');
    const stream = await transport.stream('/chat/completions', { body: {} });
    const error: unknown = await (async () => {
      for await (const _ of stream);
    })().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toMatchObject({ phase: 'first_token', timeoutMs: 50 });
  });
});

describe('resolveTimeouts', () => {
  it('defaults to DEFAULT_TIMEOUTS: 10 min for the headers, 60 s for the first event and between events', () => {
    vi.stubEnv('AI4TS_FIRST_TOKEN_TIMEOUT_MS', '');
    vi.stubEnv('AI4TS_IDLE_TIMEOUT_MS', '');
    expect(DEFAULT_TIMEOUTS).toEqual({ headers: 600_000, firstEvent: 60_000, idle: 60_000 });
    expect(resolveTimeouts({}, {})).toEqual(DEFAULT_TIMEOUTS);
  });

  it('takes the timeouts field over its deprecated option at the same level', () => {
    const deprecated = { timeout: 10, firstTokenTimeout: 20, idleTimeout: 30 };
    const timeouts = { headers: 1, firstEvent: 2, idle: 3 };
    expect(resolveTimeouts({ ...deprecated, timeouts }, {})).toEqual(timeouts);
    expect(resolveTimeouts({}, { ...deprecated, timeouts })).toEqual(timeouts);
    expect(resolveTimeouts({ ...deprecated, timeouts: { idle: 3 } }, {})).toEqual({ headers: 10, firstEvent: 20, idle: 3 });
  });

  it('takes the call over the client over the environment, whichever name each uses', () => {
    vi.stubEnv('AI4TS_FIRST_TOKEN_TIMEOUT_MS', '1000');
    vi.stubEnv('AI4TS_IDLE_TIMEOUT_MS', '2000');
    expect(resolveTimeouts({}, { timeout: 5 })).toEqual({ headers: 5, firstEvent: 1000, idle: 2000 });
    expect(resolveTimeouts({ firstTokenTimeout: 4 }, { timeouts: { firstEvent: 5, idle: 6 } })).toEqual({
      headers: 600_000,
      firstEvent: 4,
      idle: 6,
    });
    expect(resolveTimeouts({ timeouts: { idle: 7 } }, { idleTimeout: 8 }).idle).toBe(7);
  });

  it('0 disables any wait, the headers one included', () => {
    vi.stubEnv('AI4TS_FIRST_TOKEN_TIMEOUT_MS', '1000');
    expect(resolveTimeouts({ timeouts: { headers: 0, firstEvent: 0, idle: 0 } }, {})).toEqual({
      headers: undefined,
      firstEvent: undefined,
      idle: undefined,
    });
    expect(resolveTimeouts({ timeouts: { firstEvent: 0 } }, { timeouts: { firstEvent: 5 } }).firstEvent).toBeUndefined();
  });

  it('resolveStreamTimeouts (deprecated) reads the timeouts field too', () => {
    expect(resolveStreamTimeouts({ timeouts: { firstEvent: 9 } }, { timeouts: { idle: 10 } })).toEqual({
      firstTokenTimeout: 9,
      idleTimeout: 10,
    });
  });
});

describe('the timeouts option over real sockets, each phase, winning over the deprecated names', () => {
  /** Iterates to the end; returns the events and the error that ended it. */
  async function drain(stream: AsyncIterable<SseEvent>) {
    const events: SseEvent[] = [];
    try {
      for await (const event of stream) events.push(event);
      return { events, error: undefined };
    } catch (error) {
      return { events, error };
    }
  }
  const transport = (options: TransportOptions = {}) =>
    new Transport({ baseURL: server?.url, apiKey: 'sk-local', maxRetries: 0, ...options });

  it('headers: no response headers in time -> TimeoutError(headers)', async () => {
    server = await serve(() => undefined);
    // Long enough for the request to reach the server on a loaded 2-core box; the deprecated 10 min would hang.
    const error = await transport({ timeouts: { headers: 500 }, timeout: 600_000 })
      .stream('/x', { body: {} })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toMatchObject({ phase: 'headers', timeoutMs: 500 });
    await server.closed(1);
  });

  it('headers: 0 on the call disables the client\'s headers timeout', async () => {
    server = await serve((_req, res) => {
      setTimeout(() => {
        startSse(res);
        res.end(sseFrame({ n: 1 }));
      }, 150);
    });
    const stream = await transport({ timeouts: { headers: 20 } }).stream('/x', {
      body: {},
      options: { timeouts: { headers: 0 } },
    });
    const { events, error } = await drain(stream);
    expect(error).toBeUndefined();
    expect(events.map((e) => e.data)).toEqual(['{"n":1}']);
  });

  it('firstEvent: headers then silence -> TimeoutError(first_token)', async () => {
    server = await serve((_req, res) => startSse(res));
    const stream = await transport({ timeouts: { firstEvent: 40 }, firstTokenTimeout: 600_000 }).stream('/x', {
      body: {},
    });
    const { events, error } = await drain(stream);
    expect(events).toEqual([]);
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toMatchObject({ phase: 'first_token', timeoutMs: 40 });
    await server.closed(1);
  });

  it('idle: one event then silence -> TimeoutError(idle), set on the call', async () => {
    server = await serve((_req, res) => {
      startSse(res);
      res.write(sseFrame({ n: 1 }));
    });
    const stream = await transport({ timeouts: { idle: 600_000 } }).stream('/x', {
      body: {},
      options: { timeouts: { idle: 40 }, idleTimeout: 600_000 },
    });
    const { events, error } = await drain(stream);
    expect(events.map((e) => e.data)).toEqual(['{"n":1}']);
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toMatchObject({ phase: 'idle', timeoutMs: 40 });
    await server.closed(1);
  });
});

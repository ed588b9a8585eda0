/** The stream timeouts' defaults and precedence: the call, the client, the environment, then 60 s; `0` disables. */
import {
  Ai4tsError,
  DEFAULT_FIRST_TOKEN_TIMEOUT,
  DEFAULT_IDLE_TIMEOUT,
  resolveStreamTimeouts,
  TimeoutError,
  Transport,
} from '@ai4ts/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { serve, startSse, type TestServer } from '@ai4ts/test-kit';

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

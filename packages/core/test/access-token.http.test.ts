/**
 * Expiring access tokens (the Transport's `accessToken`) over real sockets: a token endpoint on 127.0.0.1 hands out
 * numbered tokens, a model server checks the bearer; fetched once and cached, renewed before expiry, one renewal on a
 * 401, one fetch for concurrent requests, and never in an error, a log line or an event.
 */
import { type AccessTokenSource, AuthenticationError, type Logger, TOKEN_REFRESH_MARGIN_MS, Transport } from '@ai4ts/core';
import { serve, sseFrame, startSse, type TestServer } from '@ai4ts/test-kit';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { expectNoSecret } from './secret.js';

/** Tokens long enough to be redacted, numbered by the fetch that made them. */
const tokenOf = (n: number) => `ya29.test-access-token-${n}`;

let tokens: TestServer;
let model: TestServer | undefined;
/** The `refresh` flag of each call of the source, in order. */
let asked: boolean[];
/** The lifetime the token endpoint gives its tokens, in seconds. */
let expiresIn: number | undefined;
/** Resolves the token endpoint's held answers (for concurrency tests); undefined answers at once. */
let hold: Promise<void> | undefined;

beforeEach(async () => {
  asked = [];
  expiresIn = 3600;
  hold = undefined;
  tokens = await serve(async (_req, res, n) => {
    await hold;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ access_token: tokenOf(n), ...(expiresIn === undefined ? {} : { expires_in: expiresIn }) }));
  });
});

afterEach(async () => {
  vi.useRealTimers();
  await Promise.all([tokens.close(), model?.close()]);
  model = undefined;
});

/** A source as a user writes one: asks the token endpoint over HTTP. */
const source: AccessTokenSource = async ({ refresh }) => {
  asked.push(refresh);
  const answer = (await (await fetch(tokens.url)).json()) as { access_token: string; expires_in?: number };
  return {
    token: answer.access_token,
    ...(answer.expires_in === undefined ? {} : { expiresAt: Date.now() + answer.expires_in * 1000 }),
  };
};

/** The bearer of each request the model server got, in order. */
let bearers: (string | undefined)[];

/** A model server answering `{ ok: true }`, or what `answer` decides from the bearer. */
async function startModel(answer?: (bearer: string | undefined, n: number) => { status: number; body: string } | undefined) {
  bearers = [];
  model = await serve((req, res, n) => {
    const bearer = req.headers.authorization?.replace(/^Bearer /, '');
    bearers.push(bearer);
    const custom = answer?.(bearer, n);
    res.writeHead(custom?.status ?? 200, { 'content-type': 'application/json' });
    res.end(custom?.body ?? '{"ok":true}');
  });
  return model;
}

const transport = (options: ConstructorParameters<typeof Transport>[0] = {}) =>
  new Transport({ baseURL: model?.baseURL, accessToken: source, backoff: { initialMs: 1, maxMs: 5 }, ...options });

describe('access tokens', () => {
  it('fetches the token once and sends it as a bearer on every request while it is fresh', async () => {
    await startModel();
    const client = transport({ provider: 'anthropic' }); // x-api-key style: a token is a bearer all the same
    for (let i = 0; i < 3; i++) expect(await client.json('/x', { body: {} })).toEqual({ ok: true });
    expect(tokens.requests).toBe(1);
    expect(bearers).toEqual([tokenOf(1), tokenOf(1), tokenOf(1)]);
    expect(asked).toEqual([false]);
  });

  it('fetches a new token once the cached one is within the refresh margin of its expiry', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    await startModel();
    const client = transport();
    await client.json('/x', { body: {} });
    vi.setSystemTime(Date.now() + 3600_000 - TOKEN_REFRESH_MARGIN_MS - 1000); // still valid, not yet in the margin
    await client.json('/x', { body: {} });
    vi.setSystemTime(Date.now() + 2000); // now in the margin: still valid for the server, but renewed first
    await client.json('/x', { body: {} });
    expect(bearers).toEqual([tokenOf(1), tokenOf(1), tokenOf(2)]);
    expect(asked).toEqual([false, false]);
  });

  it('keeps a token without an expiry until the server refuses it', async () => {
    expiresIn = undefined;
    await startModel((bearer, n) => (bearer === tokenOf(1) && n > 2 ? { status: 401, body: '{}' } : undefined));
    const client = transport();
    for (let i = 0; i < 3; i++) await client.json('/x', { body: {} });
    expect(bearers).toEqual([tokenOf(1), tokenOf(1), tokenOf(1), tokenOf(2)]);
    expect(asked).toEqual([false, true]);
  });

  it('on a 401 fetches a new token once, with refresh: true, and sends the request again', async () => {
    await startModel((bearer) => (bearer === tokenOf(1) ? { status: 401, body: '{"error":{"message":"expired"}}' } : undefined));
    expect(await transport({ maxRetries: 0 }).json('/x', { body: {} })).toEqual({ ok: true });
    expect(bearers).toEqual([tokenOf(1), tokenOf(2)]);
    expect(asked).toEqual([false, true]);
  });

  it('a second 401 is the AuthenticationError, after exactly one renewal, with no token in it', async () => {
    await startModel((bearer) => ({ status: 401, body: JSON.stringify({ error: { message: `bad token ${bearer}` } }) }));
    const error = await transport()
      .json('/x', { body: {} })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthenticationError);
    expect((error as AuthenticationError).status).toBe(401);
    expect(tokens.requests).toBe(2);
    expect(model?.requests).toBe(2);
    expectNoSecret(error, tokenOf(1));
    expectNoSecret(error, tokenOf(2));
  });

  it('concurrent requests share one token fetch, and their 401s share one renewal', async () => {
    let release = () => {};
    hold = new Promise((resolve) => {
      release = resolve;
    });
    await startModel((bearer) => (bearer === tokenOf(1) ? { status: 401, body: '{}' } : undefined));
    const client = transport();
    const calls = Array.from({ length: 5 }, () => client.json('/x', { body: {} }));
    await vi.waitFor(() => expect(tokens.requests).toBe(1));
    release();
    expect(await Promise.all(calls)).toEqual(Array(5).fill({ ok: true }));
    expect(tokens.requests).toBe(2);
    expect(bearers.filter((bearer) => bearer === tokenOf(1))).toHaveLength(5);
    expect(bearers.filter((bearer) => bearer === tokenOf(2))).toHaveLength(5);
    expect(asked).toEqual([false, true]);
  });

  it('a failing source is an AuthenticationError with its cause, and the next request asks again', async () => {
    await startModel();
    let fail = true;
    const client = transport({
      accessToken: () => {
        if (fail) throw new Error('metadata server unreachable');
        return tokenOf(9);
      },
    });
    const error = await client.json('/x', { body: {} }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthenticationError);
    expect((error as Error).message).toBe('Could not get an access token: metadata server unreachable');
    expect(((error as Error).cause as Error).message).toBe('metadata server unreachable');
    expect(model?.requests).toBe(0);
    fail = false;
    expect(await client.json('/x', { body: {} })).toEqual({ ok: true });
    expect(bearers).toEqual([tokenOf(9)]);
  });

  it('a source that gives no token is an AuthenticationError before any request', async () => {
    await startModel();
    for (const answer of ['', { token: '' }, { token: tokenOf(1), expiresAt: Number.NaN }]) {
      const error = await transport({ accessToken: () => answer })
        .json('/x', { body: {} })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(AuthenticationError);
    }
    expect(model?.requests).toBe(0);
  });

  it("a call's own apiKey wins over the token", async () => {
    await startModel();
    await transport().json('/x', { body: {}, options: { apiKey: 'sk-call-key-0123456789' } });
    expect(bearers).toEqual(['sk-call-key-0123456789']);
    expect(tokens.requests).toBe(0);
  });

  it('never writes the token in a log line, an error, or a streamed event', async () => {
    const lines: string[] = [];
    const write = (message: string, fields?: Record<string, unknown>) => lines.push(`${message} ${JSON.stringify(fields)}`);
    const logger: Logger = { debug: write, info: write, warn: write, error: write };
    model = await serve((req, res, n) => {
      const bearer = req.headers.authorization ?? '';
      if (n === 1) {
        // The server refuses the first token, quoting it in a header and the body.
        res.writeHead(401, { 'content-type': 'application/json', 'x-echo': bearer }).end(JSON.stringify({ error: { message: bearer } }));
      } else if (n === 2) {
        res.writeHead(400, { 'content-type': 'application/json', 'x-echo': bearer }).end(JSON.stringify({ error: { message: bearer } }));
      } else {
        startSse(res);
        res.end(sseFrame({ echo: bearer }));
      }
    });
    const client = transport({ logger, logLevel: 'debug', logBodies: true, maxRetries: 0 });
    const error = await client.json('/x', { body: { hello: 1 } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect((error as { status?: number }).status).toBe(400);
    const stream = await client.stream('/x', { body: {} });
    const events: string[] = [];
    for await (const event of stream) events.push(event.data);
    expect(events).toEqual([JSON.stringify({ echo: 'Bearer [redacted]' })]);
    expect(lines.length).toBeGreaterThan(2);
    for (const token of [tokenOf(1), tokenOf(2)]) {
      expectNoSecret(error, token);
      for (const line of lines) expect(line).not.toContain(token);
    }
  });
});

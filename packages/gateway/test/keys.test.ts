/**
 * Virtual keys on one instance (a file store, counters in memory), in front of the scripted model speaking Chat:
 * the admin API and its token, a key's models, expiry, revocation, RPM, TPM and streams refused with OpenAI's
 * rate-limit headers in the inbound protocol's shape, spend recorded for a whole stream and for one cut short, a
 * budget spent by a stream mid-way (the stream finishes, the next call is refused), and the key in no log line,
 * error, response or span attribute.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type AccessLogEntry,
  FileKeyStore,
  type GatewayOptions,
  issueKey,
  type KeySettings,
  type ListeningGateway,
  listenGateway,
} from '@ai4ts/gateway';
import { type MockModel, type MockTurn, startMockModel } from '@ai4ts/testing';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import OpenAI, { RateLimitError } from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { readChunks } from './helpers.js';

const ADMIN = 'admin-token-5d1c7e';
const STATIC = 'static-token-93ab0f';
const USAGE = { prompt_tokens: 100, completion_tokens: 50, total_tokens: 150 };

const open: Array<{ close(): Promise<void> }> = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const server of open.splice(0).reverse()) await server.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

interface Setup {
  gateway: ListeningGateway;
  store: FileKeyStore;
  log: AccessLogEntry[];
  model: MockModel;
}

async function setup(script: MockTurn | ((n: number) => MockTurn) = { content: 'Hello there', usage: USAGE }, options: Partial<GatewayOptions> = {}): Promise<Setup> {
  const dir = mkdtempSync(join(tmpdir(), 'keys-'));
  dirs.push(dir);
  const store = new FileKeyStore(join(dir, 'keys.json'));
  let n = 0;
  const model = await startMockModel({ script: () => (typeof script === 'function' ? script(n++) : script) });
  open.push(model);
  const log: AccessLogEntry[] = [];
  const gateway = await listenGateway({
    upstream: model.baseURL,
    upstreamProtocol: 'chat',
    upstreamToken: 'sk-upstream',
    auth: STATIC,
    keys: { store },
    adminToken: ADMIN,
    log: (entry) => log.push(entry),
    ...options,
  });
  open.push(gateway);
  return { gateway, store, log, model };
}

/** A key made through the admin API: its key and id. */
async function createKey(gateway: ListeningGateway, settings: Partial<KeySettings> & { expiresIn?: string }): Promise<{ key: string; id: string }> {
  const response = await admin(gateway, 'POST', '/admin/keys', { name: 'ci', ...settings });
  expect(response.status).toBe(201);
  const body = (await response.json()) as { key: string; id: string };
  return body;
}

function admin(gateway: ListeningGateway, method: string, path: string, body?: unknown, token = ADMIN): Promise<Response> {
  return fetch(`${gateway.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

function chat(gateway: ListeningGateway, key: string, body: Record<string, unknown> = {}): Promise<Response> {
  return fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], max_tokens: 100, ...body }),
  });
}

describe('the admin API', () => {
  it('answers only its own token, in the OpenAI error shape', async () => {
    const { gateway } = await setup();
    for (const token of ['', 'wrong', STATIC]) {
      const response = await admin(gateway, 'GET', '/admin/keys', undefined, token);
      expect(response.status).toBe(401);
      expect(await response.json()).toEqual({ error: expect.objectContaining({ code: 'invalid_api_key', type: 'invalid_request_error' }) });
    }
    const { key } = await createKey(gateway, {});
    expect((await admin(gateway, 'GET', '/admin/keys', undefined, key)).status).toBe(401);
  });

  it('is not there without an admin token', async () => {
    const { gateway } = await setup(undefined, { adminToken: undefined });
    const response = await admin(gateway, 'GET', '/admin/keys');
    expect(response.status).toBe(404);
  });

  it('creates, lists, gets, updates and revokes keys; the list shows no key and no hash', async () => {
    const { gateway } = await setup();
    const { key, id } = await createKey(gateway, { rpm: 60, budget: { usd: 25, period: 'month' }, models: ['gpt-*'], metadata: { team: 'ml' } });
    expect(key).toMatch(/^ai4ts-vk-[\w-]{43}$/);
    const listed = await admin(gateway, 'GET', '/admin/keys');
    const text = await listed.text();
    expect(text).not.toContain(key);
    expect(text).not.toContain('hash');
    const list = JSON.parse(text) as { data: Array<Record<string, unknown>> };
    expect(list.data).toEqual([
      expect.objectContaining({ id, name: 'ci', prefix: key.slice(0, 13), rpm: 60, models: ['gpt-*'], metadata: { team: 'ml' } }),
    ]);
    const one = (await (await admin(gateway, 'GET', `/admin/keys/${id}`)).json()) as Record<string, unknown>;
    expect(one).toMatchObject({ id, spend: { spentUsd: 0, budgetUsd: 25, period: 'month' } });

    const patched = await admin(gateway, 'PATCH', `/admin/keys/${id}`, { rpm: 5, budget: null });
    expect(await patched.json()).toMatchObject({ rpm: 5 });
    expect((await (await admin(gateway, 'GET', `/admin/keys/${id}`)).json()) as object).not.toHaveProperty('budget');
    const bad = await admin(gateway, 'PATCH', `/admin/keys/${id}`, { rpm: -1 });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({ error: expect.objectContaining({ param: 'rpm', code: 'invalid_value' }) });

    expect((await chat(gateway, key)).status).toBe(200);
    expect((await admin(gateway, 'DELETE', `/admin/keys/${id}`)).status).toBe(200);
    const refused = await chat(gateway, key);
    expect(refused.status).toBe(401);
    expect(await refused.json()).toEqual({ error: expect.objectContaining({ code: 'invalid_api_key', message: 'The virtual key ci was revoked' }) });
  });
});

describe('a virtual key at the door', () => {
  it('is refused unknown or expired (401); the static token still works; a model outside its patterns is a 403', async () => {
    const { gateway, store } = await setup();
    expect((await chat(gateway, 'ai4ts-vk-unknown')).status).toBe(401);
    expect((await chat(gateway, 'not-a-key')).status).toBe(401);
    expect((await chat(gateway, STATIC)).status).toBe(200);
    const expired = await issueKey({ name: 'old', models: [], metadata: {}, expiresAt: '2020-01-01T00:00:00.000Z' });
    await store.put(expired.record);
    const gone = await chat(gateway, expired.key);
    expect(gone.status).toBe(401);
    expect(((await gone.json()) as { error: { message: string } }).error.message).toContain('expired');

    const { key } = await createKey(gateway, { models: ['gpt-*', 'claude-*'] });
    expect((await chat(gateway, key, { model: 'claude-haiku-4-5' })).status).toBe(200);
    const other = await chat(gateway, key, { model: 'llama-3' });
    expect(other.status).toBe(403);
    expect(await other.json()).toEqual({ error: expect.objectContaining({ code: 'model_not_allowed', param: 'model' }) });
  });

  it('sent as x-api-key on /v1/messages, over its RPM: a 429 in Anthropic’s shape with the rate-limit headers', async () => {
    const { gateway } = await setup();
    const { key } = await createKey(gateway, { rpm: 2 });
    const messages = () =>
      fetch(`${gateway.url}/v1/messages`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
        body: JSON.stringify({ model: 'claude-haiku-4-5', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] }),
      });
    const first = await messages();
    expect(first.status).toBe(200);
    expect(first.headers.get('x-ratelimit-limit-requests')).toBe('2');
    expect(first.headers.get('x-ratelimit-remaining-requests')).toBe('1');
    expect((await messages()).status).toBe(200);
    const third = await messages();
    expect(third.status).toBe(429);
    expect(Number(third.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(third.headers.get('x-ratelimit-remaining-requests')).toBe('0');
    expect(third.headers.get('x-ratelimit-reset-requests')).toMatch(/^\d+s$/);
    expect(await third.json()).toEqual({
      type: 'error',
      error: expect.objectContaining({ type: 'rate_limit_error', message: expect.stringContaining('2 requests per minute') }),
    });
  });

  it('the official openai client reads the 429 as its RateLimitError, with the headers', async () => {
    const { gateway } = await setup();
    const { key } = await createKey(gateway, { rpm: 1 });
    const client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: key, maxRetries: 0 });
    const ask = () => client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
    expect((await ask()).choices[0]?.message.content).toBe('Hello there');
    const error = await ask().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RateLimitError);
    if (!(error instanceof RateLimitError)) throw error;
    expect(error.code).toBe('rate_limit_exceeded');
    expect(error.headers.get('x-ratelimit-limit-requests')).toBe('1');
    expect(error.headers.get('x-ratelimit-remaining-requests')).toBe('0');
    expect(error.message).not.toContain(key);
  });

  it('over its TPM: a 429 with the token headers; what it admitted used no more than the limit and one estimate', async () => {
    const { gateway } = await setup();
    const tpm = 1000;
    const { key } = await createKey(gateway, { tpm });
    let admitted = 0;
    let refused: Response | undefined;
    for (let i = 0; i < 20 && !refused; i++) {
      const response = await chat(gateway, key);
      if (response.status === 429) refused = response;
      else {
        expect(response.status).toBe(200);
        admitted++;
      }
    }
    if (!refused) throw new Error('never refused');
    expect(refused.headers.get('x-ratelimit-limit-tokens')).toBe(String(tpm));
    expect(Number(refused.headers.get('x-ratelimit-remaining-tokens'))).toBeLessThan(tpm);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toContain('tokens per minute');
    // Each call used 150 tokens and reserved its estimate (100 max output and its body / 4).
    expect(admitted).toBeGreaterThan(1);
    expect(admitted * USAGE.total_tokens).toBeLessThanOrEqual(tpm);
  });

  it('past its streams a second stream is a 429 until the first ends', async () => {
    const { gateway } = await setup({ content: 'one two three four five', usage: USAGE, chunkDelayMs: 30 });
    const { key } = await createKey(gateway, { maxStreams: 1 });
    const first = await chat(gateway, key, { stream: true });
    expect(first.status).toBe(200);
    const second = await chat(gateway, key, { stream: true });
    expect(second.status).toBe(429);
    expect(((await second.json()) as { error: { message: string } }).error.message).toContain('1 streams open');
    await first.text();
    // The slot is given back when the stream ends; the settlement is not awaited by the reply.
    await expect.poll(async () => (await chat(gateway, key, { stream: true })).status).toBe(200);
  });
});

describe('spend', () => {
  it('a budget spent by a stream mid-way: the stream finishes, the next call is refused naming the budget and its reset', async () => {
    // gpt-4o-mini: $0.15 in, $0.60 out per million. The call reserves about 126 tokens' worth; it uses 100 000.
    const big = { prompt_tokens: 1000, completion_tokens: 100_000, total_tokens: 101_000 };
    const { gateway, log } = await setup({ content: 'a long answer '.repeat(20), usage: big, chunkDelayMs: 1 });
    const { key, id } = await createKey(gateway, { budget: { usd: 0.01, period: 'day' } });
    const stream = await chat(gateway, key, { stream: true, stream_options: { include_usage: true }, max_tokens: 100 });
    expect(stream.status).toBe(200);
    const text = await stream.text();
    expect(text).toContain('data: [DONE]');
    expect(readChunks(text).text).toBe('a long answer '.repeat(20));
    const spent = (1000 * 0.15 + 100_000 * 0.6) / 1e6;
    await expect
      .poll(async () => ((await (await admin(gateway, 'GET', `/admin/keys/${id}/spend`)).json()) as { spentUsd: number }).spentUsd)
      .toBeCloseTo(spent, 6);
    const next = await chat(gateway, key);
    expect(next.status).toBe(429);
    const body = (await next.json()) as { error: { code: string; message: string; type: string } };
    expect(body.error.code).toBe('budget_exceeded');
    expect(body.error.type).toBe('insufficient_quota');
    expect(body.error.message).toMatch(/budget of \$0\.01 per day; the budget resets at \d{4}-\d{2}-\d{2}T00:00:00\.000Z/);
    expect(Number(next.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(log.find((entry) => entry.stream)).toMatchObject({ keyName: 'ci', cost: expect.closeTo(spent, 6) });
  });

  it('x-ai4ts-cost of a whole answer is what the key was charged', async () => {
    const { gateway } = await setup();
    const { key, id } = await createKey(gateway, {});
    const response = await chat(gateway, key);
    expect(response.status).toBe(200);
    await response.arrayBuffer();
    // gpt-4o-mini: 100 input tokens at $0.15 and 50 output tokens at $0.60 per million.
    expect(response.headers.get('x-ai4ts-cost')).toBe('0.000045');
    await expect
      .poll(async () => ((await (await admin(gateway, 'GET', `/admin/keys/${id}/spend`)).json()) as { spentUsd: number }).spentUsd)
      .toBe(0.000045);
  });

  it('a stream cut short before its usage is charged its input estimate and the output that went out', async () => {
    const { gateway, log } = await setup({ content: 'x'.repeat(400), usage: USAGE, cutOff: { afterChunks: 30, reset: true } });
    const { key, id } = await createKey(gateway, {});
    const stream = await chat(gateway, key, { stream: true });
    await stream.text().catch(() => '');
    await expect
      .poll(async () => ((await (await admin(gateway, 'GET', `/admin/keys/${id}/spend`)).json()) as { spentUsd: number }).spentUsd)
      .toBeGreaterThan(0);
    const entry = log.find((line) => line.stream);
    expect(entry?.cost).toBeGreaterThan(0);
    expect(entry?.tokens).toBeUndefined();
  });

  it('a stream refused by the gateway’s own stream cap gives its reservation back', async () => {
    const { gateway } = await setup({ content: 'one two three four five', usage: USAGE, chunkDelayMs: 30 }, { maxConcurrentStreams: 1 });
    const { key, id } = await createKey(gateway, { budget: { usd: 1, period: 'month' } });
    const first = await chat(gateway, key, { stream: true });
    expect(first.status).toBe(200);
    const second = await chat(gateway, key, { stream: true });
    expect(second.status).toBe(503);
    await first.text();
    const perCall = (USAGE.prompt_tokens * 0.15 + USAGE.completion_tokens * 0.6) / 1e6;
    await expect
      .poll(async () => ((await (await admin(gateway, 'GET', `/admin/keys/${id}/spend`)).json()) as { spentUsd: number }).spentUsd)
      .toBeCloseTo(perCall, 9);
  });

  it('a call that failed before any output costs nothing and gives its reservation back', async () => {
    const { gateway } = await setup({ httpError: { status: 500 } }, { upstreamRetry: { maxRetries: 0 } });
    const { key, id } = await createKey(gateway, { budget: { usd: 1, period: 'month' } });
    expect((await chat(gateway, key)).status).toBe(502);
    await expect
      .poll(async () => ((await (await admin(gateway, 'GET', `/admin/keys/${id}/spend`)).json()) as { spentUsd: number }).spentUsd)
      .toBe(0);
  });
});

describe('the key itself', () => {
  it('is in no log line, error, response header or body, nor span attribute; its name is', async () => {
    const exporter = new InMemorySpanExporter();
    const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer('test');
    const { gateway, log } = await setup(undefined, { telemetry: { tracer } });
    const { key, id } = await createKey(gateway, { rpm: 2, models: ['gpt-*'] });
    const seen: string[] = [];
    const record = async (response: Response) => {
      seen.push(JSON.stringify([...response.headers]), await response.text());
    };
    await record(await chat(gateway, key));
    await record(await chat(gateway, key, { stream: true }));
    await record(await chat(gateway, key, { model: 'claude-x' }));
    await record(await chat(gateway, key));
    await record(await admin(gateway, 'GET', '/admin/keys'));
    await record(await admin(gateway, 'GET', `/admin/keys/${id}`));
    await record(await admin(gateway, 'DELETE', `/admin/keys/${id}`));
    await record(await chat(gateway, key));
    await expect.poll(() => log.length).toBe(9);
    seen.push(...log.map((entry) => JSON.stringify(entry)));
    await expect.poll(() => exporter.getFinishedSpans().length).toBeGreaterThan(0);
    const spans = exporter.getFinishedSpans();
    seen.push(...spans.map((span) => JSON.stringify({ name: span.name, attributes: span.attributes, events: span.events, status: span.status })));
    for (const text of seen) expect(text).not.toContain(key);
    expect(log.filter((entry) => entry.path === '/v1/chat/completions' && entry.status !== 401).every((entry) => entry.keyName === 'ci')).toBe(true);
    expect(spans.some((span) => span.attributes['ai4ts.gateway.key_name'] === 'ci')).toBe(true);
  });
});

describe("a route with state: 'upstream'", () => {
  it('admits a virtual key as any route does and charges its input estimate, since the answer passes through unread', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'keys-'));
    dirs.push(dir);
    const model = await startMockModel({ script: () => ({ content: 'Hello there', usage: USAGE }) });
    open.push(model);
    const log: AccessLogEntry[] = [];
    const gateway = await listenGateway({
      routes: [{ model: '*', upstream: model.baseURL, protocol: 'responses', state: 'upstream', upstreamToken: 'sk-upstream' }],
      auth: STATIC,
      keys: { store: new FileKeyStore(join(dir, 'keys.json')) },
      adminToken: ADMIN,
      prices: { 'gpt-4o-mini': { input: 1_000_000, output: 0 } },
      log: (entry) => log.push(entry),
    });
    open.push(gateway);
    const { key, id } = await createKey(gateway, { rpm: 1, models: ['gpt-*'] });
    const respond = (modelName: string) =>
      fetch(`${gateway.url}/v1/responses`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: modelName, input: 'hi' }),
      });
    expect((await respond('claude-sonnet-4-5')).status).toBe(403);
    const before = model.requests.length;
    const passed = await respond('gpt-4o-mini');
    expect(passed.status).toBe(200);
    expect(passed.headers.get('x-ratelimit-remaining-requests')).toBe('0');
    expect((await respond('gpt-4o-mini')).status).toBe(429);
    expect(model.requests.length - before).toBe(1);
    // One input token costs 1 USD here: the spend is the input estimate of the one call let through.
    const spend = (await (await admin(gateway, 'GET', `/admin/keys/${id}/spend`)).json()) as { spentUsd: number };
    expect(spend.spentUsd).toBeGreaterThan(0);
    expect(log.find((entry) => entry.status === 200 && entry.path === '/v1/responses')?.cost).toBe(spend.spentUsd);
  });
});

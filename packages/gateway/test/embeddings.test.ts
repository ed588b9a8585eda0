/**
 * `POST /v1/embeddings` and `POST /v1/rerank` through the gateway to the scripted model on 127.0.0.1: the official
 * `openai` client's `embeddings.create` (float, its default base64, raw base64) and ai4ts's own client, routed by
 * model with the route's key and `upstreamModel`, counted in the access log with their tokens, and every failure
 * an OpenAI-shaped error without a key in it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type AccessLogEntry, FileKeyStore, type ListeningGateway, listenGateway } from '@ai4ts/gateway';
import { closeAll, serve } from '@ai4ts/test-kit';
import { type MockModel, mockVector, startMockModel } from '@ai4ts/testing';
import { Ai4ts } from 'ai4ts';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon } from './helpers.js';

const KEY = 'sk-gateway-client-key-77';
const UPSTREAM_KEY = 'sk-upstream-secret-4242';
const texts = ['The cat sat on the mat', 'A dog barked', 'café ☕'];

let model: MockModel;
let limited: MockModel;
let gateway: ListeningGateway;
let daemon: { url: string; close(): Promise<void> };
const log: AccessLogEntry[] = [];

beforeAll(async () => {
  model = await startMockModel({
    script: [],
    embeddings: { maxInputs: 4, httpErrors: [] },
  });
  // Rate limited twice, then well: a retried 429 is served, two in a row (the route's one retry spent) are the client's.
  limited = await startMockModel({ script: [], embeddings: { httpErrors: [{ status: 429 }, { status: 429 }, { status: 429 }] } });
  daemon = await startDaemon(() => undefined);
  const badUpstream = await serve((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    // One embedding for any number of inputs, and a rerank result naming a document that was not sent.
    res.end(JSON.stringify(req.url?.endsWith('/rerank') ? { results: [{ index: 9, relevance_score: 1 }] } : { data: [{ index: 0, embedding: [1] }] }));
  });
  gateway = await listenGateway({
    routes: [
      { model: 'embed-renamed', upstream: model.baseURL, protocol: 'chat', upstreamToken: UPSTREAM_KEY, upstreamModel: 'real-embed' },
      { model: 'embed-*', upstream: model.baseURL, protocol: 'chat', upstreamToken: UPSTREAM_KEY },
      { model: 'rerank-*', upstream: model.baseURL, protocol: 'chat', upstreamToken: UPSTREAM_KEY },
      { model: 'limited', upstream: limited.baseURL, protocol: 'chat', upstreamToken: UPSTREAM_KEY },
      { model: 'broken', upstream: badUpstream.baseURL, protocol: 'chat', upstreamToken: UPSTREAM_KEY },
      { model: 'daemon', upstream: daemon.url, dialect: 'typed' },
    ],
    auth: KEY,
    upstreamRetry: { maxRetries: 1, backoff: { initialMs: 1, maxMs: 2 } },
    log: (entry) => log.push(entry),
  });
});

afterAll(async () => {
  await gateway.close();
  await daemon.close();
  await model.close();
  await limited.close();
  await closeAll();
});

const openai = () => new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: KEY, maxRetries: 0 });

function lastUpstreamBody(): Record<string, unknown> {
  const body = model.requests.at(-1)?.body;
  if (typeof body !== 'object' || body === null) throw new Error('no upstream body');
  return body as Record<string, unknown>;
}

async function post(path: string, body: unknown, key = KEY): Promise<{ status: number; json: Record<string, unknown>; text: string }> {
  const response = await fetch(`${gateway.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, json: JSON.parse(text) as Record<string, unknown>, text };
}

describe('the official openai client through the gateway', () => {
  it('embeddings.create with float: the upstream\'s vectors exactly, the route\'s key upstream, tokens in the access log', async () => {
    const answer = await openai().embeddings.create({ model: 'embed-small', input: texts, encoding_format: 'float' });
    expect(answer.data.map((item) => item.embedding)).toEqual(texts.map((text) => Array.from(mockVector(text, 16))));
    expect(answer.model).toBe('embed-small');
    expect(model.requests.at(-1)?.headers.authorization).toBe(`Bearer ${UPSTREAM_KEY}`);
    expect(lastUpstreamBody()).toMatchObject({ model: 'embed-small', input: texts, encoding_format: 'float' });
    const entry = log.at(-1);
    expect(entry).toMatchObject({ path: '/v1/embeddings', protocol: 'embeddings', model: 'embed-small', status: 200, stream: false });
    expect(entry?.upstream).toMatch(/^chat@127\.0\.0\.1:/);
    expect(entry?.tokens).toEqual({ prompt: answer.usage.prompt_tokens, completion: 0, total: answer.usage.total_tokens });
  });

  it('embeddings.create by default: base64 on the wire, decoded by the client to the same numbers', async () => {
    const answer = await openai().embeddings.create({ model: 'embed-small', input: texts, dimensions: 32 });
    expect(lastUpstreamBody()).toMatchObject({ encoding_format: 'base64', dimensions: 32 });
    expect(answer.data.map((item) => item.embedding)).toEqual(texts.map((text) => Array.from(mockVector(text, 32))));
  });

  it('embeddings.create with base64: the upstream\'s base64 as it was, little-endian float32s', async () => {
    const answer = await openai().embeddings.create({ model: 'embed-small', input: 'one', encoding_format: 'base64' });
    const text = answer.data[0]?.embedding as unknown as string;
    const bytes = Buffer.from(text, 'base64');
    const values = Array.from({ length: bytes.length / 4 }, (_, i) => bytes.readFloatLE(i * 4));
    expect(values).toEqual(Array.from(mockVector('one', 16)));
  });

  it('a route\'s upstreamModel is what the upstream gets; the client sees its own model', async () => {
    const answer = await openai().embeddings.create({ model: 'embed-renamed', input: 'x', encoding_format: 'float' });
    expect(lastUpstreamBody().model).toBe('real-embed');
    expect(answer.model).toBe('embed-renamed');
  });

  it('the upstream\'s batch limit comes back as its 400, in OpenAI\'s shape', async () => {
    const error = await openai().embeddings.create({ model: 'embed-small', input: ['a', 'b', 'c', 'd', 'e'] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).message).toContain('at most 4 items');
  });
});

describe('rerank through the gateway', () => {
  const documents = ['dogs bark loudly', 'cats purr softly', 'the weather today', 'a cat and its purr'];

  it('ranks like the upstream, with original indexes, and logs its tokens', async () => {
    const { status, json } = await post('/v1/rerank', { model: 'rerank-1', query: 'cats purr softly', documents, top_n: 3 });
    expect(status).toBe(200);
    const results = json.results as { index: number; relevance_score: number }[];
    expect(results).toHaveLength(3);
    expect(results[0]?.index).toBe(1);
    expect(log.at(-1)).toMatchObject({ path: '/v1/rerank', protocol: 'rerank', model: 'rerank-1', status: 200 });
    expect(log.at(-1)?.tokens?.total).toBeGreaterThan(0);
  });

  it('ai4ts\'s own client: rerank and embedMany through the gateway', async () => {
    const client = new Ai4ts({ provider: 'openai-compatible', baseURL: `${gateway.url}/v1`, apiKey: KEY });
    const ranked = await client.rerank({ model: 'rerank-1', query: 'cats purr softly', documents });
    expect(ranked.results.map((r) => r.document)[0]).toBe('cats purr softly');
    const values = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i'];
    const many = await client.embeddings.embedMany(values, { model: 'embed-small', batchSize: 4, encoding_format: 'base64' });
    expect(many.embeddings.map((vector) => Array.from(vector))).toEqual(values.map((value) => Array.from(mockVector(value, 16))));
  });
});

describe('failures, in OpenAI\'s shape, without a key', () => {
  const cases: Array<[string, string, unknown, number, string | null]> = [
    ['no input', '/v1/embeddings', { model: 'embed-small' }, 400, 'input'],
    ['an empty input', '/v1/embeddings', { model: 'embed-small', input: [] }, 400, 'input'],
    ['an unknown encoding', '/v1/embeddings', { model: 'embed-small', input: 'x', encoding_format: 'hex' }, 400, 'encoding_format'],
    ['no model', '/v1/embeddings', { input: 'x' }, 400, 'model'],
    ['no documents', '/v1/rerank', { model: 'rerank-1', query: 'q', documents: [] }, 400, 'documents'],
    ['a bad top_n', '/v1/rerank', { model: 'rerank-1', query: 'q', documents: ['a'], top_n: 0 }, 400, 'top_n'],
    ['a model no route serves', '/v1/embeddings', { model: 'unknown', input: 'x' }, 404, 'model'],
    ['a daemon route', '/v1/embeddings', { model: 'daemon', input: 'x' }, 400, 'model'],
    ['an upstream answer with too few vectors', '/v1/embeddings', { model: 'broken', input: ['a', 'b'] }, 502, null],
    ['an upstream result naming no document', '/v1/rerank', { model: 'broken', query: 'q', documents: ['a'] }, 502, null],
  ];
  it.each(cases)('%s', async (_, path, body, status, param) => {
    const answer = await post(path, body);
    expect(answer.status).toBe(status);
    expect(answer.json.error).toMatchObject({ param });
    expect(typeof (answer.json.error as { message: unknown }).message).toBe('string');
    expect(answer.text).not.toContain(UPSTREAM_KEY);
    expect(log.at(-1)?.status).toBe(status);
  });

  it('the upstream\'s 429, retried once, is a 429 rate_limit_exceeded; the next request is retried to success', async () => {
    const refused = await post('/v1/embeddings', { model: 'limited', input: 'x' });
    expect(refused.status).toBe(429);
    expect(refused.json.error).toMatchObject({ code: 'rate_limit_exceeded' });
    expect(refused.text).not.toContain(UPSTREAM_KEY);
    expect(limited.requests).toHaveLength(2);
    const served = await post('/v1/embeddings', { model: 'limited', input: 'x' });
    expect(served.status).toBe(200);
    expect(limited.requests).toHaveLength(4);
  });

  it('a wrong key is a 401 and nothing goes upstream', async () => {
    const before = model.requests.length;
    const answer = await post('/v1/embeddings', { model: 'embed-small', input: 'x' }, 'sk-wrong-key-000000');
    expect(answer.status).toBe(401);
    expect(answer.json.error).toBeDefined();
    expect(model.requests.length).toBe(before);
  });

  it('GET is a 405', async () => {
    const response = await fetch(`${gateway.url}/v1/embeddings`, { headers: { authorization: `Bearer ${KEY}` } });
    expect(response.status).toBe(405);
    await response.text();
  });
});

describe('with the gateway\'s other route features', () => {
  it('falls over to the route\'s next upstream when the first answers 503, as chat does', async () => {
    const down = await serve((_req, res) => {
      res.writeHead(503, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'overloaded', type: 'server_error', param: null, code: null } }));
    });
    const entries: AccessLogEntry[] = [];
    const pooled = await listenGateway({
      routes: [
        {
          model: '*',
          upstreams: [
            { upstream: down.baseURL, protocol: 'chat', name: 'down' },
            { upstream: model.baseURL, protocol: 'chat', name: 'up' },
          ],
        },
      ],
      upstreamRetry: { maxRetries: 0 },
      log: (entry) => entries.push(entry),
    });
    try {
      const answer = await new OpenAI({ baseURL: `${pooled.url}/v1`, apiKey: 'none', maxRetries: 0 }).embeddings.create({
        model: 'embed-small',
        input: 'x',
        encoding_format: 'float',
      });
      expect(answer.data[0]?.embedding).toEqual(Array.from(mockVector('x', 16)));
      expect(entries.at(-1)).toMatchObject({ upstream: 'up', attempts: 2, status: 200 });
    } finally {
      await pooled.close();
    }
  });

  it("counts a virtual key here as on the chat routes: its models, its requests per minute and its spend", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'embed-keys-'));
    const keyed = await listenGateway({
      upstream: model.baseURL,
      upstreamProtocol: 'chat',
      auth: KEY,
      keys: { store: new FileKeyStore(join(dir, 'keys.json')) },
      adminToken: 'admin-token-embed-1',
      prices: { 'embed-small': { input: 1000, output: 0 } },
    });
    const admin = (method: string, path: string, body?: unknown) =>
      fetch(`${keyed.url}${path}`, {
        method,
        headers: { authorization: 'Bearer admin-token-embed-1', 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    const embed = (key: string, modelName: string) =>
      fetch(`${keyed.url}/v1/embeddings`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: modelName, input: texts, encoding_format: 'float' }),
      });
    try {
      const { key, id } = (await (await admin('POST', '/admin/keys', { name: 'ci', models: ['embed-*'], rpm: 2 })).json()) as {
        key: string;
        id: string;
      };
      const before = model.requests.length;
      const first = await embed(key, 'embed-small');
      expect(first.status).toBe(200);
      expect(first.headers.get('x-ratelimit-limit-requests')).toBe('2');
      expect(first.headers.get('x-ratelimit-remaining-requests')).toBe('1');
      const { usage } = (await first.json()) as { usage: { prompt_tokens: number } };

      const other = await embed(key, 'rerank-small');
      expect(other.status).toBe(403);
      expect((await other.json()).error).toMatchObject({ code: 'model_not_allowed' });

      expect((await embed(key, 'embed-small')).status).toBe(200);
      const over = await embed(key, 'embed-small');
      expect(over.status).toBe(429);
      expect(over.headers.get('retry-after')).toMatch(/^\d+$/);
      const text = await over.text();
      expect(JSON.parse(text).error).toMatchObject({ code: 'rate_limit_exceeded' });
      expect(text).not.toContain(key);
      expect(model.requests.length - before).toBe(2);

      // Spend is the real usage priced: two answers of `usage.prompt_tokens` input tokens at 1000 USD per million.
      const spend = (await (await admin('GET', `/admin/keys/${id}/spend`)).json()) as { spentUsd: number };
      expect(spend.spentUsd).toBeCloseTo((2 * usage.prompt_tokens * 1000) / 1e6, 9);
    } finally {
      await keyed.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/**
 * The scripted model's `/v1/embeddings` and `/v1/rerank` over raw fetch: OpenAI's shapes, the same vector for the same
 * text in float and base64, unit length, the batch limits answered with a 400 like the real APIs, scripted errors.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type MockModel, type MockModelOptions, mockVector, startMockModel } from '../src/index.js';

let model: MockModel | undefined;
afterEach(async () => {
  await model?.close();
  model = undefined;
});

/** What the two routes answer, as far as these tests read it. */
interface Answer {
  error: { message: string; param: string | null; code: string | null };
  data: { object: string; index: number; embedding: number[] | string }[];
  results: { index: number; relevance_score: number }[];
  usage: { total_tokens: number };
}

async function post(path: string, body: unknown, options: Omit<MockModelOptions, 'script'> = {}) {
  model ??= await startMockModel({ script: [], ...options });
  const response = await fetch(`${model.baseURL}${path}`, { method: 'POST', body: JSON.stringify(body) });
  return { status: response.status, json: (await response.json()) as Answer };
}

describe('/v1/embeddings', () => {
  it('answers OpenAI\'s list, one unit-length vector per input, the same in float and base64', async () => {
    const input = ['one text', 'another text'];
    const floats = await post('/embeddings', { model: 'e', input, encoding_format: 'float', dimensions: 8 });
    const packed = await post('/embeddings', { model: 'e', input, encoding_format: 'base64', dimensions: 8 });
    expect(floats.status).toBe(200);
    expect(floats.json).toMatchObject({ object: 'list', model: 'e', usage: { prompt_tokens: 5, total_tokens: 5 } });
    for (const [i, item] of floats.json.data.entries()) {
      expect(item).toMatchObject({ object: 'embedding', index: i });
      const { embedding } = item;
      const base64 = packed.json.data[i]?.embedding;
      if (typeof embedding === 'string' || typeof base64 !== 'string') throw new Error('float and base64 answers expected');
      expect(embedding).toHaveLength(8);
      expect(Math.hypot(...embedding)).toBeCloseTo(1, 6);
      const bytes = Buffer.from(base64, 'base64');
      expect(Array.from({ length: 8 }, (_, j) => bytes.readFloatLE(j * 4))).toEqual(item.embedding);
      expect(item.embedding).toEqual(Array.from(mockVector(input[i] ?? '', 8)));
    }
  });

  it('texts that share words are nearer than texts that share none', () => {
    const dot = (a: Float32Array, b: Float32Array) => a.reduce((sum, x, i) => sum + x * (b[i] ?? 0), 0);
    const cat = mockVector('the cat sat', 64);
    expect(dot(cat, mockVector('a cat sat down', 64))).toBeGreaterThan(dot(cat, mockVector('rain in spain', 64)));
  });

  it('refuses more inputs than maxInputs, an empty input and an unknown encoding with a 400', async () => {
    const options = { embeddings: { maxInputs: 2 } };
    expect((await post('/embeddings', { model: 'e', input: ['a', 'b', 'c'] }, options)).json.error.message).toContain('at most 2');
    expect((await post('/embeddings', { model: 'e', input: [] })).status).toBe(400);
    expect((await post('/embeddings', { model: 'e', input: '' })).status).toBe(400);
    expect((await post('/embeddings', { model: 'e', input: 'x', encoding_format: 'hex' })).json.error.param).toBe('encoding_format');
  });

  it('answers the scripted HTTP errors in order, counted with rerank requests', async () => {
    const options = { embeddings: { httpErrors: [{ status: 429, headers: { 'retry-after': '1' } }, undefined, { status: 503 }] } };
    expect((await post('/embeddings', { model: 'e', input: 'x' }, options)).json.error.code).toBe('rate_limit_exceeded');
    expect((await post('/rerank', { model: 'r', query: 'q', documents: ['a'] })).status).toBe(200);
    expect((await post('/embeddings', { model: 'e', input: 'x' })).status).toBe(503);
    expect((await post('/embeddings', { model: 'e', input: 'x' })).status).toBe(200);
  });
});

describe('/v1/rerank', () => {
  it('ranks by shared words, best first, with top_n and usage', async () => {
    const documents = ['dogs bark', 'cats purr softly', 'weather'];
    const { status, json } = await post('/rerank', { model: 'r', query: 'cats purr softly', documents, top_n: 2 });
    expect(status).toBe(200);
    expect(json.results).toHaveLength(2);
    const [first, second] = json.results;
    expect(first?.index).toBe(1);
    expect(first?.relevance_score).toBeGreaterThanOrEqual(second?.relevance_score ?? 1);
    expect(json.usage.total_tokens).toBeGreaterThan(0);
  });

  it('refuses more documents than maxDocuments, and a request without a query', async () => {
    expect((await post('/rerank', { model: 'r', query: 'q', documents: ['a', 'b'] }, { embeddings: { maxDocuments: 1 } })).status).toBe(400);
    expect((await post('/rerank', { model: 'r', documents: ['a'] })).json.error.param).toBe('query');
  });
});

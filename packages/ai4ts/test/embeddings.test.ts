/**
 * Embeddings and rerank through the front door, against the scripted model's `/v1/embeddings` and `/v1/rerank` (real
 * sockets): the decoded vectors are the server's exactly in every encoding, `embedMany` batches, bounds its
 * concurrency, keeps the order, sums usage, retries, aborts and keeps what arrived; bad answers are typed errors.
 */
import { closeAll, serve } from '@ai4ts/test-kit';
import { type MockModel, type MockModelOptions, mockVector, startMockModel } from '@ai4ts/testing';
import { AbortError, Ai4ts, BadRequestError, cosineSimilarity, ProtocolError, RateLimitError, topK } from 'ai4ts';
import { afterEach, describe, expect, it } from 'vitest';

let model: MockModel | undefined;
afterEach(async () => {
  await model?.close();
  model = undefined;
  await closeAll();
});

async function clientOf(options: Omit<MockModelOptions, 'script'> = {}, fetch?: typeof globalThis.fetch): Promise<Ai4ts> {
  model = await startMockModel({ script: [], ...options });
  return new Ai4ts({
    provider: 'openai-compatible',
    baseURL: model.baseURL,
    apiKey: 'sk-test-embeddings-key-123',
    backoff: { initialMs: 1, maxMs: 2 },
    ...(fetch && { fetch: (url: string, init: RequestInit) => fetch(url, init) }),
  });
}

function bodyOf(n: number): Record<string, unknown> {
  const body = model?.requests[n]?.body;
  if (typeof body !== 'object' || body === null) throw new Error(`request ${n} has no JSON body`);
  return body as Record<string, unknown>;
}

const texts = ['The cat sat on the mat', 'A dog barked', 'Cats and dogs', 'Rain in Spain', 'Plain text', 'café ☕'];

describe('client.embeddings.create', () => {
  it('float: the vectors as number[], in input order, exactly the server\'s', async () => {
    const client = await clientOf();
    const answer = await client.embeddings.create({ model: 'embed-1', input: texts, encoding_format: 'float' });
    expect(bodyOf(0).encoding_format).toBe('float');
    expect(answer.data.map((item) => item.index)).toEqual([0, 1, 2, 3, 4, 5]);
    for (const [i, text] of texts.entries()) expect(answer.data[i]?.embedding).toEqual(Array.from(mockVector(text, 16)));
    expect(answer.usage.prompt_tokens).toBeGreaterThan(0);
    expect(answer.model).toBe('embed-1');
  });

  it('base64: Float32Array views whose numbers are exactly the float form\'s, with the requested dimensions', async () => {
    const client = await clientOf();
    const floats = await client.embeddings.create({ model: 'embed-1', input: texts, dimensions: 64, encoding_format: 'float' });
    const packed = await client.embeddings.create({ model: 'embed-1', input: texts, dimensions: 64, encoding_format: 'base64' });
    expect(bodyOf(1)).toMatchObject({ encoding_format: 'base64', dimensions: 64 });
    for (const [i, item] of packed.data.entries()) {
      expect(item.embedding).toBeInstanceOf(Float32Array);
      expect(item.embedding.byteOffset).toBe(0);
      expect(item.embedding.buffer.byteLength).toBe(64 * 4);
      expect(Array.from(item.embedding)).toEqual(floats.data[i]?.embedding);
    }
  });

  it('asks for base64 when no encoding is given, as openai-node does, and returns number[]', async () => {
    const client = await clientOf();
    const answer = await client.embeddings.create({ model: 'embed-1', input: 'one text' });
    expect(bodyOf(0).encoding_format).toBe('base64');
    expect(Array.isArray(answer.data[0]?.embedding)).toBe(true);
    expect(answer.data[0]?.embedding).toEqual(Array.from(mockVector('one text', 16)));
  });

  it('refuses an empty input before sending anything', async () => {
    const client = await clientOf();
    await expect(client.embeddings.create({ model: 'embed-1', input: [] })).rejects.toThrow('non-empty input');
    await expect(client.embeddings.create({ model: 'embed-1', input: '' })).rejects.toThrow('non-empty input');
    expect(model?.requests).toHaveLength(0);
  });

  it('the server\'s batch limit is its 400, a BadRequestError', async () => {
    const client = await clientOf({ embeddings: { maxInputs: 2 } });
    await expect(client.embeddings.create({ model: 'embed-1', input: texts })).rejects.toBeInstanceOf(BadRequestError);
  });

  it('a 429 and a 500 are retried by the RetryPolicy', async () => {
    const client = await clientOf({ embeddings: { httpErrors: [{ status: 429 }, { status: 500 }] } });
    const answer = await client.embeddings.create({ model: 'embed-1', input: 'x' });
    expect(answer.data).toHaveLength(1);
    expect(model?.requests).toHaveLength(3);
  });

  it('no key appears in an error', async () => {
    const client = await clientOf({ embeddings: { httpErrors: [{ status: 429 }, { status: 429 }, { status: 429 }] } });
    const error = await client.embeddings.create({ model: 'embed-1', input: 'x' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitError);
    expect(JSON.stringify(error, Object.getOwnPropertyNames(error))).not.toContain('sk-test-embeddings-key-123');
  });
});

describe('client.embeddings.embedMany', () => {
  const values = Array.from({ length: 10 }, (_, i) => `value number ${i} ${'word '.repeat(i)}`);

  it('splits into batches of batchSize, keeps the order and sums the usage', async () => {
    const client = await clientOf();
    const result = await client.embeddings.embedMany(values, { model: 'embed-1', batchSize: 3, concurrency: 2 });
    expect(model?.requests.map((r) => (r.body as { input: string[] }).input.length).sort()).toEqual([1, 3, 3, 3]);
    expect(result.embeddings).toEqual(values.map((value) => Array.from(mockVector(value, 16))));
    const single = await client.embeddings.create({ model: 'embed-1', input: values });
    expect(result.usage).toEqual(single.usage);
  });

  it('takes the preset\'s embeddingBatchSize when no batchSize is given', async () => {
    model = await startMockModel({ script: [], embeddings: { maxInputs: 4 } });
    const preset = { name: 'small', baseURL: model.baseURL, apiKeyEnv: [], auth: 'none' as const, embeddingBatchSize: 4, quirks: { streamOptions: false } };
    const client = new Ai4ts({ provider: preset });
    const result = await client.embeddings.embedMany(values, { model: 'embed-1' });
    expect(model.requests).toHaveLength(3);
    expect(result.embeddings).toHaveLength(10);
  });

  it('keeps the values\' order when the batches finish out of order', async () => {
    let release: () => void = () => undefined;
    const first = new Promise<void>((resolve) => {
      release = resolve;
    });
    let calls = 0;
    const client = await clientOf({}, async (url, init) => {
      const n = calls++;
      const response = await fetch(url, init);
      // The first batch answers only after all the others did.
      if (n === 0) await first;
      else if (n === 3) release();
      return response;
    });
    const result = await client.embeddings.embedMany(values, { model: 'embed-1', batchSize: 3, concurrency: 4, encoding_format: 'base64' });
    expect(result.embeddings.map((vector) => Array.from(vector))).toEqual(values.map((value) => Array.from(mockVector(value, 16))));
  });

  it('has at most `concurrency` requests in flight', async () => {
    let inFlight = 0;
    let peak = 0;
    const client = await clientOf({ embeddings: { delayMs: 20 } }, async (url, init) => {
      peak = Math.max(peak, ++inFlight);
      try {
        return await fetch(url, init);
      } finally {
        inFlight--;
      }
    });
    const result = await client.embeddings.embedMany(values, { model: 'embed-1', batchSize: 1, concurrency: 3 });
    expect(result.embeddings).toHaveLength(10);
    expect(model?.requests).toHaveLength(10);
    expect(peak).toBe(3);
  });

  it('retries a batch answered 429 or 500 and still returns every vector in order', async () => {
    const client = await clientOf({ embeddings: { httpErrors: [undefined, { status: 429, headers: { 'retry-after-ms': '1' } }, { status: 500 }] } });
    const retries: string[] = [];
    const result = await client.embeddings.embedMany(values, {
      model: 'embed-1',
      batchSize: 4,
      concurrency: 1,
      onRetry: (error) => retries.push(error.name),
    });
    expect(retries).toEqual(['RateLimitError', 'ServerError']);
    expect(model?.requests).toHaveLength(5);
    expect(result.embeddings).toEqual(values.map((value) => Array.from(mockVector(value, 16))));
  });

  it('a batch that fails stops the rest; its error keeps the embeddings already received in partial', async () => {
    const client = await clientOf({ embeddings: { httpErrors: [undefined, { status: 400 }] } });
    const error = await client.embeddings.embedMany(values, { model: 'embed-1', batchSize: 4, concurrency: 1 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BadRequestError);
    const partial = (error as BadRequestError).partial as { embeddings: unknown[]; usage: { prompt_tokens: number } };
    expect(partial.embeddings).toHaveLength(10);
    expect(partial.embeddings.slice(0, 4)).toEqual(values.slice(0, 4).map((value) => Array.from(mockVector(value, 16))));
    expect(partial.embeddings.slice(4)).toEqual(Array(6).fill(undefined));
    expect(partial.usage.prompt_tokens).toBeGreaterThan(0);
    expect(model?.requests).toHaveLength(2);
  });

  it('aborts every batch on the signal with an AbortError', async () => {
    const client = await clientOf({ embeddings: { delayMs: 50 } });
    const controller = new AbortController();
    const running = client.embeddings.embedMany(values, { model: 'embed-1', batchSize: 2, concurrency: 2, signal: controller.signal });
    while ((model?.requests.length ?? 0) < 2) await new Promise((resolve) => setTimeout(resolve, 1));
    controller.abort();
    await expect(running).rejects.toBeInstanceOf(AbortError);
    // Nothing after the abort: the two batches in flight were the last.
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(model?.requests).toHaveLength(2);
  });

  it('an empty list needs no request', async () => {
    const client = await clientOf();
    expect(await client.embeddings.embedMany([], { model: 'embed-1' })).toEqual({ embeddings: [], usage: { prompt_tokens: 0, total_tokens: 0 }, model: 'embed-1' });
    expect(model?.requests).toHaveLength(0);
  });
});

describe('bad /embeddings answers are ProtocolErrors', () => {
  const answers: Array<[string, unknown]> = [
    ['one embedding too few', { data: [{ index: 0, embedding: [1] }] }],
    ['an index out of range', { data: [{ index: 0, embedding: [1] }, { index: 2, embedding: [1] }] }],
    ['an index twice', { data: [{ index: 1, embedding: [1] }, { index: 1, embedding: [1] }] }],
    ['no vector', { data: [{ index: 0 }, { index: 1, embedding: [1] }] }],
    ['base64 of 3 bytes', { data: [{ index: 0, embedding: 'AAAA' }, { index: 1, embedding: 'AAAAAA==' }] }],
    ['no data', { object: 'list' }],
  ];
  it.each(answers)('%s', async (_, body) => {
    const server = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    });
    const client = new Ai4ts({ provider: 'openai-compatible', baseURL: server.baseURL });
    await expect(client.embeddings.create({ model: 'm', input: ['a', 'b'] })).rejects.toBeInstanceOf(ProtocolError);
  });
});

describe('client.rerank', () => {
  const documents = ['dogs bark loudly', 'cats purr softly', 'the weather today', 'a cat and its purr'];

  it('ranks the documents, most relevant first, with their original indexes and texts', async () => {
    const client = await clientOf();
    const ranked = await client.rerank({ model: 'rerank-1', query: 'cats purr softly', documents });
    expect(bodyOf(0)).toEqual({ model: 'rerank-1', query: 'cats purr softly', documents });
    expect(ranked.results[0]).toMatchObject({ index: 1, document: 'cats purr softly' });
    expect(ranked.results.map((r) => r.index).sort()).toEqual([0, 1, 2, 3]);
    for (const result of ranked.results) expect(result.document).toBe(documents[result.index]);
    const scores = ranked.results.map((r) => r.relevanceScore);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    expect(ranked.usage?.total_tokens).toBeGreaterThan(0);
  });

  it('topN is sent as top_n and keeps the best ones', async () => {
    const client = await clientOf();
    const ranked = await client.rerank({ model: 'rerank-1', query: 'cats purr softly', documents, topN: 2 });
    expect(bodyOf(0).top_n).toBe(2);
    expect(ranked.results).toHaveLength(2);
    expect(ranked.results[0]?.index).toBe(1);
  });

  it('sorts an answer that came unsorted (Cohere v1 and Voyage shapes), and refuses a result naming no document', async () => {
    const bodies = [
      { results: [{ index: 0, relevance_score: 0.1 }, { index: 2, relevance_score: 0.9 }, { index: 1, relevance_score: 0.5 }] },
      { data: [{ index: 1, relevance_score: 0.5 }, { index: 2, relevance_score: 0.9 }] },
      { results: [{ index: 7, relevance_score: 0.9 }] },
      { results: [{ index: 1, relevance_score: 0.9 }, { index: 1, relevance_score: 0.8 }] },
    ];
    const server = await serve((_req, res, n) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(bodies[n - 1]));
    });
    const client = new Ai4ts({ provider: 'openai-compatible', baseURL: server.baseURL });
    const request = { model: 'm', query: 'q', documents: ['a', 'b', 'c'] };
    expect((await client.rerank(request)).results.map((r) => [r.index, r.document])).toEqual([[2, 'c'], [1, 'b'], [0, 'a']]);
    expect((await client.rerank(request)).results.map((r) => r.index)).toEqual([2, 1]);
    await expect(client.rerank(request)).rejects.toBeInstanceOf(ProtocolError);
    await expect(client.rerank(request)).rejects.toBeInstanceOf(ProtocolError);
  });
});

describe('cosineSimilarity and topK', () => {
  it('finds the nearest texts among the scripted model\'s vectors', async () => {
    const client = await clientOf();
    const { embeddings } = await client.embeddings.embedMany(texts, { model: 'embed-1', encoding_format: 'base64' });
    const items = texts.map((text, i) => ({ text, embedding: embeddings[i] ?? new Float32Array() }));
    const [query] = (await client.embeddings.create({ model: 'embed-1', input: 'a cat on a mat', encoding_format: 'base64' })).data;
    const best = topK(query?.embedding ?? [], items, 2);
    expect(best).toHaveLength(2);
    expect(best[0]?.item.text).toBe('The cat sat on the mat');
    expect(best[0]?.score).toBeGreaterThanOrEqual(best[1]?.score ?? 1);
  });

  it('is 1 for the same direction, -1 for opposite, 0 for a zero vector, and refuses different lengths', () => {
    expect(cosineSimilarity([1, 2, 3], [2, 4, 6])).toBeCloseTo(1, 12);
    expect(cosineSimilarity([1, 0], [-1, 0])).toBe(-1);
    expect(cosineSimilarity([0, 0], [1, 0])).toBe(0);
    expect(() => cosineSimilarity([1], [1, 2])).toThrow('1 and 2 dimensions');
  });
});

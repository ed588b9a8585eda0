/**
 * Bedrock's Converse API through `client.converse`, over real sockets: a node:http server that answers only what
 * Bedrock accepts (a SigV4 Authorization for the credentials it knows, the model id URL-encoded in the path, no
 * `model` in the body) with recorded Converse streams (the Vercel AI SDK's fixtures, see
 * packages/converse/test/fixtures/NOTICE), each event framed by @smithy/eventstream-codec as Bedrock sends it.
 */
import { readFileSync } from 'node:fs';
import { Ai4ts, ApiError, defineTool, StreamIncompleteError } from 'ai4ts';
import { bedrock } from 'ai4ts/bedrock';
import { bedrockEventFrame, bedrockExceptionFrame, concatBytes, seededRandom, serve, type TestServer } from '@ai4ts/test-kit';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';

const MODEL = 'us.anthropic.claude-3-7-sonnet-20250219-v1:0';
const PATH = `/model/${encodeURIComponent(MODEL)}`;
const ACCESS_KEY_ID = 'AKIAIOSFODNN7EXAMPLE';
const SECRET = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYSECRETKEY';

/** A recorded stream as its Bedrock frames: each line `{"<event type>": payload}` one event frame. */
function frames(name: string): Uint8Array[] {
  const text = readFileSync(new URL(`../../converse/test/fixtures/amazon-bedrock-${name}.chunks.txt`, import.meta.url), 'utf8');
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const [[type, payload]] = Object.entries(JSON.parse(line) as Record<string, unknown>) as [[string, unknown]];
      return bedrockEventFrame(type, payload);
    });
}

/** The bytes cut at random places (seeded): frames split across reads and several in one. */
function cutRandomly(bytes: Uint8Array, seed: number): Uint8Array[] {
  const random = seededRandom(seed);
  const parts: Uint8Array[] = [];
  for (let at = 0; at < bytes.length; ) {
    const size = 1 + Math.floor(random() * 40);
    parts.push(bytes.subarray(at, at + size));
    at += size;
  }
  return parts;
}

let server: TestServer | undefined;
let refusals: string[] = [];
const bodies: Record<string, unknown>[] = [];

afterEach(async () => {
  await server?.close();
  server = undefined;
  refusals = [];
  bodies.length = 0;
});

/** The Bedrock side; `streamOf(n)` gives request n's body as byte slices, written one by one. */
async function startBedrock(streamOf: (n: number) => Uint8Array[]) {
  server = await serve((req, res, n) => {
    const body = JSON.parse(server?.bodies[n - 1] ?? '{}') as Record<string, unknown>;
    bodies.push(body);
    const refuse = (status: number, reason: string) => {
      refusals.push(reason);
      res.writeHead(status, { 'content-type': 'application/json', 'x-amzn-errortype': 'ValidationException' });
      res.end(JSON.stringify({ message: reason }));
    };
    const auth = String(req.headers.authorization);
    if (!auth.startsWith(`AWS4-HMAC-SHA256 Credential=${ACCESS_KEY_ID}/`) || !/\/us-east-1\/bedrock\/aws4_request, /.test(auth)) {
      return refuse(403, 'bad signature');
    }
    if ('model' in body || 'stream' in body || 'tools' in body) return refuse(400, 'extraneous key');
    if (!Array.isArray(body.messages)) return refuse(400, 'messages missing');
    if (req.url === `${PATH}/converse`) {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(
        JSON.stringify({
          output: { message: { role: 'assistant', content: [{ text: 'Hi' }] } },
          stopReason: 'end_turn',
          usage: { inputTokens: 3, outputTokens: 1, totalTokens: 4 },
          metrics: { latencyMs: 100 },
        }),
      );
    }
    if (req.url !== `${PATH}/converse-stream`) return refuse(404, `no route ${req.url}`);
    res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream' });
    const parts = streamOf(n);
    const write = (i: number) => {
      if (i === parts.length) return res.end();
      res.write(parts[i], () => setImmediate(() => write(i + 1)));
    };
    write(0);
  });
  return server;
}

function client(url: string, maxRetries = 0) {
  return new Ai4ts({
    provider: bedrock({ region: 'us-east-1', credentials: { accessKeyId: ACCESS_KEY_ID, secretAccessKey: SECRET } }),
    baseURL: url.replace(/\/$/, ''),
    maxRetries,
    backoff: { initialMs: 1, maxMs: 1 },
  });
}

const request = { model: MODEL, messages: [{ role: 'user' as const, content: [{ text: 'How many r in strawberry?' }] }] };
const TEXT = 'Let me count the "r"s in "strawberry":\n\ns-t-**r**-a-w-b-e-**r**-**r**-y\n\nThere are **3** r\'s in "strawberry."';

describe('Bedrock Converse through client.converse', () => {
  it('create: /converse, signed, the model in the path and not in the body', async () => {
    const { url } = await startBedrock(() => []);
    const response = await client(url).converse.create(request);
    expect(response.output.message.content).toEqual([{ text: 'Hi' }]);
    expect(response.stopReason).toBe('end_turn');
    expect(refusals).toEqual([]);
  });

  it.each([1, 2, 3, 4, 5])('stream: the recorded text stream cut at random boundaries (seed %i) gives the same result', async (seed) => {
    const { url } = await startBedrock(() => cutRandomly(concatBytes(frames('text')), seed));
    const stream = client(url).converse.stream(request);
    const texts: string[] = [];
    const usages: unknown[] = [];
    const finishes: string[] = [];
    stream.on('content', (event) => texts.push(event.delta));
    stream.on('usage', (event) => usages.push(event.usage));
    stream.on('finish', (event) => finishes.push(event.finishReason));
    const final = await stream.final();
    expect(texts.join('')).toBe(TEXT);
    expect(final.output.message).toEqual({ role: 'assistant', content: [{ text: TEXT }] });
    expect(final.stopReason).toBe('end_turn');
    expect(final.usage).toMatchObject({ inputTokens: 22, outputTokens: 55, totalTokens: 77 });
    expect(final.additionalModelResponseFields).toEqual({ delta: { stop_sequence: null } });
    expect(usages).toEqual([{ prompt_tokens: 22, completion_tokens: 55, total_tokens: 77 }]);
    expect(finishes).toEqual(['stop']);
    expect(refusals).toEqual([]);
  });

  it('stream: every byte its own read, reasoning with its signature, then the answer', async () => {
    const bytes = concatBytes(frames('reasoning'));
    const { url } = await startBedrock(() => [...bytes].map((b) => Uint8Array.of(b)));
    const stream = client(url).converse.stream(request);
    const reasoning: string[] = [];
    stream.on('reasoning', (event) => reasoning.push(event.delta));
    const final = await stream.final();
    const [thinking, answer] = final.output.message.content;
    expect(thinking).toMatchObject({ reasoningContent: { reasoningText: { text: reasoning.join('') } } });
    expect(reasoning.join('')).toMatch(/^Let me count the r's in "strawberry":[\s\S]*So there are 3 r's\.$/);
    expect((thinking as { reasoningContent: { reasoningText: { signature: string } } }).reasoningContent.reasoningText.signature).toMatch(/^Ep0CCkgICxAB/);
    expect(answer).toEqual({ text: 'There are **3** r\'s in "strawberry":\n\n1. st**r**awbe**r****r**y' });
    expect(final.usage).toMatchObject({ inputTokens: 51, outputTokens: 94 });
  });

  it('stream: a tool call whose input streams in pieces, metadata before messageStop', async () => {
    const { url } = await startBedrock(() => cutRandomly(concatBytes(frames('tool-call.1')), 7));
    const stream = client(url).converse.stream(request);
    const deltas: string[] = [];
    const done: unknown[] = [];
    stream.on('tool_call.delta', (event) => deltas.push(event.delta));
    stream.on('tool_call.done', (event) => done.push(event));
    const final = await stream.final();
    expect(deltas).toEqual(['{"value":', '"Sparkle Day"}']);
    expect(done).toEqual([
      { type: 'tool_call.done', index: 0, id: 'tool-use-id', name: 'test-tool', arguments: '{"value":"Sparkle Day"}', choice: 0 },
    ]);
    expect(final.output.message.content).toEqual([{ toolUse: { toolUseId: 'tool-use-id', name: 'test-tool', input: { value: 'Sparkle Day' } } }]);
    expect(final.stopReason).toBe('tool_use');
  });

  it('a throttlingException before the first event is retried; the retry streams', async () => {
    const { url } = await startBedrock((n) =>
      n === 1 ? [bedrockExceptionFrame('throttlingException', 'Too many requests, please wait')] : [concatBytes(frames('text'))],
    );
    const final = await client(url, 2).converse.stream(request).final();
    expect(final.output.message.content).toEqual([{ text: TEXT }]);
    expect(server?.requests).toBe(2);
  });

  it.each(['serviceUnavailableException', 'throttlingException'])('%s on every attempt: a typed ApiError after the retries', async (code) => {
    const { url } = await startBedrock(() => [bedrockExceptionFrame(code, 'Try later')]);
    const error = await client(url, 1).converse.stream(request).final().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ code, partial: undefined });
    expect(server?.requests).toBe(2);
  });

  it.each(['modelStreamErrorException', 'validationException'])(
    'a %s after the first event is a typed error with what arrived as partial, not retried',
    async (code) => {
      const { url } = await startBedrock(() => [concatBytes(frames('text').slice(0, 4)), bedrockExceptionFrame(code, 'The model failed')]);
      const error = await client(url, 2).converse.stream(request).final().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ApiError);
      expect(error).toMatchObject({ code, message: `${code}: The model failed` });
      expect((error as ApiError).partial).toMatchObject({ output: { message: { content: [{ text: 'Let me count the "r"s in "' }] } } });
      expect(JSON.stringify(error)).not.toContain(SECRET);
      expect((error as Error).message).not.toContain(SECRET);
      expect(server?.requests).toBe(1);
    },
  );

  it('a stream cut before messageStop is a StreamIncompleteError with the text so far, never success', async () => {
    const { url } = await startBedrock(() => [concatBytes(frames('text').slice(0, 6))]);
    const error = await client(url).converse.stream(request).final().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StreamIncompleteError);
    expect(JSON.stringify((error as StreamIncompleteError).partial)).toContain('strawberry');
  });

  it('the tool loop over two steps: the call runs, its result goes back as a toolResult, the answer ends the loop', async () => {
    const { url } = await startBedrock((n) => [concatBytes(frames(n === 1 ? 'tool-call.1' : 'text'))]);
    const seen: unknown[] = [];
    const tool = defineTool({
      name: 'test-tool',
      description: 'Names a day',
      parameters: z.object({ value: z.string() }),
      execute: ({ value }) => {
        seen.push(value);
        return `saved ${value}`;
      },
    });
    const result = await client(url).converse.create({ ...request, tools: [tool], maxSteps: 3 });
    expect(seen).toEqual(['Sparkle Day']);
    expect(result.text).toBe(TEXT);
    expect(result.steps).toHaveLength(2);
    expect(refusals).toEqual([]);
    expect(bodies[0]?.toolConfig).toEqual({
      tools: [{ toolSpec: { name: 'test-tool', description: 'Names a day', inputSchema: { json: expect.objectContaining({ type: 'object' }) } } }],
    });
    expect(bodies[1]?.messages).toEqual([
      request.messages[0],
      { role: 'assistant', content: [{ toolUse: { toolUseId: 'tool-use-id', name: 'test-tool', input: { value: 'Sparkle Day' } } }] },
      { role: 'user', content: [{ toolResult: { toolUseId: 'tool-use-id', content: [{ text: 'saved Sparkle Day' }], status: 'success' } }] },
    ]);
  });

  it('a middleware sees protocol converse and the request with its model; a changed model changes the URL', async () => {
    const { url } = await startBedrock(() => [concatBytes(frames('text'))]);
    const ai = client(url);
    const seen: string[] = [];
    ai.use(async (ctx, next) => {
      if (ctx.protocol === 'converse') {
        seen.push(`${ctx.protocol} ${ctx.request.model}`);
        ctx.request = { ...ctx.request, model: MODEL };
      }
      return next();
    });
    const final = await ai.converse.stream({ ...request, model: 'an-alias' }).final();
    expect(seen).toEqual(['converse an-alias']);
    expect(final.stopReason).toBe('end_turn');
    expect(refusals).toEqual([]);
  });

  it('a structured output is refused with a clear error before anything is sent, not dropped', async () => {
    const { url } = await startBedrock(() => []);
    await expect(client(url).converse.create({ ...request, output: z.object({ n: z.number() }) })).rejects.toThrow(/structured `output`/);
    expect(server?.requests).toBe(0);
  });
});

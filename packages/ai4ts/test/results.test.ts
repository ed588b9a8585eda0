/**
 * What every result and stream tells beside the answer, on each protocol against @ai4ts/testing over real HTTP:
 * the provider's request id and the response headers (openai-node's `_request_id` / `withResponse`), and the cost
 * of each step and of the whole loop from the client's price table.
 */
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { type MockModel, type MockTurn, startMockModel } from '@ai4ts/testing';
import { Ai4ts, type Ai4tsOptions, defineTool, resultInfo } from 'ai4ts';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';

const user = { role: 'user' as const, content: 'Weather in Paris and Rome?' };
const script: MockTurn[] = [
  {
    toolCalls: [
      { name: 'get_weather', arguments: { city: 'Paris' } },
      { name: 'get_weather', arguments: { city: 'Rome' } },
    ],
    usage: { prompt_tokens: 1000, completion_tokens: 200, total_tokens: 1200 },
  },
  { content: 'Both mild.', usage: { prompt_tokens: 3000, completion_tokens: 100, total_tokens: 3100 } },
];
const getWeather = defineTool({
  name: 'get_weather',
  parameters: z.object({ city: z.string() }),
  execute: ({ city }) => `${city}: 18 °C`,
});
// Per million tokens: 1000 input tokens cost 0.002, 1000 output tokens 0.008.
const prices = { 'mock-model': { input: 2, output: 8 } };

let model: MockModel | undefined;
afterEach(async () => {
  await model?.close();
  model = undefined;
});

/** A client of the scripted model; Gemini's is the `gemini` provider at its `/v1beta` base. */
async function start(turns: MockTurn[], options: Ai4tsOptions = {}, protocol?: string): Promise<Ai4ts> {
  model = await startMockModel({ script: turns });
  const at =
    protocol === 'gemini'
      ? ({ provider: 'gemini', baseURL: model.geminiBaseURL } as const)
      : ({ provider: 'openai-compatible', baseURL: model.baseURL } as const);
  return new Ai4ts({ ...at, apiKey: 'sk-results-0123456789', maxRetries: 0, ...options });
}

const loops = {
  chat: (c: Ai4ts) => c.chat.stream({ model: 'mock-model', messages: [user], tools: [getWeather] }).final(),
  responses: (c: Ai4ts) => c.responses.create({ model: 'mock-model', input: [user], tools: [getWeather] }),
  messages: (c: Ai4ts) => c.messages.create({ model: 'mock-model', max_tokens: 99, messages: [user], tools: [getWeather] }),
  gemini: (c: Ai4ts) => c.gemini.stream({ model: 'mock-model', contents: [{ role: 'user', parts: [{ text: user.content }] }], tools: [getWeather] }).final(),
};

describe.each(Object.entries(loops))('%s', (protocol, run) => {
  it('a loop has the cost of each step and their sum; each step its request id and headers', async () => {
    const result = await run(await start(script, { prices }, protocol));
    const near = (input: number, output: number) => ({
      input: expect.closeTo(input, 12),
      output: expect.closeTo(output, 12),
      total: expect.closeTo(input + output, 12),
    });
    expect(result.steps.map((step) => step.cost)).toEqual([near(0.002, 0.0016), near(0.006, 0.0008)]);
    expect(result.cost?.input).toBeCloseTo(0.008, 12);
    expect(result.cost?.output).toBeCloseTo(0.0024, 12);
    expect(result.cost?.total).toBeCloseTo(0.0104, 12);
    const infos = result.steps.map((step) => resultInfo(step.completion));
    expect(infos.map((info) => [info?.status, info?.requestId, info?.cost])).toEqual([
      [200, 'req_1', result.steps[0]?.cost],
      [200, 'req_2', result.steps[1]?.cost],
    ]);
    const header = protocol === 'messages' ? 'request-id' : 'x-request-id';
    expect(infos[0]?.headers.get(header)).toBe('req_1');
  });

  it('the spans carry the cost: each request its own, the loop the sum', async () => {
    const exporter = new InMemorySpanExporter();
    const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer('test');
    const result = await run(await start(script, { prices, telemetry: { tracer } }, protocol));
    const costs = exporter
      .getFinishedSpans()
      .filter((span) => span.name !== 'execute_tool get_weather')
      .map((span) => [span.name, span.attributes['ai4ts.cost']]);
    expect(costs).toEqual([
      ['chat mock-model', result.steps[0]?.cost?.total],
      ['chat mock-model', result.steps[1]?.cost?.total],
      ['invoke_agent', result.cost?.total],
    ]);
  });

  it('no price for the model: no cost anywhere', async () => {
    const result = await run(await start(script, { prices: { 'other-model': { input: 1, output: 1 } } }, protocol));
    expect(result.cost).toBeUndefined();
    expect(result.steps.map((step) => step.cost)).toEqual([undefined, undefined]);
  });
});

describe('request ids on success', () => {
  it('a plain stream has its response once the headers arrived, and its final result the same id', async () => {
    const client = await start([{ content: 'Hi.', chunkDelayMs: 5 }], { prices });
    const stream = client.responses.stream({ model: 'mock-model', input: 'Hi' });
    expect(stream.response).toBeUndefined();
    await new Promise<void>((resolve) => stream.once('content', () => resolve()));
    expect(stream.response?.requestId).toBe('req_1');
    expect(stream.response?.headers.get('content-type')).toBe('text/event-stream');
    const final = await stream.final();
    expect(resultInfo(final)?.requestId).toBe('req_1');
    expect(resultInfo(final)?.cost?.total).toBeGreaterThan(0);
  });

  it('a plain create of each protocol', async () => {
    const client = await start([{ content: 'a' }, { content: 'b' }, { content: 'c' }]);
    const chat = await client.chat.create({ model: 'mock-model', messages: [user] });
    const responses = await client.responses.create({ model: 'mock-model', input: 'Hi' });
    const messages = await client.messages.create({ model: 'mock-model', max_tokens: 9, messages: [user] });
    expect([chat, responses, messages].map((result) => resultInfo(result)?.requestId)).toEqual(['req_1', 'req_2', 'req_3']);
    // The id rides beside the provider's object, not in it: the result serializes as the provider sent it.
    expect(Object.keys(chat)).not.toContain('requestId');
    expect(resultInfo({})).toBeUndefined();
  });

  it('a plain create and a plain stream of Gemini', async () => {
    const client = await start([{ content: 'a' }, { content: 'b' }], { prices }, 'gemini');
    const contents = [{ role: 'user' as const, parts: [{ text: 'Hi' }] }];
    const created = await client.gemini.create({ model: 'mock-model', contents });
    const streamed = await client.gemini.stream({ model: 'mock-model', contents }).final();
    expect([created, streamed].map((result) => resultInfo(result)?.requestId)).toEqual(['req_1', 'req_2']);
    expect([created, streamed].every((result) => (resultInfo(result)?.cost?.total ?? 0) > 0)).toBe(true);
    expect(Object.keys(created)).not.toContain('requestId');
  });

  it('response headers have the key redacted when a server echoes it', async () => {
    const client = await start([{ content: 'a' }]);
    const completion = await client.chat.create({ model: 'mock-model', messages: [user] });
    for (const [, value] of resultInfo(completion)?.headers ?? []) expect(value).not.toContain('sk-results-0123456789');
  });
});

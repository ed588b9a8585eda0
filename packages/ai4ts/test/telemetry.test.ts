/**
 * OpenTelemetry spans and metrics, against @ai4ts/testing's scripted model over real HTTP, checked with the SDK's
 * in-memory span exporter and a metric reader: the exact spans, attributes and parent links of a two-step loop
 * with two parallel tools on each protocol, a retried request (before the headers and before the first event),
 * a failed stream, and a plain call with no loop. Nothing is recorded with telemetry off.
 */
import type { Attributes } from '@opentelemetry/api';
import { type Histogram, MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { type MockModel, type MockTurn, startMockModel } from '@ai4ts/testing';
import { Ai4ts, type Ai4tsOptions, defineTool, resultInfo } from 'ai4ts';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';

class TestReader extends MetricReader {
  protected override async onShutdown(): Promise<void> {}
  protected override async onForceFlush(): Promise<void> {}
}

const CELSIUS: Record<string, number> = { Paris: 18, Zürich: 21 };
const ANSWER = 'Zürich is warmer: 21 °C against 18 °C in Paris.';
const QUESTION = 'Is it warmer in Paris or in Zürich?';
const KEY = 'sk-telemetry-secret-0123456789';

const loopScript: MockTurn[] = [
  {
    toolCalls: [
      { name: 'get_weather', arguments: { city: 'Paris' } },
      { name: 'get_weather', arguments: { city: 'Zürich' } },
    ],
    usage: { prompt_tokens: 20, completion_tokens: 10, total_tokens: 30 },
  },
  { content: ANSWER, usage: { prompt_tokens: 40, completion_tokens: 12, total_tokens: 52 } },
];

const getWeather = defineTool({
  name: 'get_weather',
  description: 'Current temperature of a city',
  parameters: z.object({ city: z.string() }),
  execute: ({ city }) => ({ city, celsius: CELSIUS[city] }),
});

let model: MockModel | undefined;
afterEach(async () => {
  await model?.close();
  model = undefined;
});

function telemetry() {
  const exporter = new InMemorySpanExporter();
  const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer('test');
  const reader = new TestReader();
  const meter = new MeterProvider({ readers: [reader] }).getMeter('test');
  return { exporter, tracer, meter, reader };
}

/** A client of the scripted model; Gemini's is the `gemini` provider at its `/v1beta` base. */
async function start(script: MockTurn[], options: Ai4tsOptions = {}, protocol?: string): Promise<Ai4ts> {
  model = await startMockModel({ script, seed: 3 });
  if (protocol === 'gemini') return new Ai4ts({ provider: 'gemini', baseURL: model.geminiBaseURL, apiKey: KEY, maxRetries: 0, ...options });
  return new Ai4ts({ provider: 'openai-compatible', baseURL: model.baseURL, apiKey: KEY, maxRetries: 0, ...options });
}

const user = { role: 'user' as const, content: QUESTION };

/** The same loop on each protocol, with create or stream. */
const loops = {
  chat: (c: Ai4ts, stream: boolean) => {
    const request = { model: 'mock-model', messages: [user], tools: [getWeather], temperature: 0.2 };
    return stream ? c.chat.stream(request).final() : c.chat.create(request);
  },
  responses: (c: Ai4ts, stream: boolean) => {
    const request = { model: 'mock-model', input: [user], tools: [getWeather], temperature: 0.2 };
    return stream ? c.responses.stream(request).final() : c.responses.create(request);
  },
  messages: (c: Ai4ts, stream: boolean) => {
    const request = { model: 'mock-model', max_tokens: 256, messages: [user], tools: [getWeather], temperature: 0.2 };
    return stream ? c.messages.stream(request).final() : c.messages.create(request);
  },
  gemini: (c: Ai4ts, stream: boolean) => {
    const contents = [{ role: 'user' as const, parts: [{ text: QUESTION }] }];
    const request = { model: 'mock-model', contents, tools: [getWeather], generationConfig: { temperature: 0.2 } };
    return stream ? c.gemini.stream(request).final() : c.gemini.create(request);
  },
};

function byName(spans: ReadableSpan[], name: string): ReadableSpan[] {
  return spans.filter((span) => span.name === name);
}

function parentOf(span: ReadableSpan): string | undefined {
  return span.parentSpanContext?.spanId;
}

async function histogram(reader: MetricReader, name: string): Promise<{ attributes: Attributes; value: Histogram }[]> {
  const { resourceMetrics } = await reader.collect();
  const metric = resourceMetrics.scopeMetrics
    .flatMap((scope) => scope.metrics)
    .find((candidate) => candidate.descriptor.name === name);
  return (metric?.dataPoints ?? []).map((point) => ({
    attributes: point.attributes,
    value: point.value as Histogram,
  }));
}

describe.each(Object.entries(loops))('telemetry of a two-step loop with two parallel tools: %s', (protocol, run) => {
  it.each([false, true])('stream: %s', async (stream) => {
    const otel = telemetry();
    const client = await start(loopScript, { telemetry: { tracer: otel.tracer, meter: otel.meter } }, protocol);
    const provider = protocol === 'gemini' ? 'gemini' : 'openai-compatible';
    let events = 0;
    client.use(async (ctx, next) => {
      ctx.onEvent(() => events++);
      return next();
    });
    const result = await run(client, stream);
    // In the order they ended: the first request, its two tools, the answer, the loop.
    const spans = otel.exporter.getFinishedSpans();
    expect(spans.map((span) => span.name)).toEqual([
      'chat mock-model',
      'execute_tool get_weather',
      'execute_tool get_weather',
      'chat mock-model',
      'invoke_agent',
    ]);
    // Responses and Messages report cached input tokens (0 here); Chat Completions and Gemini only when the provider does.
    const cached = (tokens: number) => (protocol === 'chat' || protocol === 'gemini' ? {} : { 'gen_ai.usage.cache_read.input_tokens': tokens });

    const [loop] = byName(spans, 'invoke_agent');
    if (!loop) throw new Error('no loop span');
    const loopId = loop.spanContext().spanId;
    expect(parentOf(loop)).toBeUndefined();
    expect(loop.attributes).toEqual({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.provider.name': provider,
      'server.address': '127.0.0.1',
      'server.port': Number(new URL(model?.baseURL ?? '').port),
      'gen_ai.request.model': 'mock-model',
      'gen_ai.usage.input_tokens': 60,
      'gen_ai.usage.output_tokens': 22,
      ...cached(0),
      'ai4ts.loop.steps': 2,
      'gen_ai.response.finish_reasons': ['stop'],
    });

    // Every request span is a CLIENT child of the loop's, in step order, with the step's answer.
    const requests = byName(spans, 'chat mock-model');
    expect(requests).toHaveLength(2);
    for (const [index, span] of requests.entries()) {
      const step = result.steps[index];
      if (!step) throw new Error('missing step');
      expect(parentOf(span)).toBe(loopId);
      expect(span.kind).toBe(2); // SpanKind.CLIENT
      expect(span.status.code).toBe(0); // UNSET
      const { 'gen_ai.response.time_to_first_chunk': firstChunk, ...attributes } = span.attributes;
      expect(typeof firstChunk).toBe('number');
      expect(attributes).toEqual({
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': provider,
        'server.address': '127.0.0.1',
        'server.port': Number(new URL(model?.baseURL ?? '').port),
        'ai4ts.protocol': protocol,
        'gen_ai.request.model': 'mock-model',
        'gen_ai.request.temperature': 0.2,
        ...(protocol === 'messages' && { 'gen_ai.request.max_tokens': 256 }),
        'http.response.status_code': 200,
        'ai4ts.request_id': `req_${index + 1}`,
        'gen_ai.response.id': idOf(step.completion),
        'gen_ai.response.model': 'mock-model',
        'gen_ai.response.finish_reasons': [step.finishReason],
        'gen_ai.usage.input_tokens': index === 0 ? 20 : 40,
        'gen_ai.usage.output_tokens': index === 0 ? 10 : 12,
        ...cached(0),
      });
      // No content by default: neither the question nor the answer, nor the key.
      expect(JSON.stringify(span.attributes)).not.toContain('Zürich');
      expect(JSON.stringify(span.attributes)).not.toContain(KEY);
    }

    // Both tools ran in parallel as children of the loop, with the calls' ids, after the first request.
    const tools = byName(spans, 'execute_tool get_weather');
    const calls = result.steps[0]?.toolCalls ?? [];
    expect(tools.map((span) => span.attributes['gen_ai.tool.call.id']).sort()).toEqual(calls.map((c) => c.id).sort());
    for (const span of tools) {
      expect(parentOf(span)).toBe(loopId);
      expect(span.kind).toBe(0); // SpanKind.INTERNAL
      expect(span.attributes).toEqual({
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': 'get_weather',
        'gen_ai.tool.call.id': span.attributes['gen_ai.tool.call.id'],
        'gen_ai.tool.type': 'function',
        'ai4ts.tool.outcome': 'ok',
      });
    }

    // Metrics: one duration per request, input and output token counts per request.
    const durations = await histogram(otel.reader, 'gen_ai.client.operation.duration');
    expect(durations).toHaveLength(1);
    expect(durations[0]?.attributes).toEqual({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': provider,
      'server.address': '127.0.0.1',
      'server.port': Number(new URL(model?.baseURL ?? '').port),
      'gen_ai.request.model': 'mock-model',
      'gen_ai.response.model': 'mock-model',
    });
    expect(durations[0]?.value.count).toBe(2);
    const tokens = await histogram(otel.reader, 'gen_ai.client.token.usage');
    const sums = Object.fromEntries(tokens.map((point) => [point.attributes['gen_ai.token.type'], point.value.sum]));
    expect(sums).toEqual({ input: 60, output: 22 });
    const firstChunks = await histogram(otel.reader, 'gen_ai.client.operation.time_to_first_chunk');
    expect(firstChunks[0]?.value.count).toBe(2);
    // One time per chunk after the first of each request: as many as the events both requests streamed, less two.
    const gaps = await histogram(otel.reader, 'gen_ai.client.operation.time_per_output_chunk');
    expect(gaps.map((point) => point.attributes)).toEqual([durations[0]?.attributes]);
    expect(gaps[0]?.value.count).toBe(events - 2);
    // The two tool runs and the loop, as the conventions' agent and tool metrics.
    const toolRuns = await histogram(otel.reader, 'gen_ai.execute_tool.duration');
    expect(toolRuns.map((point) => [point.attributes, point.value.count])).toEqual([[{ 'gen_ai.tool.name': 'get_weather' }, 2]]);
    const agents = await histogram(otel.reader, 'gen_ai.invoke_agent.duration');
    expect(agents.map((point) => [point.attributes, point.value.count])).toEqual([[{ 'gen_ai.request.model': 'mock-model' }, 1]]);
    expect(agents[0]?.value.sum).toBeGreaterThan(0);
  });
});

/** The provider's id of a completion: `id`, Gemini's `responseId`. */
function idOf(completion: unknown): unknown {
  if (typeof completion !== 'object' || completion === null) return undefined;
  if ('id' in completion) return completion.id;
  return 'responseId' in completion ? completion.responseId : undefined;
}

describe('telemetry of single requests', () => {
  it('a plain create: one CLIENT span with no parent, request parameters, the answer; content only when opted in', async () => {
    const otel = telemetry();
    const client = await start([{ content: 'Hi there.', usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 } }], {
      telemetry: { tracer: otel.tracer, meter: otel.meter },
    });
    const completion = await client.chat.create({
      model: 'mock-model',
      messages: [{ role: 'system', content: 'Be brief.' }, user],
      max_tokens: 64,
      top_p: 0.9,
      stop: ['\n\n'],
      seed: 7,
      telemetry: { recordContent: true },
    });
    const [span, ...others] = otel.exporter.getFinishedSpans();
    expect(others).toEqual([]);
    expect(span?.name).toBe('chat mock-model');
    expect(parentOf(span as ReadableSpan)).toBeUndefined();
    expect(span?.attributes).toMatchObject({
      'gen_ai.request.max_tokens': 64,
      'gen_ai.request.top_p': 0.9,
      'gen_ai.request.stop_sequences': ['\n\n'],
      'gen_ai.request.seed': 7,
      'gen_ai.response.id': completion.id,
      'gen_ai.response.finish_reasons': ['stop'],
      'gen_ai.usage.input_tokens': 5,
      'gen_ai.usage.output_tokens': 3,
      'gen_ai.input.messages': JSON.stringify([{ role: 'system', content: 'Be brief.' }, user]),
      'gen_ai.output.messages': JSON.stringify(completion.choices.map((choice) => choice.message)),
    });
    // A plain request is not streamed: no time to the first chunk.
    expect(span?.attributes['gen_ai.response.time_to_first_chunk']).toBeUndefined();
    // The request's telemetry field configured the SDK and never reached the wire.
    expect(model?.requests[0]?.body).not.toHaveProperty('telemetry');
    expect(JSON.stringify(span?.attributes)).not.toContain(KEY);
  });

  it('a plain Gemini create: the parameters of its generationConfig, its contents and system instruction when opted in', async () => {
    const otel = telemetry();
    const client = await start(
      [{ content: 'Hi there.', usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 } }],
      { telemetry: { tracer: otel.tracer, meter: otel.meter } },
      'gemini',
    );
    const contents = [{ role: 'user' as const, parts: [{ text: QUESTION }] }];
    const systemInstruction = { parts: [{ text: 'Be brief.' }] };
    const response = await client.gemini.create({
      model: 'mock-model',
      contents,
      systemInstruction,
      generationConfig: { maxOutputTokens: 64, temperature: 0.5, topP: 0.9, topK: 40, seed: 7, stopSequences: ['\n\n'], candidateCount: 2 },
      telemetry: { recordContent: true },
    });
    const [span, ...others] = otel.exporter.getFinishedSpans();
    expect(others).toEqual([]);
    expect(span?.attributes).toMatchObject({
      'gen_ai.provider.name': 'gemini',
      'ai4ts.protocol': 'gemini',
      'gen_ai.request.model': 'mock-model',
      'gen_ai.request.max_tokens': 64,
      'gen_ai.request.temperature': 0.5,
      'gen_ai.request.top_p': 0.9,
      'gen_ai.request.top_k': 40,
      'gen_ai.request.seed': 7,
      'gen_ai.request.stop_sequences': ['\n\n'],
      'gen_ai.request.choice.count': 2,
      'gen_ai.response.id': response.responseId,
      'gen_ai.response.finish_reasons': ['stop'],
      'gen_ai.input.messages': JSON.stringify(contents),
      'gen_ai.system_instructions': JSON.stringify(systemInstruction),
      'gen_ai.output.messages': JSON.stringify(response.candidates?.map((candidate) => candidate.content)),
    });
    expect(JSON.stringify(span?.attributes)).not.toContain(KEY);
  });

  it('retries are events of the one request span: a 503 before the headers, a stream cut before its first event', async () => {
    const otel = telemetry();
    const client = await start(
      [{ httpError: { status: 503 } }, { content: 'x', cutOff: { afterChunks: 0 } }, { content: 'Recovered.' }],
      { telemetry: { tracer: otel.tracer, meter: otel.meter }, maxRetries: 2, backoff: { initialMs: 1, maxMs: 2 } },
    );
    const stream = client.chat.stream({ model: 'mock-model', messages: [user] });
    const completion = await stream.final();
    expect(completion.choices[0]?.message.content).toBe('Recovered.');
    const [span, ...others] = otel.exporter.getFinishedSpans();
    expect(others).toEqual([]);
    expect(span?.status.code).toBe(0);
    expect(span?.events.map((event) => [event.name, event.attributes?.['ai4ts.retry.phase'], event.attributes?.['error.type']])).toEqual([
      ['ai4ts.retry', 'headers', '503'],
      ['ai4ts.retry', 'stream', 'StreamIncompleteError'],
    ]);
    expect(span?.attributes['ai4ts.request_id']).toBe('req_3');
    expect(stream.response?.requestId).toBe('req_3');
  });

  it('a failed stream: status ERROR, error.type, the exception recorded (no provider text without recordContent), the duration metric with error.type', async () => {
    const otel = telemetry();
    const client = await start([{ content: 'Half an ans', streamError: { message: 'The model is overloaded', type: 'overloaded' } }], {
      telemetry: { tracer: otel.tracer, meter: otel.meter },
    });
    await expect(client.messages.stream({ model: 'mock-model', max_tokens: 64, messages: [user] }).final()).rejects.toThrow(
      'The model is overloaded',
    );
    const [span] = otel.exporter.getFinishedSpans();
    expect(span?.name).toBe('chat mock-model');
    expect(span?.status).toEqual({ code: 2, message: 'in-stream error, code overloaded' });
    expect(span?.attributes['error.type']).toBe('ApiError');
    expect(span?.events.map((event) => event.name)).toEqual(['exception']);
    expect(span?.attributes['gen_ai.response.id']).toBeUndefined();
    const durations = await histogram(otel.reader, 'gen_ai.client.operation.duration');
    expect(durations.map((point) => point.attributes['error.type'])).toEqual(['ApiError']);
  });

  it('a loop whose tool throws: the tool span has outcome error and status ERROR; the loop still answers', async () => {
    const otel = telemetry();
    const failing = defineTool({
      name: 'get_weather',
      parameters: z.object({ city: z.string() }),
      execute: () => {
        throw new Error('station offline');
      },
    });
    const client = await start(loopScript, { telemetry: { tracer: otel.tracer, meter: otel.meter, recordContent: true } });
    await client.chat.create({ model: 'mock-model', messages: [user], tools: [failing] });
    const tools = byName(otel.exporter.getFinishedSpans(), 'execute_tool get_weather');
    expect(tools).toHaveLength(2);
    for (const span of tools) {
      expect(span.attributes['ai4ts.tool.outcome']).toBe('error');
      expect(span.attributes['error.type']).toBe('ToolError');
      expect(span.status.code).toBe(2);
      expect(span.attributes['gen_ai.tool.call.arguments']).toMatch(/^\{"city":/);
      expect(span.attributes['gen_ai.tool.call.result']).toContain('station offline');
    }
    const runs = await histogram(otel.reader, 'gen_ai.execute_tool.duration');
    expect(runs.map((point) => [point.attributes, point.value.count])).toEqual([
      [{ 'gen_ai.tool.name': 'get_weather', 'error.type': 'ToolError' }, 2],
    ]);
  });

  it('the parent option puts the spans under a given context (what a server passes for an inbound request)', async () => {
    const otel = telemetry();
    const { context, trace } = await import('@opentelemetry/api');
    const inbound = otel.tracer.startSpan('POST /v1/chat/completions');
    const client = await start([{ content: 'Hi.' }], { telemetry: { tracer: otel.tracer, meter: otel.meter } });
    await client.chat.create(
      { model: 'mock-model', messages: [user] },
      { telemetry: { parent: trace.setSpan(context.active(), inbound) } },
    );
    inbound.end();
    const [request] = byName(otel.exporter.getFinishedSpans(), 'chat mock-model');
    expect(parentOf(request as ReadableSpan)).toBe(inbound.spanContext().spanId);
    expect(request?.spanContext().traceId).toBe(inbound.spanContext().traceId);
  });

  it('telemetry off: no span and no metric, but request ids still on every result', async () => {
    const otel = telemetry();
    const client = await start(loopScript);
    const result = await client.chat.create({ model: 'mock-model', messages: [user], tools: [getWeather] });
    expect(otel.exporter.getFinishedSpans()).toEqual([]);
    expect(result.steps.map((step) => resultInfo(step.completion)?.requestId)).toEqual(['req_1', 'req_2']);
  });
});

describe('what spans and the warn log never carry', () => {
  const ARGUMENT = 'TOOLARG-Paris-private';
  const USER_TEXT = 'USERTEXT-my-private-question';

  /** Everything a span exports as text: name, attributes, events and their attributes, status. */
  const exported = (spans: readonly ReadableSpan[]) =>
    JSON.stringify(
      spans.map((span) => [span.name, span.attributes, span.events.map((e) => [e.name, e.attributes]), span.status]),
    );

  const leaky = defineTool({
    name: 'look',
    description: 'Looks a city up',
    parameters: z.object({ city: z.string() }),
    execute: ({ city }) => {
      throw new Error(`lookup failed for ${city} with ${KEY}`);
    },
  });
  const leakyScript: MockTurn[] = [
    { toolCalls: [{ name: 'look', arguments: { city: ARGUMENT } }] },
    { content: 'Sorry.' },
  ];

  it('a tool that throws its arguments and the key: the exception event has its class and a generic message', async () => {
    const otel = telemetry();
    const client = await start(leakyScript, { telemetry: { tracer: otel.tracer, meter: otel.meter } });
    await client.chat.create({ model: 'mock-model', messages: [user], tools: [leaky] });
    const spans = otel.exporter.getFinishedSpans();
    const [tool] = byName(spans, 'execute_tool look');
    const exception = tool?.events.find((event) => event.name === 'exception');
    expect(exception?.attributes?.['exception.type']).toBe('ToolError');
    expect(exception?.attributes?.['exception.message']).toBe('Tool "look" failed');
    expect(tool?.status).toEqual({ code: 2, message: 'Tool "look" failed' });
    expect(exported(spans)).not.toContain(KEY);
    expect(exported(spans)).not.toContain(ARGUMENT);
  });

  it('with recordContent the arguments and the message are recorded, the key still redacted everywhere', async () => {
    const otel = telemetry();
    const client = await start(leakyScript, { telemetry: { tracer: otel.tracer, meter: otel.meter, recordContent: true } });
    await client.chat.create({ model: 'mock-model', messages: [user], tools: [leaky] });
    const spans = otel.exporter.getFinishedSpans();
    const [tool] = byName(spans, 'execute_tool look');
    const exception = tool?.events.find((event) => event.name === 'exception');
    expect(exception?.attributes?.['exception.message']).toBe(`Tool "look" failed: lookup failed for ${ARGUMENT} with [redacted]`);
    expect(String(exception?.attributes?.['exception.stacktrace'])).not.toContain(KEY);
    expect(exported(spans)).toContain(ARGUMENT);
    expect(exported(spans)).not.toContain(KEY);
  });

  it('an upstream 401 echoing user text and the key: neither reaches the span nor the warn log', async () => {
    const otel = telemetry();
    const lines: unknown[] = [];
    const logger = { debug: () => {}, info: () => {}, warn: (...args: unknown[]) => lines.push(args), error: () => {} };
    const body = { error: { message: `Invalid key ${KEY} for "${USER_TEXT}"`, type: 'invalid_request_error', code: 'invalid_api_key' } };
    const client = await start([{ httpError: { status: 401, body } }], {
      telemetry: { tracer: otel.tracer, meter: otel.meter },
      logger,
      logLevel: 'warn',
    });
    const error = await client.chat.create({ model: 'mock-model', messages: [user] }).catch((thrown: unknown) => thrown);
    expect(error).toMatchObject({ name: 'AuthenticationError', status: 401 });
    const [span] = otel.exporter.getFinishedSpans();
    const exception = span?.events.find((event) => event.name === 'exception');
    expect(exception?.attributes?.['exception.type']).toBe('AuthenticationError');
    expect(exception?.attributes?.['exception.message']).toBe('HTTP 401, code invalid_api_key');
    for (const text of [exported(otel.exporter.getFinishedSpans()), JSON.stringify(lines)]) {
      expect(text).not.toContain(KEY);
      expect(text).not.toContain(USER_TEXT);
    }
    expect(JSON.stringify(lines)).toContain('AuthenticationError: HTTP 401, code invalid_api_key');
  });
});

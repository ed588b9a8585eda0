/**
 * The gateway's spans, checked with the OpenTelemetry SDK's in-memory exporter: a SERVER span per request under the
 * caller's W3C `traceparent`, and the upstream call's `chat {model}` span under it, for a provider of each protocol
 * and for a daemon, streamed and not; an upstream's failure recorded with its type; no key, and no content by default.
 */
import { type AccessLogEntry, type GatewayOptions, type ListeningGateway, listenGateway } from '@ai4ts/gateway';
import { type MockModel, type MockTurn, startMockModel } from '@ai4ts/testing';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { type Histogram, MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { sendSse } from '@ai4ts/test-kit';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { TYPED_ANSWER } from '../../bridge/test/helpers.js';
import { startDaemon } from './helpers.js';

class TestReader extends MetricReader {
  protected override async onShutdown(): Promise<void> {}
  protected override async onForceFlush(): Promise<void> {}
}

const UPSTREAM_KEY = 'sk-upstream-secret-0123456789';
const GATEWAY_KEY = 'sk-gateway-secret-9876543210';
const QUESTION = 'What is the capital of France?';
const ANSWER = 'Paris is the capital of France.';
const TRACE_ID = '0af7651916cd43dd8448eb211c80319c';
const CALLER_SPAN = 'b7ad6b7169203331';
const TRACEPARENT = `00-${TRACE_ID}-${CALLER_SPAN}-01`;

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const server of open.splice(0).reverse()) await server.close();
});

function otel() {
  const exporter = new InMemorySpanExporter();
  const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer('test');
  const reader = new TestReader();
  const meter = new MeterProvider({ readers: [reader] }).getMeter('test');
  return { exporter, reader, telemetry: { tracer, meter, propagator: new W3CTraceContextPropagator() } };
}

async function gateway(options: GatewayOptions): Promise<ListeningGateway> {
  const proxy = await listenGateway({ auth: GATEWAY_KEY, ...options });
  open.push(proxy);
  return proxy;
}

async function mockModel(script: MockTurn[]): Promise<MockModel> {
  const model = await startMockModel({ script, seed: 5 });
  open.push(model);
  return model;
}

type Protocol = 'chat' | 'responses' | 'messages';

const PATHS: Record<Protocol, string> = { chat: '/v1/chat/completions', responses: '/v1/responses', messages: '/v1/messages' };

/** How each protocol's stream says it is complete. */
const TERMINAL: Record<Protocol, string> = { chat: 'data: [DONE]', responses: 'response.completed', messages: 'message_stop' };

function bodyOf(protocol: Protocol, model: string, stream: boolean): Record<string, unknown> {
  if (protocol === 'responses') return { model, stream, input: QUESTION };
  const messages = [{ role: 'user', content: QUESTION }];
  return protocol === 'messages' ? { model, stream, max_tokens: 256, messages } : { model, stream, messages };
}

/** A request to the gateway, as a caller in a trace sends it; the whole answer read. */
async function ask(proxy: ListeningGateway, protocol: Protocol, stream: boolean, model = 'mock-model') {
  const response = await fetch(`${proxy.url}${PATHS[protocol]}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${GATEWAY_KEY}`,
      'content-type': 'application/json',
      traceparent: TRACEPARENT,
      'x-request-id': 'req-caller-1',
      'user-agent': 'telemetry-test',
    },
    body: JSON.stringify(bodyOf(protocol, model, stream)),
  });
  return { status: response.status, text: await response.text(), streamId: response.headers.get('x-ai4ts-stream-id') };
}

function parentOf(span: ReadableSpan): string | undefined {
  return span.parentSpanContext?.spanId;
}

/** Everything a span holds that could leak: its attributes, events and status, as one string. */
function dump(spans: ReadableSpan[]): string {
  return JSON.stringify(spans.map((span) => [span.name, span.attributes, span.events, span.status]));
}

/** The two spans of one request, checked for their kinds, their trace and their parents: the caller's, then the server's. */
function requestSpans(spans: ReadableSpan[]): { upstream: ReadableSpan; server: ReadableSpan } {
  // In the order they ended: the upstream call when its answer is read, the request when its reply is out.
  const [upstream, server] = spans;
  expect(spans).toHaveLength(2);
  if (!upstream || !server) throw new Error('two spans expected');
  expect(server.kind).toBe(SpanKind.SERVER);
  expect(upstream.kind).toBe(SpanKind.CLIENT);
  expect(server.spanContext().traceId).toBe(TRACE_ID);
  expect(parentOf(server)).toBe(CALLER_SPAN);
  expect(upstream.spanContext().traceId).toBe(TRACE_ID);
  expect(parentOf(upstream)).toBe(server.spanContext().spanId);
  const text = dump(spans);
  expect(text).not.toContain(UPSTREAM_KEY);
  expect(text).not.toContain(GATEWAY_KEY);
  expect(text).not.toContain('capital');
  return { upstream, server };
}

/** Each provider upstream, asked in another protocol than its own: the gateway translates. */
const INBOUND: Record<Protocol, Protocol> = { chat: 'responses', responses: 'messages', messages: 'chat' };

describe.each(['chat', 'responses', 'messages'] as const)('a gateway in front of a %s provider', (protocol) => {
  it.each([false, true])('stream: %s', async (stream) => {
    const { exporter, telemetry } = otel();
    const model = await mockModel([{ content: ANSWER, usage: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 } }]);
    const proxy = await gateway({ upstream: model.baseURL, upstreamProtocol: protocol, upstreamToken: UPSTREAM_KEY, telemetry });
    const inbound = INBOUND[protocol];
    const answer = await ask(proxy, inbound, stream);
    expect(answer.status).toBe(200);
    expect(answer.text).toContain(stream ? TERMINAL[inbound] : ANSWER);

    const { upstream, server } = requestSpans(exporter.getFinishedSpans());
    const port = Number(new URL(model.baseURL).port);
    expect(upstream.name).toBe('chat mock-model');
    expect(upstream.status).toEqual({ code: SpanStatusCode.UNSET });
    expect(upstream.attributes).toEqual({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': protocol === 'messages' ? 'anthropic' : 'openai',
      'server.address': '127.0.0.1',
      'server.port': port,
      'ai4ts.protocol': protocol,
      'gen_ai.request.model': 'mock-model',
      // The Messages request the client sent said 256; the Chat one said nothing, and Messages needs a number.
      ...(inbound === 'messages' || protocol === 'messages' ? { 'gen_ai.request.max_tokens': inbound === 'messages' ? 256 : 4096 } : {}),
      'http.response.status_code': 200,
      'ai4ts.request_id': 'req_1',
      'gen_ai.response.time_to_first_chunk': expect.any(Number),
      'gen_ai.response.id': { chat: 'chatcmpl-mock-1', responses: 'resp_mock_1', messages: 'msg_mock_1' }[protocol],
      'gen_ai.response.model': 'mock-model',
      'gen_ai.response.finish_reasons': ['stop'],
      'gen_ai.usage.input_tokens': 12,
      'gen_ai.usage.output_tokens': 7,
      ...(protocol === 'chat' ? {} : { 'gen_ai.usage.cache_read.input_tokens': 0 }),
    });
    expect(server.name).toBe(`POST ${PATHS[inbound]}`);
    expect(server.status).toEqual({ code: SpanStatusCode.UNSET });
    expect(server.attributes).toEqual({
      'http.request.method': 'POST',
      'url.path': PATHS[inbound],
      'url.scheme': 'http',
      'http.route': PATHS[inbound],
      'user_agent.original': 'telemetry-test',
      'http.response.status_code': 200,
      'ai4ts.request_id': 'req-caller-1',
      'ai4ts.gateway.protocol': inbound,
      'gen_ai.request.model': 'mock-model',
      'ai4ts.gateway.upstream': `${protocol}@127.0.0.1:${port}`,
      'ai4ts.gateway.attempts': 1,
      'ai4ts.gateway.stream': stream,
      ...(stream ? { 'ai4ts.gateway.stream_id': answer.streamId } : {}),
    });
  });
});

describe('a Gemini client', () => {
  it('its key as key= is on no span; the route names {model}; a Gemini upstream is reported as gemini', async () => {
    const { exporter, telemetry } = otel();
    const model = await mockModel([{ content: ANSWER, usage: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 } }]);
    const proxy = await gateway({ upstream: model.geminiBaseURL, upstreamProtocol: 'gemini', upstreamToken: UPSTREAM_KEY, telemetry });
    const path = '/v1beta/models/mock-model:streamGenerateContent';
    const response = await fetch(`${proxy.url}${path}?alt=sse&key=${GATEWAY_KEY}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'telemetry-test', traceparent: TRACEPARENT },
      body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: QUESTION }] }] }),
    });
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('"finishReason":"STOP"');
    const { upstream, server } = requestSpans(exporter.getFinishedSpans());
    expect(server.attributes).toMatchObject({
      'url.path': path,
      'http.route': '/v1beta/models/{model}:streamGenerateContent',
      'ai4ts.gateway.protocol': 'gemini',
    });
    expect(upstream.attributes).toMatchObject({ 'gen_ai.provider.name': 'gemini', 'ai4ts.protocol': 'gemini', 'gen_ai.usage.input_tokens': 12 });
    const spans = JSON.stringify(exporter.getFinishedSpans().map((span) => [span.name, span.attributes, span.events]));
    expect(spans).not.toContain(GATEWAY_KEY);
    expect(spans).not.toContain(UPSTREAM_KEY);
  });
});

describe('a gateway in front of a daemon', () => {
  it.each([false, true])('stream: %s — the daemon call is a span of the same shape, its usage and finish from its events', async (stream) => {
    const { exporter, telemetry } = otel();
    const daemon = await startDaemon((res) => sendSse(res, TYPED_ANSWER));
    open.push(daemon);
    const proxy = await gateway({ upstream: daemon.url, dialect: 'typed', upstreamToken: UPSTREAM_KEY, telemetry });
    const answer = await ask(proxy, 'messages', stream, 'daemon');
    expect(answer.status).toBe(200);
    expect(daemon.requests[0]?.headers.authorization).toBe(`Bearer ${UPSTREAM_KEY}`);

    const { upstream, server } = requestSpans(exporter.getFinishedSpans());
    const port = Number(new URL(daemon.url).port);
    expect(upstream.name).toBe('chat daemon');
    expect(upstream.attributes).toEqual({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'typed',
      'server.address': '127.0.0.1',
      'server.port': port,
      'ai4ts.protocol': 'daemon',
      'gen_ai.request.model': 'daemon',
      'http.response.status_code': 200,
      'gen_ai.response.time_to_first_chunk': expect.any(Number),
      'gen_ai.response.finish_reasons': ['stop'],
      // Two rounds of 10 + 5 and 20 + 7 tokens, summed.
      'gen_ai.usage.input_tokens': 30,
      'gen_ai.usage.output_tokens': 12,
    });
    expect(server.name).toBe('POST /v1/messages');
    expect(server.attributes).toMatchObject({
      'http.response.status_code': 200,
      'ai4ts.gateway.protocol': 'messages',
      'ai4ts.gateway.upstream': `typed@127.0.0.1:${port}`,
    });
  });
});

describe('failures', () => {
  it('an upstream 429 is recorded on the upstream span with its type; the server span keeps a 4xx the client’s', async () => {
    const { exporter, telemetry } = otel();
    const model = await mockModel([{ httpError: { status: 429 } }]);
    // One attempt: a retried 429 would meet a script with no second answer.
    const upstreamRetry = { maxRetries: 0 };
    const proxy = await gateway({ upstream: model.baseURL, upstreamProtocol: 'messages', upstreamToken: UPSTREAM_KEY, telemetry, upstreamRetry });
    const answer = await ask(proxy, 'chat', false);
    expect(answer.status).toBe(429);

    const { upstream, server } = requestSpans(exporter.getFinishedSpans());
    expect(upstream.status.code).toBe(SpanStatusCode.ERROR);
    expect(upstream.attributes).toMatchObject({ 'error.type': 'RateLimitError', 'http.response.status_code': 429 });
    expect(upstream.events.map((event) => event.name)).toEqual(['exception']);
    expect(server.status).toEqual({ code: SpanStatusCode.UNSET });
    expect(server.attributes['http.response.status_code']).toBe(429);
    expect(server.attributes['error.type']).toBeUndefined();
  });

  it('an upstream 401 that echoes the upstream key: the key is on no span, even with recordContent', async () => {
    const { exporter, telemetry } = otel();
    const echo = { error: { type: 'authentication_error', message: `invalid x-api-key ${UPSTREAM_KEY}` } };
    const model = await mockModel([{ httpError: { status: 401, body: echo } }]);
    const proxy = await gateway({
      upstream: model.baseURL,
      upstreamProtocol: 'messages',
      upstreamToken: UPSTREAM_KEY,
      telemetry: { ...telemetry, recordContent: true },
      upstreamRetry: { maxRetries: 0 },
    });
    const answer = await ask(proxy, 'chat', false);
    expect(answer.status).toBeGreaterThanOrEqual(400);

    const spans = exporter.getFinishedSpans();
    const upstream = spans.find((span) => span.kind === SpanKind.CLIENT);
    expect(upstream?.events.map((event) => event.name)).toEqual(['exception']);
    expect(dump(spans)).toContain('invalid x-api-key');
    expect(dump(spans)).not.toContain(UPSTREAM_KEY);
  });

  it('an upstream 500 fails both spans: the gateway answers 502', async () => {
    const { exporter, telemetry } = otel();
    const model = await mockModel([{ httpError: { status: 500 } }]);
    const proxy = await gateway({ upstream: model.baseURL, upstreamProtocol: 'chat', upstreamToken: UPSTREAM_KEY, telemetry });
    const answer = await ask(proxy, 'responses', true);
    expect(answer.status).toBe(502);

    const { upstream, server } = requestSpans(exporter.getFinishedSpans());
    expect(upstream.status.code).toBe(SpanStatusCode.ERROR);
    expect(upstream.attributes['error.type']).toBe('ServerError');
    expect(server.status.code).toBe(SpanStatusCode.ERROR);
    // The upstream's own error code is kept beside the status.
    expect(server.attributes).toMatchObject({ 'http.response.status_code': 502, 'error.type': '502', 'ai4ts.error.code': expect.any(String) });
  });

  it('an error in the middle of a stream fails the upstream span and the server span; the log names it', async () => {
    const { exporter, telemetry } = otel();
    const model = await mockModel([
      { content: ANSWER, streamError: { message: 'The model is overloaded', type: 'overloaded_error' } },
    ]);
    const log: AccessLogEntry[] = [];
    const proxy = await gateway({
      upstream: model.baseURL,
      upstreamProtocol: 'messages',
      upstreamToken: UPSTREAM_KEY,
      telemetry,
      log: (entry) => log.push(entry),
    });
    const answer = await ask(proxy, 'chat', true);
    expect(answer.status).toBe(200);
    expect(answer.text).toContain('overloaded');

    const { upstream, server } = requestSpans(exporter.getFinishedSpans());
    expect(upstream.status).toMatchObject({ code: SpanStatusCode.ERROR, message: expect.stringContaining('overloaded') });
    expect(upstream.attributes).toMatchObject({ 'error.type': 'ApiError', 'ai4ts.error.code': 'overloaded_error' });
    expect(upstream.attributes['gen_ai.response.time_to_first_chunk']).toEqual(expect.any(Number));
    // The reply had begun (200), and it failed: the server span says so, as the access log does.
    expect(server.status).toEqual({ code: SpanStatusCode.ERROR, message: 'overloaded_error' });
    expect(server.attributes).toMatchObject({ 'http.response.status_code': 200, 'error.type': 'overloaded_error' });
    expect(log).toEqual([expect.objectContaining({ status: 200, error: 'overloaded_error' })]);
  });

  it('a client that leaves mid-stream ends the upstream span as aborted', async () => {
    const { exporter, telemetry } = otel();
    const model = await mockModel([{ content: ANSWER.repeat(20), chunkDelayMs: 20 }]);
    const proxy = await gateway({ upstream: model.baseURL, upstreamProtocol: 'chat', upstreamToken: UPSTREAM_KEY, telemetry });
    const response = await fetch(`${proxy.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${GATEWAY_KEY}`, 'content-type': 'application/json', traceparent: TRACEPARENT },
      body: JSON.stringify(bodyOf('chat', 'mock-model', true)),
    });
    const reader = response.body?.getReader();
    expect((await reader?.read())?.done).toBe(false);
    await reader?.cancel();
    await vi.waitFor(() => expect(exporter.getFinishedSpans()).toHaveLength(2));
    const { upstream, server } = requestSpans(exporter.getFinishedSpans());
    expect(upstream.status.code).toBe(SpanStatusCode.ERROR);
    expect(upstream.attributes['error.type']).toBe('AbortError');
    expect(server.attributes['http.response.status_code']).toBe(200);
  });

  it('an unreachable upstream fails the upstream span with ConnectionError', async () => {
    const { exporter, telemetry } = otel();
    const model = await startMockModel({ script: [] });
    const url = model.baseURL;
    await model.close();
    const proxy = await gateway({ upstream: url, upstreamProtocol: 'chat', upstreamToken: UPSTREAM_KEY, telemetry });
    expect((await ask(proxy, 'chat', false)).status).toBe(502);
    const { upstream } = requestSpans(exporter.getFinishedSpans());
    expect(upstream.attributes).toMatchObject({ 'error.type': 'ConnectionError' });
    expect(upstream.attributes['http.response.status_code']).toBeUndefined();
  });
});

describe('content, metrics and the global setup', () => {
  it('recordContent puts the upstream call’s messages and answer on its span, never on the server span', async () => {
    const { exporter, telemetry } = otel();
    const model = await mockModel([{ content: ANSWER }]);
    const proxy = await gateway({
      upstream: model.baseURL,
      upstreamProtocol: 'chat',
      upstreamToken: UPSTREAM_KEY,
      telemetry: { ...telemetry, recordContent: true },
    });
    await ask(proxy, 'chat', true);
    const [upstream, server] = exporter.getFinishedSpans();
    expect(JSON.parse(String(upstream?.attributes['gen_ai.input.messages']))).toEqual([{ role: 'user', content: QUESTION }]);
    expect(String(upstream?.attributes['gen_ai.output.messages'])).toContain(ANSWER);
    expect(JSON.stringify(server?.attributes)).not.toContain('capital');
    expect(dump(exporter.getFinishedSpans())).not.toContain(UPSTREAM_KEY);
  });

  it('records the GenAI client metrics of the upstream call and the HTTP server duration of the request', async () => {
    const { reader, telemetry } = otel();
    const usage = { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 };
    const model = await mockModel([{ content: ANSWER, usage }, { content: ANSWER, usage }]);
    const proxy = await gateway({ upstream: model.baseURL, upstreamProtocol: 'chat', upstreamToken: UPSTREAM_KEY, telemetry });
    expect((await ask(proxy, 'chat', false)).status).toBe(200);
    expect((await ask(proxy, 'chat', true)).status).toBe(200);

    const { resourceMetrics } = await reader.collect();
    const metrics = resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics);
    const points = (name: string) =>
      (metrics.find((metric) => metric.descriptor.name === name)?.dataPoints ?? []).map((point) => ({
        attributes: point.attributes,
        count: (point.value as Histogram).count,
        sum: (point.value as Histogram).sum,
      }));
    const port = Number(new URL(model.baseURL).port);
    const client = {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'server.address': '127.0.0.1',
      'server.port': port,
      'gen_ai.request.model': 'mock-model',
      'gen_ai.response.model': 'mock-model',
    };
    expect(points('gen_ai.client.token.usage')).toEqual([
      { attributes: { ...client, 'gen_ai.token.type': 'input' }, count: 2, sum: 24 },
      { attributes: { ...client, 'gen_ai.token.type': 'output' }, count: 2, sum: 14 },
    ]);
    expect(points('gen_ai.client.operation.duration')).toEqual([{ attributes: client, count: 2, sum: expect.any(Number) }]);
    expect(points('http.server.request.duration')).toEqual([
      {
        attributes: {
          'http.request.method': 'POST',
          'url.scheme': 'http',
          'http.route': '/v1/chat/completions',
          'http.response.status_code': 200,
        },
        count: 2,
        sum: expect.any(Number),
      },
    ]);
  });

  it('with no tracer or propagator given, uses the registered ones (what an operator’s --import setup registers)', async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    trace.setGlobalTracerProvider(provider);
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    try {
      const model = await mockModel([{ content: ANSWER }]);
      const proxy = await gateway({ upstream: model.baseURL, upstreamProtocol: 'chat', upstreamToken: UPSTREAM_KEY, telemetry: {} });
      expect((await ask(proxy, 'chat', false)).status).toBe(200);
      const { upstream, server } = requestSpans(exporter.getFinishedSpans());
      expect([upstream.name, server.name]).toEqual(['chat mock-model', 'POST /v1/chat/completions']);
      expect(upstream.instrumentationScope.name).toBe('ai4ts');
    } finally {
      trace.disable();
      propagation.disable();
    }
  });

  it('a request without a traceparent starts a new trace', async () => {
    const { exporter, telemetry } = otel();
    const model = await mockModel([{ content: ANSWER }]);
    const proxy = await gateway({ upstream: model.baseURL, upstreamProtocol: 'chat', upstreamToken: UPSTREAM_KEY, telemetry });
    const response = await fetch(`${proxy.url}/v1/models`, { headers: { authorization: `Bearer ${GATEWAY_KEY}` } });
    expect(response.status).toBe(200);
    const [server] = exporter.getFinishedSpans();
    expect(server?.name).toBe('GET /v1/models');
    expect(server?.parentSpanContext).toBeUndefined();
    expect(server?.spanContext().traceId).not.toBe(TRACE_ID);
  });
});

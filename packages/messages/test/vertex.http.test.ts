/**
 * Claude on Vertex AI through the Messages service, over real sockets: a node:http server that answers only what
 * Vertex accepts (the model in the path, `:rawPredict` or `:streamRawPredict`, `anthropic_version` in the body and
 * no `model` there, no `anthropic-version` header, the bearer token it issued) with Anthropic's own JSON and SSE.
 */
import { AuthenticationError, Transport, type TransportOptions, VERTEX_ANTHROPIC_VERSION, vertex } from '@ai4ts/core';
import { serve, sseText, type TestServer } from '@ai4ts/test-kit';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it } from 'vitest';
import { type Message, type MessageCreateParams, MessagesService } from '../src/index.js';
import { helloStream, MODEL } from './fixtures.js';

const PROJECT = 'my-project';
const LOCATION = 'us-east5';
const VERTEX_MODEL = 'claude-sonnet-4-5@20250929';
const BASE = `/v1/projects/${PROJECT}/locations/${LOCATION}/publishers/anthropic`;
const tokenOf = (n: number) => `ya29.vertex-token-${n}`;

const request: MessageCreateParams = { model: VERTEX_MODEL, max_tokens: 256, messages: [{ role: 'user', content: 'Hi' }] };

const message: Message = {
  id: 'msg_vrtx_01',
  type: 'message',
  role: 'assistant',
  model: MODEL,
  content: [{ type: 'text', text: 'Hello!', citations: null }],
  stop_reason: 'end_turn',
  stop_sequence: null,
  usage: { input_tokens: 10, output_tokens: 3, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
} as Message;

let server: TestServer | undefined;
/** The token the server accepts now; a request with another gets Vertex's 401. */
let valid = tokenOf(1);
/** What the server refused, for the assertions. */
let refusals: string[] = [];

afterEach(async () => {
  await server?.close();
  server = undefined;
  valid = tokenOf(1);
  refusals = [];
});

/** The Vertex side: refuses what Vertex would refuse, with a reason the test can read. */
async function startVertex(): Promise<TestServer> {
  server = await serve((req, res, n) => {
    const body = JSON.parse(server?.bodies[n - 1] ?? '{}') as Record<string, unknown>;
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const refuse = (status: number, reason: string) => {
      refusals.push(reason);
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: status, message: reason, status: 'INVALID_ARGUMENT' } }));
    };
    if (req.headers.authorization !== `Bearer ${valid}`) return refuse(401, 'unauthenticated');
    if (req.headers['anthropic-version'] !== undefined || req.headers['x-api-key'] !== undefined) {
      return refuse(400, 'unexpected Anthropic header');
    }
    if ('model' in body) return refuse(400, 'model in the body');
    if (body.anthropic_version !== VERTEX_ANTHROPIC_VERSION) return refuse(400, 'anthropic_version missing');
    const streamed = body.stream === true;
    if (path !== `${BASE}/models/${VERTEX_MODEL}:${streamed ? 'streamRawPredict' : 'rawPredict'}`) {
      return refuse(404, `no route ${path}`);
    }
    if (streamed) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(sseText(helloStream(), { named: true }));
    } else {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(message));
    }
  });
  return server;
}

/** A service of the vertex-anthropic preset whose endpoint is the local server, with a counting token source. */
function vertexService(url: string, options: TransportOptions = {}) {
  let fetched = 0;
  const preset = vertex({ project: PROJECT, location: LOCATION, publisher: 'anthropic' });
  const service = new MessagesService(
    new Transport({
      provider: preset,
      baseURL: `${url.replace(/\/$/, '')}${BASE}`,
      accessToken: () => tokenOf(++fetched),
      maxRetries: 0,
      ...options,
    }),
  );
  return { service, fetched: () => fetched };
}

describe('Claude on Vertex AI through MessagesService', () => {
  it('create: rawPredict with the model in the path and anthropic_version in the body', async () => {
    const { url } = await startVertex();
    const { service } = vertexService(url);
    expect(await service.create(request)).toEqual(message);
    expect(refusals).toEqual([]);
  });

  it('stream: streamRawPredict, read by the Messages listener as Anthropic SSE', async () => {
    const { url } = await startVertex();
    const { service } = vertexService(url);
    const stream = service.stream(request);
    const texts: string[] = [];
    stream.on('content', (event) => texts.push(event.delta));
    const final = await stream.final();
    expect(texts.join('')).toBe('Hello!');
    expect(final.content).toEqual([{ type: 'text', text: 'Hello!' }]);
    expect(final.stop_reason).toBe('end_turn');
    expect(refusals).toEqual([]);
  });

  it('a refused token is replaced once, the stream then runs; a second refusal is the AuthenticationError', async () => {
    const { url } = await startVertex();
    valid = tokenOf(2);
    const renewed = vertexService(url);
    expect((await renewed.service.stream(request).final()).stop_reason).toBe('end_turn');
    expect(renewed.fetched()).toBe(2);
    valid = 'a-token-nobody-has';
    const refused = vertexService(url);
    const error = await refused.service.create(request).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(refused.fetched()).toBe(2);
    expect(String((error as Error).message)).not.toContain(tokenOf(1));
  });

  it("the span names Vertex by the conventions' provider name, and holds no token, even with content recorded", async () => {
    const { url } = await startVertex();
    valid = tokenOf(2); // a refused token and its replacement both pass through the call
    const exporter = new InMemorySpanExporter();
    const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer('test');
    const { service } = vertexService(url, { telemetry: { tracer, recordContent: true } });
    await service.stream(request).final();
    const spans = exporter.getFinishedSpans();
    expect(spans.map((span) => span.attributes['gen_ai.provider.name'])).toEqual(['gcp.vertex_ai']);
    const recorded = JSON.stringify(spans.map((span) => ({ attributes: span.attributes, events: span.events, status: span.status })));
    expect(recorded).toContain('Hello!');
    expect(recorded).not.toContain('ya29.');
  });
});

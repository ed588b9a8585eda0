/** ResponsesService request and response shapes, against msw. */
import { Ai4tsError, ApiError, BadRequestError, ProtocolError, RateLimitError, Transport } from '@ai4ts/core';
import { ResponsesStream, ResponsesService, streamResponse } from '@ai4ts/responses';
import { toFinishReason } from '../src/convert.js';
import { HttpResponse, http } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { sseText } from '@ai4ts/test-kit';
import { baseResponse, type Json, messageItem, parallelCallsScript, Script, textScript } from './fixtures.js';

const API = 'http://api.test/v1';
const TEXT = 'Paris is the capital of France — café ☕';

interface Seen {
  method: string;
  url: URL;
  headers: Headers;
  body: unknown;
}

const seen: Seen[] = [];
const server = setupServer();

beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => {
  server.resetHandlers();
  seen.length = 0;
});
afterAll(() => server.close());

/** Answers every request with `reply(request)` and records what arrived. */
function answer(reply: (url: URL) => Response): void {
  server.use(
    http.all(`${API}/*`, async ({ request }) => {
      const text = await request.text();
      const url = new URL(request.url);
      seen.push({ method: request.method, url, headers: request.headers, body: text ? JSON.parse(text) : undefined });
      return reply(url);
    }),
  );
}

const sse = (events: readonly unknown[]) =>
  new HttpResponse(sseText(events, { named: true }), { headers: { 'content-type': 'text/event-stream' } });

function service(): ResponsesService {
  return new ResponsesService(new Transport({ baseURL: API, apiKey: 'sk-test', maxRetries: 0 }));
}

const completed = baseResponse({ status: 'completed', output: [messageItem('msg_1', 'Hello', [])] });

describe('ResponsesService over msw', () => {
  it('create() posts the request and resolves to the response with output_text', async () => {
    answer(() => HttpResponse.json(completed));
    const request = { model: 'gpt-5', input: 'Say hello', store: false, tools: [{ type: 'web_search' }] };
    const response = await service().create(request);

    expect(response.output_text).toBe('Hello');
    expect(response.id).toBe('resp_1');
    const [call] = seen;
    expect(call?.method).toBe('POST');
    expect(call?.url.pathname).toBe('/v1/responses');
    expect(call?.headers.get('authorization')).toBe('Bearer sk-test');
    expect(call?.headers.get('content-type')).toContain('application/json');
    expect(call?.body).toEqual(request);
  });

  it('create() reads a text/event-stream answer to the final response transparently', async () => {
    answer(() => sse(textScript().events));
    const response = await service().create({ model: 'gpt-5', input: 'Capital of France?', stream: true });
    expect(response.status).toBe('completed');
    expect(response.output_text).toBe(TEXT);
  });

  it('create() rejects an HTTP error with the typed ApiError and its code', async () => {
    answer(
      () =>
        new HttpResponse(
          JSON.stringify({ error: { message: 'Unknown model', type: 'invalid_request_error', code: 'model_not_found' } }),
          { status: 400, headers: { 'content-type': 'application/json' } },
        ),
    );
    const error = await service()
      .create({ model: 'nope', input: 'x' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BadRequestError);
    expect((error as BadRequestError).code).toBe('model_not_found');
  });

  it('create() rejects a body that is not a response object with a ProtocolError', async () => {
    answer(() => HttpResponse.json({ object: 'list', data: [] }));
    const error = await service()
      .create({ model: 'gpt-5', input: 'x' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProtocolError);
    expect((error as ProtocolError).line).toBe('{"object":"list","data":[]}');
  });

  it('rejects an invalid request before sending it', async () => {
    answer(() => HttpResponse.json(completed));
    const error = await service()
      .create({ model: '', input: 'x' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Ai4tsError);
    expect((error as Error).message).toMatch(/Invalid Responses request/);
    expect(() => service().stream({ model: 'gpt-5', input: 42 as unknown as string })).toThrow(Ai4tsError);
    expect(seen).toHaveLength(0);
  });

  it('stream() posts stream: true and yields the normalized events, the raw ones and the final response', async () => {
    answer(() => sse(parallelCallsScript().events));
    const stream = service().stream({ model: 'gpt-5', input: 'Weather and time in Paris?' });
    const raw: string[] = [];
    stream.on('event', (e) => raw.push(e.type));
    const types: string[] = [];
    const done: string[] = [];
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'tool_call.done') done.push(`${event.id}:${event.arguments}`);
    }

    expect(raw).toEqual(parallelCallsScript().events.map((e) => e.type));
    expect(types).toEqual([
      'tool_call.start',
      'tool_call.start',
      ...Array(6).fill('tool_call.delta'),
      'tool_call.done',
      'tool_call.done',
      'usage',
      'finish',
    ]);
    expect(done).toEqual(['call_weather:{"city":"Paris","unit":"c"}', 'call_time:{"tz":"Europe/Paris"}']);
    const response = await stream.final();
    expect(response.output.map((item) => item.type)).toEqual(['function_call', 'function_call']);
    expect(stream.listener.functionCalls.call_time?.arguments).toBe('{"tz":"Europe/Paris"}');
    expect(seen[0]?.body).toEqual({ model: 'gpt-5', input: 'Weather and time in Paris?', stream: true });
    expect(seen[0]?.headers.get('accept')).toBe('text/event-stream');
  });

  it('stream().final() alone is enough; a second loop reads the events from the start', async () => {
    answer(() => sse(textScript().events));
    const stream = service().stream({ model: 'gpt-5', input: 'x' });
    expect((await stream.final()).output_text).toBe(TEXT);
    let text = '';
    for await (const event of stream) if (event.type === 'content') text += event.delta;
    expect(text).toBe(TEXT);
  });

  it('stream() surfaces an HTTP error through final() and the iterator, never as an unhandled rejection', async () => {
    answer(() => HttpResponse.json({ error: { message: 'Slow down', code: 'rate_limit_exceeded' } }, { status: 429 }));
    const stream = service().stream({ model: 'gpt-5', input: 'x' });
    const errors: unknown[] = [];
    stream.on('error', (e) => errors.push(e.error));
    const error = await stream.final().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitError);
    expect(errors).toEqual([error]);
    await expect(
      (async () => {
        for await (const _ of stream) {
          // nothing arrives
        }
      })(),
    ).rejects.toBe(error);
  });

  it('a stream error event after output began rejects final() and the loop after the events so far', async () => {
    const s = new Script().start().message(0, 'msg_1', ['so far']);
    s.add('error', { code: 'server_error', message: 'Upstream died', param: null });
    answer(() => sse(s.events));
    const stream = service().stream({ model: 'gpt-5', input: 'x' });
    const deltas: string[] = [];
    const failure = await (async () => {
      for await (const event of stream) if (event.type === 'content') deltas.push(event.delta);
    })().catch((e: unknown) => e);
    expect(deltas).toEqual(['so far']);
    expect(failure).toBeInstanceOf(Ai4tsError);
    expect((failure as Ai4tsError<{ output_text: string }>).partial?.output_text).toBe('so far');
    await expect(stream.final()).rejects.toBe(failure);
  });

  it('streamResponse() returns the handle of one step at once; its listener holds the state', async () => {
    answer(() => sse(parallelCallsScript().events));
    const transport = new Transport({ baseURL: API, apiKey: 'sk-test', maxRetries: 0 });
    const stream = streamResponse(transport, { model: 'gpt-5', input: 'x', store: false }, { headers: { 'x-step': '1' } });
    expect(stream).toBeInstanceOf(ResponsesStream);
    const forwarded: string[] = [];
    stream.on('tool_call.done', (e) => forwarded.push(e.name));
    const response = await stream.final();
    expect(forwarded).toEqual(['get_weather', 'get_time']);
    expect(toFinishReason(response)).toBe('tool_calls');
    expect(response).toEqual(stream.listener.response);
    expect(stream.listener.status).toBe('completed');
    expect(seen[0]?.body).toEqual({ model: 'gpt-5', input: 'x', store: false, stream: true });
    expect(seen[0]?.headers.get('x-step')).toBe('1');
  });

  it('a truncated response (response.incomplete) is a completed stream whose finish reason is length', async () => {
    const s = new Script().start().message(0, 'msg_1', ['Once upon']);
    s.add('response.incomplete', {
      response: baseResponse({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } }),
    });
    answer(() => sse(s.events));
    const stream = service().stream({ model: 'gpt-5', input: 'x', max_output_tokens: 3 });
    const finish: string[] = [];
    for await (const event of stream) if (event.type === 'finish') finish.push(event.finishReason);
    const response = await stream.final();
    expect(finish).toEqual(['length']);
    expect(response.status).toBe('incomplete');
    expect(response.output_text).toBe('Once upon');
    expect(stream.listener.status).toBe('completed');
    expect(stream.listener.error).toBeUndefined();
  });

  it('streamResponse() throws an invalid request synchronously, before sending', () => {
    const transport = new Transport({ baseURL: API, apiKey: 'sk-test', maxRetries: 0 });
    expect(() => streamResponse(transport, { model: '' })).toThrow(/Invalid Responses request/);
    expect(seen).toHaveLength(0);
  });

  it('the plain wire body carries no empty tools and no loop field, in create and stream', async () => {
    answer((url) => (url.pathname.endsWith('/responses') ? HttpResponse.json(completed) : HttpResponse.json({})));
    // Not a fresh literal: a JavaScript caller (or a wider type) may carry loop fields into a plain request.
    const request = { model: 'gpt-5', input: 'x', tools: [], maxSteps: 3, onStepFinish: () => undefined };
    await service().create(request);
    answer(() => sse(textScript().events));
    await service().stream(request).final();
    expect(seen.map((s) => s.body)).toEqual([
      { model: 'gpt-5', input: 'x' },
      { model: 'gpt-5', input: 'x', stream: true },
    ]);
  });

  it('stream() of an HTTP error rejects before the first byte without a partial; the listener stays empty', async () => {
    answer(() => HttpResponse.json({ error: { message: 'Bad', code: 'bad' } }, { status: 400 }));
    const stream = service().stream({ model: 'gpt-5', input: 'x' });
    const error = await stream.final().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BadRequestError);
    expect((error as BadRequestError).partial).toBeUndefined();
    expect(stream.listener.status).toBe('failed');
    expect(stream.listener.events).toEqual([]);
  });

  it('create() reads a 200 { error } body as the provider ApiError', async () => {
    answer(() => HttpResponse.json({ error: { message: 'Quota', code: 'insufficient_quota' } }));
    const error = await service()
      .create({ model: 'gpt-5', input: 'x' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).code).toBe('insufficient_quota');
  });

  it('retrieve() and delete() use GET and DELETE on /responses/{id}', async () => {
    answer((url) =>
      url.pathname.endsWith('/resp_1') ? HttpResponse.json(completed) : HttpResponse.json({}, { status: 404 }),
    );
    const responses = service();
    expect((await responses.retrieve('resp_1')).output_text).toBe('Hello');
    await responses.delete('resp_1');
    expect(seen.map((s) => `${s.method} ${s.url.pathname}`)).toEqual(['GET /v1/responses/resp_1', 'DELETE /v1/responses/resp_1']);
  });

  it('resume() continues a background stream after starting_after and rebuilds the whole response', async () => {
    const all = textScript().events;
    const cutAt = all.findIndex((e) => e.type === 'response.output_text.delta') + 2;
    const before = all.slice(0, cutAt);
    answer((url) => {
      const after = Number(url.searchParams.get('starting_after'));
      return sse(all.filter((e) => (e.sequence_number as number) > after));
    });
    const stream = service().resume('resp_1', { events: before });
    const resumed: string[] = [];
    stream.on('event', (event) => resumed.push(event.type));
    const snapshots: string[] = [];
    for await (const event of stream) if (event.type === 'content') snapshots.push(event.snapshot);
    const response = await stream.final();

    expect(response.output_text).toBe(TEXT);
    expect(response.output.map((item) => item.type)).toEqual(['reasoning', 'message']);
    expect(resumed).toEqual(all.slice(cutAt).map((e) => e.type));
    // The snapshot goes on from the text received before the interruption.
    expect(snapshots.at(-1)).toBe(TEXT);
    expect(snapshots[0]).toBe('Paris is the capital of France — ');
    const last = before.at(-1) as Json;
    expect(seen[0]?.method).toBe('GET');
    expect(seen[0]?.url.pathname).toBe('/v1/responses/resp_1');
    expect(Object.fromEntries(seen[0]?.url.searchParams ?? [])).toEqual({
      stream: 'true',
      starting_after: String(last.sequence_number),
    });
    expect(stream.listener.events).toHaveLength(all.length);
  });
});

/**
 * ResponsesService over real sockets on 127.0.0.1: ordinary answers against @ai4ts/testing's scripted model;
 * byte-level chunking, stalls, aborts and cuts mid-event against the test kit's node:http server.
 */
import type { ServerResponse } from 'node:http';
import {
  AbortError,
  Ai4tsError,
  ConnectionError,
  RateLimitError,
  StreamIncompleteError,
  TimeoutError,
  resultInfo,
  Transport,
} from '@ai4ts/core';
import { type ResponseObject, ResponsesService } from '@ai4ts/responses';
import { type MockModel, type MockTurn, startMockModel } from '@ai4ts/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { serve, sseText, startSse, type TestServer } from '@ai4ts/test-kit';
import { Script, textScript } from './fixtures.js';

let running: TestServer | undefined;
let model: MockModel | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
  await model?.close();
  model = undefined;
});

/** A test server whose SSE headers go out at once, before `handler` writes the body. */
async function serveSse(handler: (res: ServerResponse) => void): Promise<TestServer> {
  running = await serve((_req, res) => {
    startSse(res);
    handler(res);
  });
  return running;
}

function responses(url: string): ResponsesService {
  return new ResponsesService(new Transport({ baseURL: url, apiKey: 'sk-test', maxRetries: 0 }));
}

/** Writes `text` in pieces of `size` bytes, one per macrotask, then calls `after`. */
function dribble(res: ServerResponse, text: string, size: number, after: () => void): void {
  const bytes = Buffer.from(text);
  let at = 0;
  const next = () => {
    if (res.destroyed) return;
    if (at >= bytes.length) return after();
    res.write(bytes.subarray(at, at + size));
    at += size;
    setImmediate(next);
  };
  next();
}

const partialOf = (error: unknown) => (error as StreamIncompleteError<ResponseObject>).partial;

/** Two parallel calls: the weather and the time in Paris. */
const parallelCalls: MockTurn = {
  toolCalls: [
    { id: 'call_weather', name: 'get_weather', arguments: '{"city":"Paris","unit":"c"}' },
    { id: 'call_time', name: 'get_time', arguments: '{"tz":"Europe/Paris"}' },
  ],
};

/** A ResponsesService in front of @ai4ts/testing's scripted model answering `script`. */
async function mocked(script: MockTurn[]): Promise<ResponsesService> {
  model = await startMockModel({ script });
  return responses(model.baseURL);
}

describe('ResponsesService against the scripted model', () => {
  it('a server that ends the stream without a terminal event gives StreamIncompleteError with the partial', async () => {
    // -3: the second call's arguments are all streamed, its arguments.done, output_item.done and the terminal event are not.
    const service = await mocked([{ ...parallelCalls, cutOff: { afterChunks: -3 } }]);
    const error = await service
      .stream({ model: 'gpt-5', input: 'x' })
      .final()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StreamIncompleteError);
    expect(partialOf(error)?.output.map((item) => item.type === 'function_call' && item.arguments)).toEqual([
      '{"city":"Paris","unit":"c"}',
      '{"tz":"Europe/Paris"}',
    ]);
  });

  it('create() aggregates a streamed answer over a real socket', async () => {
    const service = await mocked([parallelCalls]);
    const response = await service.create({ model: 'gpt-5', input: 'x', stream: true });
    expect(response.output.map((item) => item.type === 'function_call' && item.call_id)).toEqual([
      'call_weather',
      'call_time',
    ]);
  });

  it('streams reasoning, text and usage to the final response', async () => {
    const usage = { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19, completion_tokens_details: { reasoning_tokens: 3 } };
    const service = await mocked([{ reasoning: 'A capital city.', content: 'Paris is the capital of France.', usage }]);
    const stream = service.stream({ model: 'gpt-5', input: 'Capital of France?' });
    const reasoning: string[] = [];
    const content: string[] = [];
    stream.on('reasoning', (e) => reasoning.push(e.delta));
    stream.on('content', (e) => content.push(e.delta));
    const response = await stream.final();
    expect(reasoning.join('')).toBe('A capital city.');
    expect(content.join('')).toBe('Paris is the capital of France.');
    expect(content.length).toBeGreaterThan(1);
    expect(response.output.map((item) => item.type)).toEqual(['reasoning', 'message']);
    expect(response.output_text).toBe('Paris is the capital of France.');
    expect(response.usage).toMatchObject({
      input_tokens: 12,
      output_tokens: 7,
      total_tokens: 19,
      output_tokens_details: { reasoning_tokens: 3 },
    });
  });

  it('an error event after output began rejects final() with the text so far in .partial', async () => {
    const service = await mocked([{ content: 'so far', streamError: { message: 'Upstream died' } }]);
    const error = await service
      .stream({ model: 'gpt-5', input: 'x' })
      .final()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Ai4tsError);
    expect((error as Ai4tsError).message).toContain('Upstream died');
    expect(partialOf(error)?.output_text).toBe('so far');
  });

  it('an HTTP 429 rejects create() and stream() with RateLimitError, the typed ApiError', async () => {
    const service = await mocked([{ httpError: { status: 429 } }, { httpError: { status: 429 } }]);
    const created = await service.create({ model: 'gpt-5', input: 'x' }).catch((e: unknown) => e);
    expect(created).toBeInstanceOf(RateLimitError);
    expect(created).toMatchObject({ status: 429, message: expect.stringContaining('Scripted HTTP 429') });
    const streamed = await service
      .stream({ model: 'gpt-5', input: 'x' })
      .final()
      .catch((e: unknown) => e);
    expect(streamed).toBeInstanceOf(RateLimitError);
    expect((streamed as RateLimitError).partial).toBeUndefined();
  });
});

// Hand-rolled: these need byte-level chunking, a stall, a cut mid-event, or to see the server's side of the socket close.
describe('ResponsesService over node:http', () => {
  it('reads a stream delivered in small chunks with multi-byte characters split', async () => {
    const server = await serveSse((res) => dribble(res, sseText(textScript().events, { named: true }), 7, () => res.end()));
    const stream = responses(server.baseURL).stream({ model: 'gpt-5', input: 'x' });
    const deltas: string[] = [];
    stream.on('content', (e) => deltas.push(e.delta));
    const response = await stream.final();
    expect(response.output_text).toBe('Paris is the capital of France — café ☕');
    expect(deltas.join('')).toBe(response.output_text);
  });

  it('abort() mid-stream releases the socket and rejects with AbortError carrying the partial', async () => {
    const s = new Script().start().message(0, 'msg_1', ['first ', 'words']);
    // Everything but the terminal event, then the server stalls.
    const server = await serveSse((res) => res.write(sseText(s.events, { named: true })));
    const stream = responses(server.baseURL).stream({ model: 'gpt-5', input: 'x' });
    stream.on('event', (event) => {
      if (event.type === 'response.output_item.done') stream.abort();
    });
    const error = await stream.final().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AbortError);
    expect(partialOf(error)?.output_text).toBe('first words');
    await server.closed(1);
  });

  it('leaving a for-await loop early aborts the request and closes the connection', async () => {
    const s = new Script().start().message(0, 'msg_1', ['a', 'b', 'c']);
    const server = await serveSse((res) => res.write(sseText(s.events, { named: true })));
    const stream = responses(server.baseURL).stream({ model: 'gpt-5', input: 'x' });
    const deltas: string[] = [];
    for await (const event of stream) {
      if (event.type === 'content') deltas.push(event.delta);
      if (deltas.length === 2) break;
    }
    expect(deltas).toEqual(['a', 'b']);
    await server.closed(1);
    await expect(stream.final()).rejects.toBeInstanceOf(AbortError);
  });

  it('a connection cut mid-event gives ConnectionError with the partial', async () => {
    const s = new Script().start().message(0, 'msg_1', ['kept']);
    const sse = sseText(s.events, { named: true });
    const server = await serveSse((res) => {
      res.write(`${sse}event: response.output_text.delta\ndata: {"type":"resp`);
      setImmediate(() => res.socket?.destroy());
    });
    const error = await responses(server.baseURL)
      .stream({ model: 'gpt-5', input: 'x' })
      .final()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectionError);
    expect(partialOf(error)?.output_text).toBe('kept');
  });

  it('a stall past idleTimeout gives TimeoutError with the partial and closes the connection', async () => {
    const s = new Script().start().message(0, 'msg_1', ['before ', 'the stall']);
    const server = await serveSse((res) => res.write(sseText(s.events, { named: true })));
    const error = await responses(server.baseURL)
      .stream({ model: 'gpt-5', input: 'x' }, { idleTimeout: 200 })
      .final()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TimeoutError);
    expect((error as TimeoutError).phase).toBe('idle');
    expect(partialOf(error)?.output_text).toBe('before the stall');
    await server.closed(1);
  });

  // resume() built its handle by hand, without the retry and the model call every other handle gets: a resumed
  // stream cut before its first event failed at once, and no middleware, request id or cost ever saw it.
  it('resume() is a model call like any other: retried before its first event, seen by middleware, with its info', async () => {
    const all = textScript().events;
    let attempts = 0;
    running = await serve((req, res) => {
      attempts += 1;
      startSse(res);
      // The first attempt closes before any event: a stream that may be sent again.
      if (attempts === 1) return res.end();
      const after = Number(new URL(req.url ?? '', 'http://x').searchParams.get('starting_after'));
      res.end(sseText(all.filter((e) => (e.sequence_number as number) > after), { named: true }));
    });
    const transport = new Transport({ baseURL: running.baseURL, apiKey: 'sk-test', maxRetries: 1, backoff: { initialMs: 1 } });
    const seen: string[] = [];
    transport.use(async (ctx, next) => {
      seen.push(`${ctx.protocol} stream=${ctx.stream}`);
      return next();
    });
    const stream = new ResponsesService(transport).resume('resp_1', { startingAfter: 0 });
    const retries: number[] = [];
    stream.on('retry', (event) => retries.push(event.attempt));
    const response = await stream.final();
    expect(response.output_text).toBe('Paris is the capital of France — café ☕');
    expect(attempts).toBe(2);
    expect(retries).toEqual([1]);
    expect(seen).toEqual(['responses stream=true']);
    expect(resultInfo(response)).toMatchObject({ status: 200 });
  });
});


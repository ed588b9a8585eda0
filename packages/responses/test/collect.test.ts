import {
  AbortError,
  ApiError,
  AuthenticationError,
  ConnectionError,
  ProtocolError,
  StreamIncompleteError,
} from '@ai4ts/core';
import {
  collectResponse,
  eventsFromJsonl,
  eventsToJsonl,
  type ResponseObject,
  ResponsesStreamListener,
  replayEvents,
} from '@ai4ts/responses';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sseText, streamOf } from '@ai4ts/test-kit';
import { baseResponse, chunks, parallelCallsScript, Script, textScript } from './fixtures.js';

const TEXT = 'Paris is the capital of France — café ☕';

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a rejection');
}

describe('collectResponse', () => {
  it('resolves to the response object from a string', async () => {
    const response = await collectResponse(sseText(textScript().events, { named: true }));
    expect(response.status).toBe('completed');
    expect(response.output_text).toBe(TEXT);
    expect(response.output.map((item) => item.type)).toEqual(['reasoning', 'message']);
  });

  it('gives the same response whatever the chunking (multi-byte characters split across chunks)', async () => {
    const sse = sseText(textScript().events, { named: true });
    const expected = await collectResponse(sse);
    for (const size of [1, 2, 3, 7, 64, 1000]) {
      expect(await collectResponse(streamOf(chunks(sse, size)))).toEqual(expected);
    }
  });

  it('reads a fetch Response and an async iterable', async () => {
    const sse = sseText(parallelCallsScript().events, { named: true });
    const fromResponse = await collectResponse(new Response(sse, { headers: { 'content-type': 'text/event-stream' } }));
    async function* pieces() {
      for (const piece of chunks(sse, 50)) yield piece;
    }
    const fromIterable = await collectResponse(pieces());
    expect(fromResponse.output.filter((i) => i.type === 'function_call').map((i) => i.call_id)).toEqual([
      'call_weather',
      'call_time',
    ]);
    expect(fromIterable).toEqual(fromResponse);
  });

  it('rejects a Response with an error status with the typed ApiError', async () => {
    const body = JSON.stringify({ error: { message: 'Invalid key', type: 'invalid_request_error', code: 'invalid_api_key' } });
    const error = await rejection(collectResponse(new Response(body, { status: 401 })));
    expect(error).toBeInstanceOf(AuthenticationError);
    expect((error as AuthenticationError).code).toBe('invalid_api_key');
    expect((error as AuthenticationError).partial).toBeUndefined();
  });

  it('feeds the given listener live', async () => {
    const listener = new ResponsesStreamListener();
    const deltas: string[] = [];
    listener.on('content', (e) => deltas.push(e.delta));
    const raw: string[] = [];
    listener.on('event', (e) => {
      if (e.type === 'response.output_text.delta') raw.push(e.delta); // the raw union narrows by type
    });
    await collectResponse(sseText(textScript().events, { named: true }), { listener });
    expect(deltas.join('')).toBe(TEXT);
    expect(raw).toEqual(deltas);
    expect(listener.status).toBe('completed');
  });

  it('resolves a response.incomplete (not an error)', async () => {
    const s = new Script().start().message(0, 'msg_1', ['trunc']);
    s.add('response.incomplete', {
      response: baseResponse({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } }),
    });
    const response = await collectResponse(sseText(s.events, { named: true }));
    expect(response.status).toBe('incomplete');
    expect(response.incomplete_details).toEqual({ reason: 'max_output_tokens' });
    expect(response.output_text).toBe('trunc');
  });

  it('rejects response.failed with an ApiError carrying code and partial', async () => {
    const s = new Script().start().message(0, 'msg_1', ['so far']);
    s.add('response.failed', {
      response: baseResponse({ status: 'failed', error: { code: 'server_error', message: 'Boom' } }),
    });
    const error = await rejection(collectResponse(sseText(s.events, { named: true })));
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).code).toBe('server_error');
    expect((error as ApiError).partial).toMatchObject({ status: 'failed', output_text: 'so far' });
  });

  it.each([
    { type: 'error', code: 'server_error', message: 'Upstream died', param: null },
    { type: 'error', error: { code: 'server_error', message: 'Upstream died' } },
  ])('rejects an error event (%o) with an ApiError carrying code and partial', async (errorEvent) => {
    const s = new Script().start().message(0, 'msg_1', ['so far']);
    s.add('error', errorEvent);
    const error = (await rejection(collectResponse(sseText(s.events, { named: true })))) as ApiError<ResponseObject>;
    expect(error).toBeInstanceOf(ApiError);
    expect(error.code).toBe('server_error');
    expect(error.message).toBe('Upstream died');
    expect(error.partial?.output_text).toBe('so far');
  });

  it('rejects a stream cut without a terminal event with StreamIncompleteError; calls keep partial arguments', async () => {
    const events = parallelCallsScript().events;
    const cut = events.slice(0, events.findIndex((e) => e.type === 'response.function_call_arguments.done') - 1);
    const error = await rejection(collectResponse(sseText(cut, { named: true })));
    expect(error).toBeInstanceOf(StreamIncompleteError);
    const partial = (error as StreamIncompleteError<ResponseObject>).partial;
    expect(partial?.output.map((item) => (item.type === 'function_call' ? [item.call_id, item.arguments] : []))).toEqual([
      ['call_weather', '{"city":"Paris","unit":"c"}'],
      ['call_time', '{"tz":"Europe/Paris"'],
    ]);
  });

  it('a terminal event without its final blank line is not a success', async () => {
    const sse = sseText(textScript().events, { named: true });
    const error = await rejection(collectResponse(sse.slice(0, -1)));
    expect(error).toBeInstanceOf(StreamIncompleteError);
    expect((error as StreamIncompleteError<{ output_text: string }>).partial?.output_text).toBe(TEXT);
  });

  it('rejects data that is not JSON with a ProtocolError naming the line, partial attached', async () => {
    const s = new Script().start().message(0, 'msg_1', ['before']);
    const sse = `${sseText(s.events, { named: true })}event: response.output_text.delta\ndata: {"type":"response.output_text.del\n\n`;
    const error = (await rejection(collectResponse(sse))) as ProtocolError<{ output_text: string }>;
    expect(error).toBeInstanceOf(ProtocolError);
    expect(error.line).toBe('{"type":"response.output_text.del');
    expect(error.partial?.output_text).toBe('before');
  });

  it('attaches the partial response to an error from the source', async () => {
    const s = new Script().start().message(0, 'msg_1', ['received']);
    const broken = new ConnectionError('socket hang up');
    const error = await rejection(collectResponse(streamOf(chunks(sseText(s.events, { named: true }), 100), broken)));
    expect(error).toBe(broken);
    expect(broken.partial).toMatchObject({ output_text: 'received' });

    const plain = await rejection(collectResponse(streamOf(chunks(sseText(s.events, { named: true }), 100), new Error('ECONNRESET'))));
    expect(plain).toBeInstanceOf(ConnectionError);
    expect((plain as ConnectionError).cause).toBeInstanceOf(Error);
    expect((plain as ConnectionError<{ output_text: string }>).partial?.output_text).toBe('received');
  });

  it('stops reading at the terminal event: a [DONE] and garbage after it are never read', async () => {
    const listener = new ResponsesStreamListener();
    const sse = `${sseText(textScript().events, { named: true })}data: [DONE]\n\ndata: not json\n\n`;
    const response = await collectResponse(sse, { listener });
    expect(response.output_text).toBe(TEXT);
    expect(listener.events).toHaveLength(textScript().events.length);
  });

  it('a source that breaks after the terminal event does not undo the success', async () => {
    const sse = sseText(textScript().events, { named: true });
    const response = await collectResponse(streamOf(chunks(sse, 4096), new Error('reset after the end')));
    expect(response.output_text).toBe(TEXT);
  });

  it('an abort rejects with AbortError carrying the partial response', async () => {
    const controller = new AbortController();
    const s = new Script().start().message(0, 'msg_1', ['partial ', 'text']);
    const sent = chunks(sseText(s.events, { named: true }), 64);
    let i = 0;
    const stalled = new ReadableStream<Uint8Array>({
      pull(c) {
        const part = sent[i++];
        if (part) c.enqueue(part);
        else controller.abort(); // the stream stalls; the caller gives up
      },
    });
    const error = await rejection(collectResponse(stalled, { signal: controller.signal }));
    expect(error).toBeInstanceOf(AbortError);
    expect((error as AbortError<{ output_text: string }>).partial?.output_text).toBe('partial text');
  });
});

describe('collectResponse properties', () => {
  it('any chunking of the bytes gives the same response', async () => {
    const bytes = new TextEncoder().encode(sseText(parallelCallsScript().events, { named: true }));
    const expected = await collectResponse(streamOf([bytes]));
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(fc.integer({ min: 1, max: bytes.length - 1 }), { maxLength: 40 }), async (cuts) => {
        const points = [0, ...cuts.sort((a, b) => a - b), bytes.length];
        const pieces = points.slice(1).map((end, i) => bytes.subarray(points[i], end));
        expect(await collectResponse(streamOf(pieces))).toEqual(expected);
      }),
      { numRuns: 60 },
    );
  });

  it('any prefix of a stream either completes or fails with a partial no larger than the whole', async () => {
    const events = textScript().events;
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: events.length }), async (n) => {
        const outcome = await collectResponse(sseText(events.slice(0, n), { named: true })).then(
          (response) => ({ response, error: undefined }),
          (error: StreamIncompleteError<ResponseObject>) => ({ response: undefined, error }),
        );
        if (n === events.length) expect(outcome.response?.output_text).toBe(TEXT);
        else {
          expect(outcome.error).toBeInstanceOf(StreamIncompleteError);
          expect(TEXT.startsWith(outcome.error?.partial?.output_text ?? '')).toBe(true);
        }
      }),
      { numRuns: 40 },
    );
  });
});

/** The outcome of a collect, comparable across source forms: the response, or the error's class, message and partial. */
async function outcomeOf(promise: Promise<ResponseObject>): Promise<unknown> {
  return promise.then(
    (response) => ({ response }),
    (error: ApiError<ResponseObject>) => ({ error: error.name, message: error.message, partial: error.partial }),
  );
}

/** `text` cut at the given code-point positions. */
function cutText(text: string, cuts: number[]): string[] {
  const points = Array.from(text);
  const at = [0, ...cuts.filter((c) => c < points.length).sort((a, b) => a - b), points.length];
  return at.slice(1).map((end, i) => points.slice(at[i], end).join(''));
}

async function* iterate<T>(items: T[]): AsyncGenerator<T> {
  for (const item of items) yield item;
}

function readable<T>(items: T[]): ReadableStream<T> {
  let i = 0;
  return new ReadableStream<T>({
    pull(controller) {
      const item = items[i++];
      if (item === undefined) controller.close();
      else controller.enqueue(item);
    },
  });
}

describe('collectResponse: every source form gives the same outcome', () => {
  const encoder = new TextEncoder();
  const streams = {
    text: sseText(textScript().events, { named: true }),
    'tool calls': sseText(parallelCallsScript().events, { named: true }),
    cut: sseText(parallelCallsScript().events.slice(0, 9), { named: true }),
    'error first': sseText([{ type: 'error', code: 'server_error', message: 'Upstream died' }], { named: true }),
    'error after output': sseText(
      new Script().start().message(0, 'msg_1', ['so far']).add('error', { error: { code: 'x', message: 'gone' } }).events,
      { named: true },
    ),
    failed: sseText(
      new Script()
        .start()
        .add('response.failed', { response: baseResponse({ status: 'failed', error: { code: 'server_error', message: 'no' } }) })
        .events,
      { named: true },
    ),
    'not JSON': `${sseText(new Script().start().message(0, 'msg_1', ['é']).events, { named: true })}data: {oops\n\n`,
    empty: '',
  };

  it('whole string, web streams of bytes and text, async iterables and a Response, for any chunking', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...Object.keys(streams)),
        fc.uniqueArray(fc.integer({ min: 1, max: 4000 }), { maxLength: 30 }),
        async (name, cuts) => {
          const text = streams[name as keyof typeof streams];
          const expected = await outcomeOf(collectResponse(text));
          const pieces = cutText(text, cuts);
          const bytes = pieces.map((piece) => encoder.encode(piece));
          const forms = [
            readable(bytes),
            readable(pieces),
            iterate(bytes),
            iterate(pieces),
            new Response(readable(bytes), { headers: { 'content-type': 'text/event-stream' } }),
          ];
          for (const form of forms) expect(await outcomeOf(collectResponse(form))).toEqual(expected);
        },
      ),
      { numRuns: 80 },
    );
  });

  it('a stream whose first event is an error gives the ApiError without a partial (nothing arrived)', async () => {
    const outcome = await outcomeOf(collectResponse(streams['error first']));
    expect(outcome).toEqual({ error: 'ApiError', message: 'Upstream died', partial: undefined });
  });
});

describe('record and replay', () => {
  const cases = {
    completed: sseText(textScript().events, { named: true }),
    'tool calls': sseText(parallelCallsScript().events, { named: true }),
    failed: sseText(
      new Script()
        .start()
        .message(0, 'msg_1', ['x'])
        .add('response.failed', { response: baseResponse({ status: 'failed', error: { code: 'server_error', message: 'no' } }) })
        .events,
      { named: true },
    ),
    cut: sseText(textScript().events.slice(0, 12), { named: true }),
    'with unknown and after-terminal events': `${sseText([{ type: 'response.future', sequence_number: 0 }], { named: true })}${sseText(
      textScript().events,
      { named: true },
    )}data: [DONE]\n\n`,
  };

  it.each(Object.entries(cases))('a %s stream replays from JSONL to the same final state', async (_name, sse) => {
    const recorded = new ResponsesStreamListener();
    const outcome = await collectResponse(sse, { listener: recorded }).then(
      (response) => ({ response }),
      (error: Error) => ({ error }),
    );

    const jsonl = eventsToJsonl(recorded.events);
    expect(jsonl.trim().split('\n')).toHaveLength(recorded.events.length);
    const replayed = replayEvents(eventsFromJsonl(jsonl));

    expect(replayed.events).toEqual(recorded.events);
    expect(replayed.status).toBe(recorded.status);
    expect(replayed.response).toEqual(recorded.response);
    expect(replayed.outputText).toBe(recorded.outputText);
    expect(replayed.functionCalls).toEqual(recorded.functionCalls);
    if ('response' in outcome) expect(replayed.response).toEqual(outcome.response);
    else {
      expect(replayed.error?.constructor).toBe(outcome.error.constructor);
      expect(replayed.error?.partial).toEqual((outcome.error as ApiError).partial);
    }
  });

  it('eventsFromJsonl names a bad line', () => {
    expect(() => eventsFromJsonl('{"type":"a"}\n\n{oops\n')).toThrow(/Line 3/);
  });
});

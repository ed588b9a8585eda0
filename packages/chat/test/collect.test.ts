import {
  AbortError,
  Ai4tsError,
  ApiError,
  ConnectionError,
  ProtocolError,
  StreamIncompleteError,
  type StreamSource,
} from '@ai4ts/core';
import { type ChatCompletion, ChatStreamListener, collectChatCompletion } from '@ai4ts/chat';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { splitAt, sseText, streamOf } from '@ai4ts/test-kit';
import { chunk, finish, toolChunk } from './helpers.js';

const encoder = new TextEncoder();

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

const partialOf = (error: unknown) => (error as { partial: ChatCompletion }).partial;

/** A stream with everything: reasoning, multi-byte text, a tool call whose arguments hold escapes and emoji. */
const RICH = `${sseText([
  chunk({ role: 'assistant', content: null, reasoning_content: 'Überlegung: 東京 ' }),
  chunk({ reasoning_content: '🤔' }),
  chunk({ content: 'Voilà — 答え 😀' }),
  toolChunk({ index: 0, id: 'call_1', type: 'function', function: { name: 'note', arguments: '{"t":"caf\\u00e9 ' } }),
  toolChunk({ index: 0, function: { arguments: '😀"}' } }),
  finish('tool_calls'),
  { id: 'chatcmpl-1', choices: [], usage: { prompt_tokens: 3, completion_tokens: 9, total_tokens: 12 } },
])}data: [DONE]\n\n`;

const RICH_COMPLETION: ChatCompletion = {
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1700000000,
  model: 'test-model',
  choices: [
    {
      index: 0,
      message: {
        role: 'assistant',
        content: 'Voilà — 答え 😀',
        reasoning_content: 'Überlegung: 東京 🤔',
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'note', arguments: '{"t":"caf\\u00e9 😀"}' } }],
      },
      finish_reason: 'tool_calls',
    },
  ],
  usage: { prompt_tokens: 3, completion_tokens: 9, total_tokens: 12 },
};

describe('collectChatCompletion', () => {
  it('reads a whole SSE string to the completion', async () => {
    expect(await collectChatCompletion(RICH)).toEqual(RICH_COMPLETION);
  });

  it('gives the same completion however the bytes are cut (inside multi-byte characters and escapes)', async () => {
    const bytes = encoder.encode(RICH);
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 1, max: bytes.length - 1 }), { maxLength: 40 }), async (cuts) => {
        expect(await collectChatCompletion(streamOf(splitAt(bytes, cuts)))).toEqual(RICH_COMPLETION);
      }),
      { numRuns: 150 },
    );
  });

  it('reads a Response and an async iterable of strings', async () => {
    expect(await collectChatCompletion(new Response(RICH))).toEqual(RICH_COMPLETION);
    async function* pieces() {
      yield RICH.slice(0, 100);
      yield RICH.slice(100);
    }
    expect(await collectChatCompletion(pieces())).toEqual(RICH_COMPLETION);
  });

  it('a stream that ends after its finish_reason but without [DONE] is incomplete: the usage chunk may be lost', async () => {
    const error = await rejection(collectChatCompletion(sseText([chunk({ role: 'assistant', content: 'Hi' }), finish('stop')])));
    expect(error).toBeInstanceOf(StreamIncompleteError);
    expect((error as Error).message).toBe('The chat stream ended before [DONE]');
    expect(partialOf(error).choices[0]).toMatchObject({ message: { content: 'Hi' }, finish_reason: 'stop' });
  });

  it('with finishOnEnd (the quirk endsWithoutDone) a stream whose every choice finished is complete without [DONE]', async () => {
    const text = sseText([chunk({ role: 'assistant', content: 'Hi' }), finish('stop')]);
    const completion = await collectChatCompletion(text, { finishOnEnd: true });
    expect(completion.choices[0]?.message.content).toBe('Hi');
    const cut = await rejection(collectChatCompletion(sseText([chunk({ content: 'Hi' })]), { finishOnEnd: true }));
    expect(cut).toBeInstanceOf(StreamIncompleteError);
  });

  it('a stream cut before its finish_reason throws StreamIncompleteError with the partial completion', async () => {
    const error = await rejection(collectChatCompletion(sseText([chunk({ content: 'Half an ans' })])));
    expect(error).toBeInstanceOf(StreamIncompleteError);
    expect(partialOf(error).choices[0]?.message.content).toBe('Half an ans');
    expect(partialOf(error).choices[0]?.finish_reason).toBeNull();
  });

  it('text held back as a possible <think> tag is in the partial of a cut stream', async () => {
    const error = await rejection(collectChatCompletion(sseText([chunk({ content: 'a <' })])));
    expect(partialOf(error).choices[0]?.message.content).toBe('a <');
  });

  it('[DONE] without any finish_reason is still incomplete', async () => {
    const error = await rejection(collectChatCompletion(`${sseText([chunk({ content: 'x' })])}data: [DONE]\n\n`));
    expect(error).toBeInstanceOf(StreamIncompleteError);
  });

  it('OpenRouter: data: {"error":{...}} after HTTP 200 throws ApiError with code and partial', async () => {
    const text = sseText([chunk({ content: 'So far' }), { error: { message: 'Upstream timed out', type: 'upstream_error', code: 'timeout' } }]);
    const error = await rejection(collectChatCompletion(text));
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).code).toBe('timeout');
    expect((error as ApiError).status).toBeUndefined();
    expect((error as ApiError).message).toContain('Upstream timed out');
    expect(partialOf(error).choices[0]?.message.content).toBe('So far');
  });

  it('{"error":{...}} without code: ApiError.code is error.type', async () => {
    const error = await rejection(collectChatCompletion(sseText([{ error: { message: 'bad', type: 'invalid_request_error' } }])));
    expect((error as ApiError).code).toBe('invalid_request_error');
  });

  it('vLLM / SGLang: event: error with flat {code, message} throws ApiError with the code', async () => {
    const text = `${sseText([chunk({ content: 'abc' })])}event: error\ndata: {"code":"context_length_exceeded","message":"too long"}\n\n`;
    const error = await rejection(collectChatCompletion(text));
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).code).toBe('context_length_exceeded');
    expect((error as ApiError).message).toContain('too long');
    expect(partialOf(error).choices[0]?.message.content).toBe('abc');
  });

  it('unparseable data throws ProtocolError with the offending line and the partial', async () => {
    const error = await rejection(collectChatCompletion(`${sseText([chunk({ content: 'ok' })])}data: {"choices": [\n\n`));
    expect(error).toBeInstanceOf(ProtocolError);
    expect((error as ProtocolError).line).toBe('{"choices": [');
    expect(partialOf(error).choices[0]?.message.content).toBe('ok');
  });

  it('an event larger than maxEventSize is a ProtocolError', async () => {
    const big = sseText([chunk({ content: 'x'.repeat(5000) }), finish('stop')]);
    const error = await rejection(collectChatCompletion(streamOf(splitAt(encoder.encode(big), [100, 200])), { maxEventSize: 1000 }));
    expect(error).toBeInstanceOf(ProtocolError);
  });

  it('keeps the text before an oversized event when the whole stream comes as one string', async () => {
    const stream = sseText([chunk({ content: 'kept' }), chunk({ content: 'x'.repeat(5000) }), finish('stop')]);
    const error = await rejection(collectChatCompletion(stream, { maxEventSize: 1000 }));
    expect(error).toBeInstanceOf(ProtocolError);
    expect(partialOf(error).choices[0]?.message.content).toBe('kept');
  });

  it('a source that errors mid-stream is a ConnectionError carrying the partial', async () => {
    let sent = false;
    const source = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (!sent) {
          sent = true;
          controller.enqueue(encoder.encode(sseText([chunk({ content: 'before the break' })])));
        } else controller.error(new TypeError('terminated'));
      },
    });
    const error = await rejection(collectChatCompletion(source));
    expect(error).toBeInstanceOf(ConnectionError);
    expect(partialOf(error).choices[0]?.message.content).toBe('before the break');
  });

  it('an abort signal stops reading: AbortError with the partial, and the source is cancelled', async () => {
    const controller = new AbortController();
    let cancelled = false;
    let sent = false;
    const source = new ReadableStream<Uint8Array>({
      pull(c) {
        if (!sent) {
          sent = true;
          c.enqueue(encoder.encode(sseText([chunk({ content: 'first' })])));
        }
        // then never answers
      },
      cancel() {
        cancelled = true;
      },
    });
    const listener = new ChatStreamListener();
    listener.on('content', () => controller.abort());
    const error = await rejection(collectChatCompletion(source, { signal: controller.signal, listener }));
    expect(error).toBeInstanceOf(AbortError);
    expect(partialOf(error).choices[0]?.message.content).toBe('first');
    expect(cancelled).toBe(true);
  });

  it('thinkTags option and a caller-provided listener receive the events', async () => {
    const text = `${sseText([chunk({ content: '<think>hm</think>ok' }), finish('stop')])}data: [DONE]\n\n`;
    expect((await collectChatCompletion(text, { thinkTags: false })).choices[0]?.message.content).toBe('<think>hm</think>ok');
    const listener = new ChatStreamListener();
    const reasoning: string[] = [];
    listener.on('reasoning', (e) => reasoning.push(e.delta));
    const completion = await collectChatCompletion(text, { listener });
    expect(completion.choices[0]?.message).toEqual({ role: 'assistant', content: 'ok', reasoning_content: 'hm' });
    expect(reasoning).toEqual(['hm']);
  });

  it('status: a length finish is a completed stream; [DONE] completes, and after it input is ignored', async () => {
    const listener = new ChatStreamListener();
    const text = `${sseText([chunk({ content: 'cut sh' }), finish('length')])}data: [DONE]\n\n${sseText([chunk({ content: 'late' })])}`;
    const completion = await collectChatCompletion(text, { listener });
    expect(listener.status).toBe('completed');
    expect(completion.choices[0]).toMatchObject({ finish_reason: 'length', message: { content: 'cut sh' } });
  });

  it('<think> extraction gives the same result however the content deltas are cut', () => {
    const content = '<think>\nplan: a<b, </thin k>\n</think>\n\nAnswer <i>x</i> <thinking';
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: content.length - 1 }), { maxLength: 20 }), (cuts) => {
        const points = [0, ...[...new Set(cuts)].sort((a, b) => a - b), content.length];
        const listener = new ChatStreamListener({ finishOnEnd: true });
        for (let i = 1; i < points.length; i++) listener.push(chunk({ content: content.slice(points[i - 1], points[i]) }));
        listener.push(finish('stop'));
        expect(listener.end().choices[0]?.message.content).toBe('Answer <i>x</i> <thinking');
        expect(listener.reasoning).toBe('plan: a<b, </thin k>\n');
        expect(listener.content).toBe('Answer <i>x</i> <thinking');
      }),
      { numRuns: 300 },
    );
  });
});

/** What reading one source gave: the completion, or the error's class, message and partial. */
async function outcome(source: StreamSource): Promise<unknown> {
  try {
    return { completion: await collectChatCompletion(source) };
  } catch (error) {
    if (!(error instanceof Ai4tsError)) throw error;
    return { error: error.name, message: error.message, partial: error.partial };
  }
}

/** `items` split at the given offsets (offsets outside the range or repeated are dropped). */
function cut<T extends { slice(from: number, to?: number): T; length: number }>(items: T, cuts: number[]): T[] {
  const points = [...new Set(cuts.filter((c) => c > 0 && c < items.length))].sort((a, b) => a - b);
  return [0, ...points].map((from, i) => items.slice(from, points[i] ?? items.length));
}

function webStream<T>(pieces: T[]): ReadableStream<T> {
  const queue = [...pieces];
  return new ReadableStream<T>({
    pull(controller) {
      const next = queue.shift();
      if (next === undefined) controller.close();
      else controller.enqueue(next);
    },
  });
}

async function* iterate<T>(pieces: T[]): AsyncGenerator<T> {
  for (const piece of pieces) yield piece;
}

/** SSE blocks a provider may send, good and bad, in any order. */
const block = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 8 }).map((text) => sseText([chunk({ content: text })])),
  fc.constant(sseText([chunk({ reasoning_content: 'Überlegung 東京 ' })])),
  fc.constant(sseText([toolChunk({ index: 0, id: 'call_1', function: { name: 'f', arguments: '{"t":"😀' } })])),
  fc.constant(sseText([toolChunk({ index: 0, function: { arguments: '\\u00e9"}' } })])),
  fc.constant(sseText([finish('stop')])),
  fc.constant(sseText([finish('length')])),
  fc.constant(sseText([{ id: 'chatcmpl-1', choices: [], usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 } }])),
  fc.constant(sseText([{ error: { message: 'Upstream timed out', code: 'timeout' } }])),
  fc.constant('event: error\ndata: {"code":"context_length_exceeded","message":"too long"}\n\n'),
  fc.constant('data: {"choices": [\n\n'),
  fc.constant('data: [DONE]\n\n'),
  fc.constant(': keep-alive\n\n'),
);

describe('collectChatCompletion: every StreamSource form', () => {
  it('a string, web streams of bytes and of text, async iterables and a Response give the same result and partial', async () => {
    const firstIsError: [string[], number[]] = [
      [sseText([{ error: { message: 'quota', code: 'insufficient_quota' } }]), sseText([chunk({ content: 'never' })])],
      [3],
    ];
    await fc.assert(
      fc.asyncProperty(fc.array(block, { maxLength: 8 }), fc.array(fc.nat(), { maxLength: 12 }), async (blocks, cuts) => {
        const text = blocks.join('');
        const bytes = encoder.encode(text);
        const byteCuts = cuts.map((c) => c % (bytes.length + 1));
        const textCuts = cuts.map((c) => c % (text.length + 1));
        const expected = await outcome(text);
        expect(await outcome(webStream(cut(bytes, byteCuts)))).toEqual(expected);
        expect(await outcome(webStream(cut(text, textCuts)))).toEqual(expected);
        expect(await outcome(iterate(cut(bytes, byteCuts)))).toEqual(expected);
        expect(await outcome(iterate(cut(text, textCuts)))).toEqual(expected);
        expect(await outcome(new Response(webStream(cut(bytes, byteCuts))))).toEqual(expected);
      }),
      { numRuns: 200, examples: [firstIsError] },
    );
  });

  it('a stream whose first event is an error is an ApiError without a partial (nothing arrived), in every form', async () => {
    const text = sseText([{ error: { message: 'quota', code: 'insufficient_quota' } }, chunk({ content: 'never' })]);
    const expected = { error: 'ApiError', message: 'quota', partial: undefined };
    expect(await outcome(text)).toEqual(expected);
    expect(await outcome(new Response(text))).toEqual(expected);
    expect(await outcome(iterate([text]))).toEqual(expected);
  });
});

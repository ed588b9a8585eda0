import { AbortError, ApiError, ConnectionError, ProtocolError, StreamIncompleteError, TimeoutError } from '@ai4ts/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sseText } from '@ai4ts/test-kit';
import { collectMessage, type Message, MessagesStreamListener, type ToolUseBlock } from '../src/index.js';
import {
  blockStart,
  delta,
  helloStream,
  messageDelta,
  messageStart,
  messageStop,
  overloaded,
  textBlock,
  thinkingTextToolStream,
} from './fixtures.js';

const encoder = new TextEncoder();

/** The text's UTF-8 bytes as chunks cut at the given byte offsets (which may fall inside a character). */
async function* chunks(text: string, cuts: number[] = []): AsyncGenerator<Uint8Array> {
  const bytes = encoder.encode(text);
  let from = 0;
  for (const cut of [...cuts].sort((a, b) => a - b)) {
    yield bytes.slice(from, cut);
    from = cut;
  }
  yield bytes.slice(from);
}

async function rejection(promise: Promise<unknown>): Promise<Error & { partial?: unknown }> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a rejection');
}

describe('collectMessage', () => {
  it('collects a fetch Response into the message', async () => {
    const message = await collectMessage(new Response(sseText(thinkingTextToolStream(), { named: true })));
    expect(message.content.map((b) => b.type)).toEqual(['thinking', 'text', 'tool_use']);
    expect((message.content[2] as ToolUseBlock).input).toEqual({
      location: 'San Francisco, CA "the city"',
      unit: 'fahrenheit',
    });
    expect(message.stop_reason).toBe('tool_use');
  });

  it('gives the same message however the bytes are chunked, inside UTF-8 characters too', async () => {
    const text = sseText([
      ...thinkingTextToolStream().slice(0, -2),
      ...textBlock(3, 'Grüße ', '🌍 — ', '東京'),
      messageDelta('end_turn'),
      messageStop,
    ], { named: true });
    const expected = await collectMessage(chunks(text));
    expect((expected.content[3] as { text: string }).text).toBe('Grüße 🌍 — 東京');
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: encoder.encode(text).length }), { maxLength: 12 }),
        async (cuts) => {
          expect(await collectMessage(chunks(text, cuts))).toEqual(expected);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('feeds a given listener, which sees the events live', async () => {
    const listener = new MessagesStreamListener();
    const deltas: string[] = [];
    listener.on('content', (e) => deltas.push(e.delta));
    const message = await collectMessage(chunks(sseText(helloStream(), { named: true })), { listener });
    expect(deltas).toEqual(['Hello', '!']);
    expect(listener.message).toBe(message);
  });

  it('event: error after text began is an ApiError with the partial text', async () => {
    const events = [
      messageStart(),
      blockStart(0, { type: 'text', text: '' }),
      delta(0, { type: 'text_delta', text: 'The answer is' }),
      overloaded(),
    ];
    const error = await rejection(collectMessage(chunks(sseText(events, { named: true }))));
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).code).toBe('overloaded_error');
    expect((error as ApiError).type).toBe('overloaded_error');
    expect((error.partial as Message).content).toEqual([{ type: 'text', text: 'The answer is' }]);
  });

  it('a stream cut before message_stop is StreamIncompleteError, even cut inside an event', async () => {
    const text = sseText(helloStream(), { named: true });
    const cut = text.indexOf('event: message_stop') + 10;
    const error = await rejection(collectMessage(chunks(text.slice(0, cut))));
    expect(error).toBeInstanceOf(StreamIncompleteError);
    expect(error.partial).toMatchObject({ content: [{ type: 'text', text: 'Hello!' }], stop_reason: 'end_turn' });
  });

  it('an empty body is StreamIncompleteError with partial null', async () => {
    const error = await rejection(collectMessage(new Response('')));
    expect(error).toBeInstanceOf(StreamIncompleteError);
    expect(error.partial).toBeUndefined();
  });

  it('unparseable data is a ProtocolError with the line', async () => {
    const text = `${sseText([messageStart()], { named: true })}event: content_block_start\ndata: {"type": "content_block_start", "index": 0,\n\n`;
    const error = await rejection(collectMessage(chunks(text)));
    expect(error).toBeInstanceOf(ProtocolError);
    expect((error as ProtocolError).line).toBe('{"type": "content_block_start", "index": 0,');
    expect(error.partial).toMatchObject({ content: [] });
  });

  it('a source that fails mid-stream: a plain error becomes ConnectionError, an ai4ts error keeps its class; both get the partial', async () => {
    const started = sseText([
      messageStart(),
      blockStart(0, { type: 'text', text: '' }),
      delta(0, { type: 'text_delta', text: 'partial text' }),
    ], { named: true });
    async function* failing(error: Error) {
      yield started;
      throw error;
    }
    const reset = await rejection(collectMessage(failing(new TypeError('terminated'))));
    expect(reset).toBeInstanceOf(ConnectionError);
    expect((reset.cause as Error).message).toBe('terminated');
    expect(reset.partial).toMatchObject({ content: [{ type: 'text', text: 'partial text' }] });

    const stall = new TimeoutError('idle', 50);
    const timeout = await rejection(collectMessage(failing(stall)));
    expect(timeout).toBe(stall);
    expect(timeout.partial).toMatchObject({ content: [{ type: 'text', text: 'partial text' }] });
  });

  it('an abort rejects with AbortError carrying the partial, and releases the source', async () => {
    const controller = new AbortController();
    let released = false;
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(
          encoder.encode(
            sseText([
              messageStart(),
              blockStart(0, { type: 'text', text: '' }),
              delta(0, { type: 'text_delta', text: 'so far' }),
            ], { named: true }),
          ),
        );
      },
      pull() {
        controller.abort(); // the next read waits forever: only the abort ends it
      },
      cancel() {
        released = true;
      },
    });
    const error = await rejection(collectMessage(body, { signal: controller.signal }));
    expect(error).toBeInstanceOf(AbortError);
    expect(error.partial).toMatchObject({ content: [{ type: 'text', text: 'so far' }] });
    await Promise.resolve();
    expect(released).toBe(true);
  });

  it('an event over maxEventSize is a ProtocolError', async () => {
    const big = [
      messageStart(),
      blockStart(0, { type: 'text', text: '' }),
      delta(0, { type: 'text_delta', text: 'x'.repeat(5000) }),
    ];
    const error = await rejection(collectMessage(chunks(sseText(big, { named: true })), { maxEventSize: 1000 }));
    expect(error).toBeInstanceOf(ProtocolError);
  });

  it('stops reading at message_stop and releases the source; what follows is ignored', async () => {
    let released = false;
    async function* source() {
      try {
        yield sseText(helloStream(), { named: true });
        yield 'event: content_block_start\ndata: not json at all\n\n';
        await new Promise(() => {});
      } finally {
        released = true;
      }
    }
    const message = await collectMessage(source());
    expect(message.content).toEqual([{ type: 'text', text: 'Hello!' }]);
    await Promise.resolve();
    expect(released).toBe(true);
  });
});

describe('collectMessage over every StreamSource form', () => {
  /** What a read gave: the message, or the error's class, message and partial. */
  async function outcome(read: Promise<Message>): Promise<unknown> {
    try {
      return { message: await read };
    } catch (error) {
      const failure = error as Error & { partial?: unknown };
      return { error: failure.name, message: failure.message, partial: failure.partial };
    }
  }

  /** The text cut at the given character offsets. */
  function pieces(text: string, cuts: number[]): string[] {
    const out: string[] = [];
    let from = 0;
    for (const cut of [...new Set(cuts)].sort((a, b) => a - b)) {
      out.push(text.slice(from, cut));
      from = cut;
    }
    out.push(text.slice(from));
    return out;
  }

  function stream<T>(parts: T[]): ReadableStream<T> {
    return new ReadableStream<T>({
      start(controller) {
        for (const part of parts) controller.enqueue(part);
        controller.close();
      },
    });
  }

  async function* iterate<T>(parts: T[]): AsyncGenerator<T> {
    for (const part of parts) yield part;
  }

  const scenarios: Record<string, string> = {
    complete: sseText(thinkingTextToolStream(), { named: true }),
    'error first': sseText([overloaded(), ...helloStream()], { named: true }),
    'error after text': sseText([
      messageStart(),
      blockStart(0, { type: 'text', text: '' }),
      delta(0, { type: 'text_delta', text: 'Grüße 🌍' }),
      overloaded(),
    ], { named: true }),
    'cut off': sseText(thinkingTextToolStream().slice(0, 7), { named: true }),
  };

  it('a whole string collects like the bytes (the form that failed with "Cannot use \'in\' operator")', async () => {
    const text = sseText(helloStream(), { named: true });
    expect(await collectMessage(text)).toEqual(await collectMessage(chunks(text)));
  });

  it('every form and every chunking gives the same message or the same error and partial', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...Object.keys(scenarios)),
        fc.array(fc.nat(), { maxLength: 10 }),
        async (name, offsets) => {
          const text = scenarios[name] ?? '';
          const cuts = offsets.map((offset) => offset % (text.length + 1));
          const texts = pieces(text, cuts);
          // Bytes are cut at byte offsets: encoding a string piece that splits a surrogate pair would change it.
          const whole = encoder.encode(text);
          const byteCuts = [...new Set(offsets.map((offset) => offset % (whole.length + 1)))].sort((a, b) => a - b);
          const bytes = [0, ...byteCuts].map((from, i) => whole.slice(from, byteCuts[i] ?? whole.length));
          const expected = await outcome(collectMessage(text));
          const forms: Array<() => Parameters<typeof collectMessage>[0]> = [
            () => new Response(stream(bytes)),
            () => stream(bytes),
            () => stream(texts),
            () => iterate(bytes),
            () => iterate(texts),
          ];
          for (const form of forms) expect(await outcome(collectMessage(form()))).toEqual(expected);
        },
      ),
      { numRuns: 80 },
    );
  });

  it('a stream whose first event is an error gives an ApiError without a partial (nothing arrived) in every form', async () => {
    const text = scenarios['error first'] ?? '';
    for (const source of [text, new Response(text), iterate([text])]) {
      const error = await rejection(collectMessage(source));
      expect(error).toBeInstanceOf(ApiError);
      expect(error.partial).toBeUndefined();
    }
  });
});

/** The listener contract of core, as MessagesStreamListener keeps it: status, push, pushSse, end, fail. */
import { AbortError, ApiError, ConnectionError, ProtocolError, StreamIncompleteError } from '@ai4ts/core';
import { describe, expect, it } from 'vitest';
import { type Message, MessagesStreamListener, type RawMessageStreamEvent } from '../src/index.js';
import { blockStart, helloStream, MODEL, messageDelta, messageStart, messageStop, textBlock } from './fixtures.js';

/** A whole answer as typed events, the way `push` takes them. */
function typedAnswer(stopReason: string): RawMessageStreamEvent[] {
  const message: Message = {
    id: 'msg_typed',
    type: 'message',
    role: 'assistant',
    model: MODEL,
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage: { input_tokens: 10, output_tokens: 1 },
  };
  return [
    { type: 'message_start', message },
    { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    { type: 'ping' },
    { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Lorem ipsum' } },
    { type: 'content_block_stop', index: 0 },
    { type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: 64 } },
    { type: 'message_stop' },
  ];
}

type Wire = ReturnType<typeof messageStart>;

function feed(listener: MessagesStreamListener, events: Wire[]): void {
  for (const event of events) listener.pushSse({ event: event.type, data: JSON.stringify(event) });
}

function thrown(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

describe('MessagesStreamListener: status', () => {
  it('is pending, then streaming from message_start, then completed at message_stop', () => {
    const listener = new MessagesStreamListener();
    const statuses = [listener.status];
    for (const event of typedAnswer('end_turn')) {
      listener.push(event);
      statuses.push(listener.status);
    }
    expect(statuses).toEqual(['pending', 'streaming', 'streaming', 'streaming', 'streaming', 'streaming', 'streaming', 'completed']);
  });

  it('a max_tokens stop is a completed stream whose finish reason is length', () => {
    const listener = new MessagesStreamListener();
    const finishes: string[] = [];
    listener.on('finish', (event) => finishes.push(event.finishReason));
    for (const event of typedAnswer('max_tokens')) listener.push(event);
    expect(listener.status).toBe('completed');
    expect(listener.error).toBeUndefined();
    expect(finishes).toEqual(['length']);
    expect(listener.end()).toMatchObject({ stop_reason: 'max_tokens', content: [{ type: 'text', text: 'Lorem ipsum' }] });
  });

  it('is failed after an error event, bad data, a cut, or an outside failure', () => {
    const errorEvent = new MessagesStreamListener();
    expect(() => feed(errorEvent, [messageStart(), { type: 'error', error: { type: 'api_error', message: 'x' } }])).toThrow(
      ApiError,
    );
    const badData = new MessagesStreamListener();
    expect(() => badData.pushSse({ event: 'message_start', data: '{oops' })).toThrow(ProtocolError);
    const cut = new MessagesStreamListener();
    feed(cut, [messageStart(), ...textBlock(0, 'a')]);
    expect(() => cut.end()).toThrow(StreamIncompleteError);
    const aborted = new MessagesStreamListener();
    feed(aborted, [messageStart()]);
    aborted.fail(new AbortError('The request was aborted'));
    expect([errorEvent, badData, cut, aborted].map((listener) => listener.status)).toEqual([
      'failed',
      'failed',
      'failed',
      'failed',
    ]);
  });
});

describe('MessagesStreamListener: push and pushSse', () => {
  it('push takes the typed events and gives the same message as pushSse over their JSON', () => {
    const typed = new MessagesStreamListener();
    for (const event of typedAnswer('end_turn')) typed.push(event);
    const wire = new MessagesStreamListener();
    for (const event of typedAnswer('end_turn')) wire.pushSse({ event: 'message', data: JSON.stringify(event) });
    expect(typed.end()).toEqual(wire.end());
    expect(typed.events).toEqual(typedAnswer('end_turn'));
  });

  it('records the error, emits it and throws it; later input is ignored and end() throws the same error', () => {
    const listener = new MessagesStreamListener();
    const emitted: unknown[] = [];
    listener.on('error', (event) => emitted.push(event.error));
    feed(listener, [messageStart(), ...textBlock(0, 'kept')]);
    const error = thrown(() => listener.pushSse({ event: 'content_block_start', data: '{"type":"content_block_start"}' }));
    expect(error).toBeInstanceOf(ProtocolError);
    expect(listener.error).toBe(error);
    expect(emitted).toEqual([error]);
    expect((error as ProtocolError).partial).toMatchObject({ content: [{ type: 'text', text: 'kept' }] });
    feed(listener, [...textBlock(1, 'ignored'), messageDelta('end_turn'), messageStop]);
    expect(listener.text).toBe('kept');
    expect(listener.status).toBe('failed');
    expect(() => listener.end()).toThrow(error as Error);
  });

  it('a known block without the fields it needs is a ProtocolError; one of unknown type is kept as sent', () => {
    const missingId = new MessagesStreamListener();
    feed(missingId, [messageStart()]);
    expect(() => feed(missingId, [blockStart(0, { type: 'tool_use', name: 'f', input: {} })])).toThrow(/id and a name/);
    const unknown = new MessagesStreamListener();
    feed(unknown, [
      messageStart(),
      blockStart(0, { type: 'container_upload', file_id: 'file_1' }),
      { type: 'content_block_stop', index: 0 },
      messageDelta('end_turn'),
      messageStop,
    ]);
    expect(unknown.end().content).toEqual([{ type: 'container_upload', file_id: 'file_1' }]);
  });

  it('a known delta without its field is a ProtocolError', () => {
    const listener = new MessagesStreamListener();
    feed(listener, [messageStart(), blockStart(0, { type: 'text', text: '' })]);
    expect(() =>
      listener.pushSse({ event: 'content_block_delta', data: '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta"}}' }),
    ).toThrow(/text_delta without its text/);
  });

  it('the recorded raw events keep the fields ai4ts does not read', () => {
    const listener = new MessagesStreamListener();
    const raw: unknown[] = [];
    listener.on('event', (event) => raw.push(event));
    const extra = { type: 'content_block_delta', index: 0, trace: 't1', delta: { type: 'text_delta', text: 'a', logprob: -0.1 } };
    feed(listener, [messageStart(), blockStart(0, { type: 'text', text: '' }), extra]);
    expect(listener.events[2]).toEqual(extra);
    expect(raw[2]).toEqual(extra);
  });

  it('message_delta fields beside the stop reason become message fields', () => {
    const listener = new MessagesStreamListener();
    feed(listener, [
      messageStart(),
      ...textBlock(0, 'ok'),
      {
        type: 'message_delta',
        delta: { stop_reason: 'end_turn', stop_sequence: null, container: { id: 'container_1', expires_at: 'soon' } },
        usage: { output_tokens: 3 },
      },
      messageStop,
    ]);
    expect(listener.end().container).toEqual({ id: 'container_1', expires_at: 'soon' });
  });
});

describe('MessagesStreamListener: end and fail', () => {
  it('end() returns the message once completed, again and again', () => {
    const listener = new MessagesStreamListener();
    feed(listener, helloStream());
    expect(listener.end()).toBe(listener.end());
    expect(listener.end()).toBe(listener.message);
  });

  it('end() before message_start throws StreamIncompleteError with partial null', () => {
    const listener = new MessagesStreamListener();
    const error = thrown(() => listener.end());
    expect(error).toBeInstanceOf(StreamIncompleteError);
    expect((error as StreamIncompleteError).partial).toBeUndefined();
    expect(listener.error).toBe(error);
  });

  it('fail() turns any thrown value into an Ai4tsError with the partial, and returns the first error after', () => {
    const listener = new MessagesStreamListener();
    feed(listener, [messageStart(), ...textBlock(0, 'so far')]);
    const first = listener.fail(new TypeError('terminated'));
    expect(first).toBeInstanceOf(ConnectionError);
    expect(first.partial).toMatchObject({ content: [{ type: 'text', text: 'so far' }] });
    expect(listener.fail(new Error('later'))).toBe(first);
    expect(listener.error).toBe(first);
  });

  it('fail() keeps the partial an error already has', () => {
    const listener = new MessagesStreamListener();
    feed(listener, [messageStart()]);
    const own = new AbortError<string>('aborted', { partial: 'mine' });
    expect(listener.fail(own).partial).toBe('mine');
  });

  it('fail() after completion records nothing: the stream stays completed', () => {
    const listener = new MessagesStreamListener();
    feed(listener, helloStream());
    const error = listener.fail(new Error('too late'));
    expect(error).toBeInstanceOf(ConnectionError);
    expect(listener.status).toBe('completed');
    expect(listener.error).toBeUndefined();
    expect(listener.end().content).toEqual([{ type: 'text', text: 'Hello!' }]);
  });
});

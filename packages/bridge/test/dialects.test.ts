import { type BridgeEvent, defineDialect, readNamedEventDialect, readTypedEventDialect } from '@ai4ts/bridge';
import { ApiError, ConnectionError, ProtocolError, RateLimitError, StreamIncompleteError } from '@ai4ts/core';
import fc from 'fast-check';
import { drain, sseFrame, streamOf } from '@ai4ts/test-kit';
import { describe, expect, it } from 'vitest';
import { NAMED_ANSWER, TYPED_ANSWER } from './helpers.js';

describe('readTypedEventDialect', () => {
  it('reads every event type into bridge events', async () => {
    const { events, error } = await drain(readTypedEventDialect(streamOf([TYPED_ANSWER])));
    expect(error).toBeUndefined();
    expect(events).toEqual([
      { type: 'reasoning', delta: 'Let me ', snapshot: 'Let me ', choice: 0 },
      { type: 'reasoning', delta: 'check.', snapshot: 'Let me check.', choice: 0 },
      { type: 'tool_call.start', index: 0, id: 'call_1', name: 'get_weather', choice: 0 },
      { type: 'tool_call.delta', index: 0, id: 'call_1', delta: '{"city":"Paris"}', choice: 0 },
      { type: 'tool_call.done', index: 0, id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}', choice: 0 },
      { type: 'tool.result', id: 'call_1', name: 'get_weather', output: '18C', isError: false, durationMs: 42 },
      {
        type: 'usage',
        usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
        raw: { type: 'tokens', prompt: 10, completion: 5, total: 15 },
      },
      { type: 'reasoning', delta: ' Now answer.', snapshot: 'Let me check. Now answer.', choice: 0 },
      { type: 'content', delta: 'It is ', snapshot: 'It is ', choice: 0 },
      { type: 'content', delta: '18C in Paris.', snapshot: 'It is 18C in Paris.', choice: 0 },
      {
        type: 'usage',
        usage: { prompt_tokens: 30, completion_tokens: 12, total_tokens: 42 },
        raw: { type: 'tokens', prompt: 20, completion: 7, total: 27 },
      },
      { type: 'finish', finishReason: 'stop', choice: 0 },
      {
        type: 'done',
        sessionId: 'daemon-session',
        messageId: undefined,
        usage: { prompt_tokens: 30, completion_tokens: 12, total_tokens: 42 },
        raw: {
          type: 'done',
          tokens: { prompt: 30, completion: 12, total: 42 },
          tool_calls: 1,
          session_id: 'daemon-session',
        },
      },
    ]);
  });

  it('marks a failed tool result as an error and stringifies object arguments', async () => {
    const body =
      sseFrame({ type: 'tool_start', id: 't', name: 'run', arguments: { cmd: 'ls' } }) +
      sseFrame({ type: 'tool_result', id: 't', name: 'run', output: 'denied', success: false, duration_ms: 3 }) +
      sseFrame({ type: 'done' });
    const { events } = await drain(readTypedEventDialect(streamOf([body])));
    expect(events.find((e) => e.type === 'tool_call.done')).toMatchObject({ arguments: '{"cmd":"ls"}' });
    expect(events.find((e) => e.type === 'tool.result')).toMatchObject({
      output: 'denied',
      isError: true,
      durationMs: 3,
    });
  });

  it('keeps unknown types as unknown events and goes on', async () => {
    const body =
      sseFrame({ type: 'progress', percent: 50 }) +
      sseFrame({ type: 'text', content: 'ok' }) +
      sseFrame({ no_type: 1 }) +
      sseFrame({ type: 'done' });
    const { events, error } = await drain(readTypedEventDialect(streamOf([body])));
    expect(error).toBeUndefined();
    expect(events.filter((e) => e.type === 'unknown')).toEqual([
      { type: 'unknown', name: 'progress', data: { type: 'progress', percent: 50 } },
      { type: 'unknown', name: '', data: { no_type: 1 } },
    ]);
    expect(events.map((e) => e.type)).toEqual(['unknown', 'content', 'unknown', 'finish', 'done']);
  });

  it('fails a stream that ends without done, with the partial completion', async () => {
    const body = sseFrame({ type: 'reasoning', content: 'hmm' }) + sseFrame({ type: 'text', content: 'Half an ans' });
    const { events, error } = await drain(readTypedEventDialect(streamOf([body])));
    expect(events).toHaveLength(2);
    expect(error).toBeInstanceOf(StreamIncompleteError);
    const partial = (error as StreamIncompleteError).partial as {
      choices: [{ message: unknown; finish_reason: unknown }];
    };
    expect(partial.choices[0].message).toEqual({ role: 'assistant', content: 'Half an ans', reasoning_content: 'hmm' });
    expect(partial.choices[0].finish_reason).toBeNull();
  });

  it('fails on an error event even when done follows', async () => {
    const body =
      sseFrame({ type: 'text', content: 'Start' }) +
      sseFrame({ type: 'error', message: 'model crashed', code: 'oom' }) +
      sseFrame({ type: 'done', session_id: 's' });
    const { events, error } = await drain(readTypedEventDialect(streamOf([body])));
    expect(events.map((e) => e.type)).toEqual(['content']);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ message: 'model crashed', code: 'oom', status: undefined });
    expect((error as ApiError).partial).toMatchObject({ choices: [{ message: { content: 'Start' } }] });
  });

  it('raises ProtocolError with the line for data that is not JSON', async () => {
    const { error } = await drain(
      readTypedEventDialect(streamOf([sseFrame({ type: 'text', content: 'a' }), 'data: {oops\n\n'])),
    );
    expect(error).toBeInstanceOf(ProtocolError);
    expect((error as ProtocolError).line).toBe('{oops');
    expect((error as ProtocolError).partial).toMatchObject({ choices: [{ message: { content: 'a' } }] });
  });

  it('raises ConnectionError with the partial when the body breaks', async () => {
    const encoder = new TextEncoder();
    let sent = false;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent) controller.error(new TypeError('socket hang up'));
        else controller.enqueue(encoder.encode(sseFrame({ type: 'text', content: 'so far' })));
        sent = true;
      },
    });
    const { error } = await drain(readTypedEventDialect(body));
    expect(error).toBeInstanceOf(ConnectionError);
    expect((error as ConnectionError).partial).toMatchObject({ choices: [{ message: { content: 'so far' } }] });
  });

  it('turns an HTTP error response into the typed ApiError', async () => {
    const response = new Response(JSON.stringify({ error: 'slow down' }), {
      status: 429,
      headers: { 'retry-after': '7' },
    });
    const { error } = await drain(readTypedEventDialect(response));
    expect(error).toBeInstanceOf(RateLimitError);
    expect((error as RateLimitError).retryAfterMs).toBe(7000);
  });

  it('stops reading at done', async () => {
    let pulls = 0;
    const encoder = new TextEncoder();
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulls++;
        controller.enqueue(
          encoder.encode(pulls === 1 ? sseFrame({ type: 'done' }) : sseFrame({ type: 'text', content: 'x' })),
        );
      },
    });
    const { events, error } = await drain(readTypedEventDialect(body));
    expect(error).toBeUndefined();
    expect(events.map((e) => e.type)).toEqual(['finish', 'done']);
  });

  it('yields the same events however the bytes are split', async () => {
    const bytes = new TextEncoder().encode(TYPED_ANSWER.replace('Paris.', 'Paris ☀️ é.'));
    const whole = await drain(readTypedEventDialect(streamOf([bytes])));
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.integer({ min: 1, max: bytes.length - 1 }), { maxLength: 40 }),
        async (cuts) => {
          const points = [0, ...cuts.sort((a, b) => a - b), bytes.length];
          const pieces = points.slice(1).map((end, i) => bytes.slice(points[i], end));
          expect(await drain(readTypedEventDialect(streamOf(pieces)))).toEqual(whole);
        },
      ),
      { numRuns: 100 },
    );
  });
});

describe('readNamedEventDialect', () => {
  it('reads every event type into bridge events', async () => {
    const { events, error } = await drain(readNamedEventDialect(streamOf([NAMED_ANSWER])));
    expect(error).toBeUndefined();
    expect(events).toEqual([
      { type: 'start', sessionId: undefined, messageId: 'm-1' },
      { type: 'content', delta: 'Hello', snapshot: 'Hello', choice: 0 },
      { type: 'content', delta: ', world', snapshot: 'Hello, world', choice: 0 },
      { type: 'finish', finishReason: 'stop', choice: 0 },
      { type: 'done', sessionId: undefined, messageId: 'm-1', usage: undefined, raw: { message_id: 'm-1' } },
    ]);
  });

  it('accepts a null message_id on done when nothing was produced', async () => {
    const body = sseFrame({ message_id: null }, 'start') + sseFrame({ message_id: null }, 'done');
    const { events, error } = await drain(readNamedEventDialect(streamOf([body])));
    expect(error).toBeUndefined();
    expect(events.map((e) => e.type)).toEqual(['start', 'finish', 'done']);
    expect(events[2]).toMatchObject({ messageId: undefined });
  });

  it('fails on an error right after start, with no done', async () => {
    const body = sseFrame({ message_id: 'm-2' }, 'start') + sseFrame({ error: 'quota exceeded', type: 'quota' }, 'error');
    const { events, error } = await drain(readNamedEventDialect(streamOf([body])));
    expect(events.map((e) => e.type)).toEqual(['start']);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ message: 'quota exceeded', code: 'quota' });
    expect((error as ApiError).partial).toMatchObject({
      choices: [{ message: { content: null }, finish_reason: null }],
    });
  });

  it('reads an event with empty data by its name alone', async () => {
    const body = `${sseFrame({ message_id: 'm' }, 'start')}event: ping\ndata:\n\nevent: done\ndata:\n\n`;
    const { events, error } = await drain(readNamedEventDialect(streamOf([body])));
    expect(error).toBeUndefined();
    expect(events.map((e) => e.type)).toEqual(['start', 'unknown', 'finish', 'done']);
    expect(events[1]).toEqual({ type: 'unknown', name: 'ping', data: {} });
  });

  it('keeps unknown event names and fails a stream cut before done', async () => {
    const body =
      sseFrame({ message_id: 'm' }, 'start') + sseFrame({ on: true }, 'typing') + sseFrame({ content: 'Hi' }, 'message');
    const { events, error } = await drain(readNamedEventDialect(streamOf([body])));
    expect(events[1]).toEqual({ type: 'unknown', name: 'typing', data: { on: true } });
    expect(error).toBeInstanceOf(StreamIncompleteError);
    expect((error as StreamIncompleteError).partial).toMatchObject({ choices: [{ message: { content: 'Hi' } }] });
  });

  it('yields the same events however the bytes are split', async () => {
    const bytes = new TextEncoder().encode(NAMED_ANSWER);
    const whole = await drain(readNamedEventDialect(streamOf([bytes])));
    for (const size of [1, 2, 3, 7, 64]) {
      const pieces: Uint8Array[] = [];
      for (let i = 0; i < bytes.length; i += size) pieces.push(bytes.slice(i, i + size));
      expect(await drain(readNamedEventDialect(streamOf(pieces)))).toEqual(whole);
    }
  });
});

describe('defineDialect', () => {
  it('adds a third dialect in a few lines, with its own field names', async () => {
    const mine = defineDialect({
      name: 'mine',
      typeField: 'kind',
      usageFields: { prompt: 'in', completion: 'out', total: 'sum' },
      events: {
        think: { kind: 'reasoning', text: 'txt' },
        delta: { kind: 'text', text: 'token' },
        cost: { kind: 'usage' },
        end: { kind: 'done', sessionId: 'conversation' },
        fail: { kind: 'error' },
      },
      request: ({ message }) => ({ prompt: message }),
    });
    const body = [
      'data: {"kind":"think","txt":"A"}\n\n',
      'data: {"kind":"delta","token":"B"}\n\n',
      'data: {"kind":"cost","in":1,"out":2,"sum":3}\n\n',
      'data: {"kind":"cost","in":4,"out":5,"sum":9}\n\n',
      'data: {"kind":"end","conversation":"c-9"}\n\n',
    ].join('');
    const { events, error } = await drain(mine.read(streamOf([body])));
    expect(error).toBeUndefined();
    const usage = events.filter((e): e is Extract<BridgeEvent, { type: 'usage' }> => e.type === 'usage').at(-1);
    expect(usage?.usage).toEqual({ prompt_tokens: 5, completion_tokens: 7, total_tokens: 12 });
    expect(events.at(-1)).toMatchObject({ type: 'done', sessionId: 'c-9' });
    expect(mine.request({ message: 'hi', sessionId: undefined, request: {} })).toEqual({ prompt: 'hi' });
  });
});

/**
 * Stream execution over real sockets on 127.0.0.1: a Messages stream whose first event is a retryable error
 * (`overloaded_error`) is sent again; one that failed after message_start is not.
 */
import { ApiError, Transport } from '@ai4ts/core';
import { MessagesStreamListener, streamMessage } from '@ai4ts/messages';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { serve, startSse, type TestServer, sseText } from '@ai4ts/test-kit';
import { helloStream, messageStart, overloaded, ping, textBlock } from './fixtures.js';

let server: TestServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

const request = { model: 'claude-test', max_tokens: 64, messages: [{ role: 'user' as const, content: 'hi' }] };

/** Request 1 gets `first` (SSE text), every later one the whole hello answer. */
async function failingOnce(first: string): Promise<Transport> {
  server = await serve((_req, res, n) => {
    startSse(res);
    res.end(n === 1 ? first : sseText(helloStream(), { named: true }));
  });
  return new Transport({ provider: 'anthropic', baseURL: server.baseURL, apiKey: 'sk-local', backoff: { initialMs: 1 } });
}

describe('Messages stream retries before the first event', () => {
  it('an overloaded_error first event (after a ping) is sent again', async () => {
    const transport = await failingOnce(sseText([ping, overloaded()], { named: true }));
    const onRetry = vi.fn();
    const stream = streamMessage(transport, request, { onRetry });
    const retries: unknown[] = [];
    stream.on('retry', (event) => retries.push(event));
    const message = await stream.final();
    expect(message.content).toEqual([{ type: 'text', text: 'Hello!' }]);
    expect(server?.requests).toBe(2);
    expect(retries).toEqual([{ type: 'retry', attempt: 1, error: expect.any(ApiError), delayMs: expect.any(Number) }]);
    expect(onRetry).toHaveBeenCalledWith(expect.objectContaining({ code: 'overloaded_error' }), 1, expect.any(Number));
    expect(stream.listener.events.filter((event) => event.type === 'message_start')).toHaveLength(1);
  });

  it('never after message_start: the error keeps its partial', async () => {
    const transport = await failingOnce(sseText([messageStart(), ...textBlock(0, 'Hel'), overloaded()], { named: true }));
    const error: unknown = await streamMessage(transport, request).final().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ code: 'overloaded_error', partial: { content: [{ type: 'text', text: 'Hel' }] } });
    expect(server?.requests).toBe(1);
  });
});

describe('MessagesStreamListener.reset', () => {
  it('makes a used listener read like a new one, its handlers kept', () => {
    const used = new MessagesStreamListener();
    const deltas: string[] = [];
    used.on('content', (event) => deltas.push(event.delta));
    for (const event of [messageStart(), ...textBlock(0, 'one'), overloaded()]) {
      try {
        used.pushSse({ event: event.type, data: JSON.stringify(event) });
      } catch {
        // The overloaded error fails the listener; reset must clear that too.
      }
    }
    used.reset();
    const fresh = new MessagesStreamListener();
    for (const listener of [used, fresh]) {
      expect(listener.status).toBe('pending');
      for (const event of helloStream()) listener.pushSse({ event: event.type, data: JSON.stringify(event) });
    }
    expect(used.end()).toEqual(fresh.end());
    expect(used.events).toEqual(fresh.events);
    expect(deltas).toEqual(['one', 'Hello', '!']);
  });
});

/**
 * Stream execution over real sockets on 127.0.0.1: a chat stream that failed before its first event is sent
 * again (a first-token stall, a dropped connection, a retryable in-stream error), never once content arrived;
 * and the preset quirk for providers that end with `[DONE]` and no finish_reason.
 */
import type { ServerResponse } from 'node:http';
import { ApiError, ConnectionError, resolveProvider, StreamIncompleteError, TimeoutError, Transport, type TransportOptions } from '@ai4ts/core';
import { type ChatStream, ChatStreamListener, streamChatCompletion } from '@ai4ts/chat';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { serve, sseFrame, startSse, type TestServer } from '@ai4ts/test-kit';
import { chunk, finish } from './helpers.js';

let server: TestServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

const request = { model: 'test-model', messages: [{ role: 'user' as const, content: 'hi' }] };

/** A whole answer saying `text`. */
function answer(res: ServerResponse, text: string): void {
  startSse(res);
  res.end(`${sseFrame(chunk({ content: text }))}${sseFrame(finish('stop'))}data: [DONE]\n\n`);
}

/** A server whose request `n` gets `first(res)` when n is 1, and the answer `attempt n` after. */
async function failingOnce(first: (res: ServerResponse) => void, options: TransportOptions = {}): Promise<Transport> {
  server = await serve((_req, res, n) => (n === 1 ? first(res) : answer(res, `attempt ${n}`)));
  return new Transport({ baseURL: server.baseURL, apiKey: 'sk-local', backoff: { initialMs: 1 }, ...options });
}

/** Runs the stream and records its retry events. */
async function settle(stream: ChatStream) {
  const retries: { attempt: number; error: unknown; delayMs: number }[] = [];
  stream.on('retry', ({ attempt, error, delayMs }) => retries.push({ attempt, error, delayMs }));
  const result = await stream.final().then(
    (completion) => ({ completion, error: undefined }),
    (error: unknown) => ({ completion: undefined, error }),
  );
  return { ...result, retries };
}

describe('chat stream retries before the first event', () => {
  it('a first-token stall is sent again: the result is the second attempt, retry and onRetry fire once', async () => {
    const transport = await failingOnce(startSse, { firstTokenTimeout: 100 });
    const onRetry = vi.fn();
    const stream = streamChatCompletion(transport, request, { onRetry });
    const events: string[] = [];
    stream.on('content', (event) => events.push(event.delta));
    const { completion, retries } = await settle(stream);
    expect(completion?.choices[0]?.message.content).toBe('attempt 2');
    expect(events).toEqual(['attempt 2']);
    expect(server?.requests).toBe(2);
    expect(retries).toHaveLength(1);
    expect(retries[0]?.attempt).toBe(1);
    expect(retries[0]?.error).toBeInstanceOf(TimeoutError);
    expect(onRetry).toHaveBeenCalledTimes(1);
    expect(onRetry).toHaveBeenCalledWith(retries[0]?.error, 1, retries[0]?.delayMs);
    expect(stream.listener.status).toBe('completed');
  });

  it('a connection dropped before any event is sent again; onRetry from the client options', async () => {
    const onRetry = vi.fn();
    const transport = await failingOnce(
      (res) => {
        startSse(res);
        res.destroy();
      },
      { onRetry },
    );
    const { completion } = await settle(streamChatCompletion(transport, request));
    expect(completion?.choices[0]?.message.content).toBe('attempt 2');
    expect(server?.requests).toBe(2);
    expect(onRetry).toHaveBeenCalledTimes(1);
  });

  it('a first event that is a server_error is sent again', async () => {
    const transport = await failingOnce((res) => {
      startSse(res);
      res.end(sseFrame({ error: { type: 'server_error', message: 'try again' } }));
    });
    const { completion, retries } = await settle(streamChatCompletion(transport, request));
    expect(completion?.choices[0]?.message.content).toBe('attempt 2');
    expect(retries[0]?.error).toBeInstanceOf(ApiError);
  });

  it('a first event that is not retryable (invalid_request_error) fails at once', async () => {
    const transport = await failingOnce((res) => {
      startSse(res);
      res.end(sseFrame({ error: { type: 'invalid_request_error', message: 'no' } }));
    });
    const { error, retries } = await settle(streamChatCompletion(transport, request));
    expect(error).toBeInstanceOf(ApiError);
    expect(retries).toEqual([]);
    expect(server?.requests).toBe(1);
  });

  it('never after content arrived: the error keeps its partial', async () => {
    const transport = await failingOnce((res) => {
      startSse(res);
      res.write(sseFrame(chunk({ content: 'half' })));
      setTimeout(() => res.destroy(), 20);
    });
    const { error, retries } = await settle(streamChatCompletion(transport, request));
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error).toMatchObject({ partial: { choices: [{ message: { content: 'half' } }] } });
    expect(retries).toEqual([]);
    expect(server?.requests).toBe(1);
  });

  it('maxRetries 0 disables it, per request as per client', async () => {
    const transport = await failingOnce(startSse, { firstTokenTimeout: 50 });
    const { error } = await settle(streamChatCompletion(transport, request, { maxRetries: 0 }));
    expect(error).toBeInstanceOf(TimeoutError);
    expect(server?.requests).toBe(1);
  });

  it('stops after maxRetries attempts, with the last failure', async () => {
    server = await serve((_req, res) => startSse(res));
    const transport = new Transport({
      baseURL: server.baseURL,
      apiKey: 'sk-local',
      backoff: { initialMs: 1 },
      maxRetries: 1,
      firstTokenTimeout: 50,
    });
    const { error, retries } = await settle(streamChatCompletion(transport, request));
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toMatchObject({ phase: 'first_token', partial: undefined });
    expect(retries).toHaveLength(1);
    expect(server.requests).toBe(2);
  });
});

describe('ChatStreamListener.reset', () => {
  it('makes a used listener read like a new one, its handlers kept', () => {
    const used = new ChatStreamListener();
    const deltas: string[] = [];
    used.on('content', (event) => deltas.push(event.delta));
    const first = [chunk({ content: 'one', tool_calls: [{ index: 0, id: 'c', function: { name: 'f', arguments: '{}' } }] }), { ...finish('tool_calls'), usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }];
    for (const data of first) used.push(data);
    used.pushSse({ event: 'message', data: '[DONE]' });
    used.reset();
    const fresh = new ChatStreamListener();
    for (const listener of [used, fresh]) {
      expect(listener.status).toBe('pending');
      listener.push(chunk({ content: 'two' }));
      listener.push(finish('stop'));
      listener.pushSse({ event: 'message', data: '[DONE]' });
    }
    expect(used.end()).toEqual(fresh.end());
    expect(used.lastChunk).toEqual(fresh.lastChunk);
    expect(deltas).toEqual(['one', 'two']);
  });
});

describe('[DONE] without a finish_reason', () => {
  async function doneOnly(quirk: boolean) {
    server = await serve((_req, res) => {
      startSse(res);
      res.end(`${sseFrame(chunk({ content: 'hi' }))}data: [DONE]\n\n`);
    });
    const openai = resolveProvider('openai-compatible');
    const provider = { ...openai, quirks: { ...openai.quirks, doneWithoutFinishReason: quirk } };
    return settle(streamChatCompletion(new Transport({ provider, baseURL: server.baseURL }), request));
  }

  it('fails by default (strict)', async () => {
    const { error } = await doneOnly(false);
    expect(error).toBeInstanceOf(StreamIncompleteError);
  });

  it('completes as stop with the doneWithoutFinishReason quirk', async () => {
    const { completion } = await doneOnly(true);
    expect(completion?.choices[0]).toMatchObject({ message: { content: 'hi' }, finish_reason: 'stop' });
  });
});

/**
 * ChatService over real sockets on 127.0.0.1: ordinary answers against @ai4ts/testing's scripted model; stalls,
 * aborts and a daemon that streams unasked against the test kit's node:http server.
 */
import type { ServerResponse } from 'node:http';
import {
  AbortError,
  Ai4tsError,
  ConnectionError,
  RateLimitError,
  StreamIncompleteError,
  TimeoutError,
  PROVIDERS,
  Transport,
  type TransportOptions,
} from '@ai4ts/core';
import { type ChatCompletion, ChatService } from '@ai4ts/chat';
import { type MockModel, type MockTurn, startMockModel } from '@ai4ts/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { type RequestHandler, serve, sseText, type TestServer } from '@ai4ts/test-kit';
import { chunk, finish } from './helpers.js';

let server: TestServer | undefined;
let model: MockModel | undefined;

afterEach(async () => {
  await model?.close();
  model = undefined;
  await server?.close();
  server = undefined;
});

/** A ChatService in front of @ai4ts/testing's scripted model answering `script`. */
async function mocked(script: MockTurn[]): Promise<ChatService> {
  model = await startMockModel({ script });
  return new ChatService(new Transport({ baseURL: model.baseURL, apiKey: 'sk-local', maxRetries: 0 }));
}

/** A ChatService in front of a test server; `closed` resolves when the response to its first request is closed. */
async function serveChat(
  handler: RequestHandler,
  options: TransportOptions = {},
): Promise<{ chat: ChatService; closed: Promise<void> }> {
  server = await serve(handler);
  const transport = new Transport({ baseURL: server.baseURL, apiKey: 'sk-local', maxRetries: 0, ...options });
  return { chat: new ChatService(transport), closed: server.closed(1) };
}

/** Writes SSE headers and the given events, then leaves the response open. */
function startStream(res: ServerResponse, text: string): void {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.write(text);
}

const request = { model: 'local', messages: [{ role: 'user' as const, content: 'Hi' }] };
const contentOf = (error: unknown) => (error as { partial: ChatCompletion }).partial.choices[0]?.message.content;

describe('ChatService against the scripted model', () => {
  it('streams chunks written over time to the final completion', async () => {
    const chat = await mocked([{ content: 'Hello', chunkDelayMs: 20 }]);
    const completion = await chat.stream(request).final();
    expect(completion.choices[0]?.message.content).toBe('Hello');
  });

  // The stream asks for usage, so its last three events are the finish chunk, the usage chunk and [DONE]: -3 cuts before the finish.
  it('a server that drops the connection mid-stream gives ConnectionError with the partial', async () => {
    const chat = await mocked([{ content: 'cut here', cutOff: { afterChunks: -3, reset: true } }]);
    const error = await chat.stream(request).final().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectionError);
    expect(contentOf(error)).toBe('cut here');
    expect(model?.requests[0]?.body).toMatchObject({ stream_options: { include_usage: true } });
  });

  it('a server that ends cleanly after the finish (with or without the usage chunk) but before [DONE] gives StreamIncompleteError', async () => {
    for (const afterChunks of [-1, -2]) {
      const chat = await mocked([{ content: 'nearly done', cutOff: { afterChunks } }]);
      const error = await chat.stream(request).final().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StreamIncompleteError);
      expect(error).toMatchObject({ partial: { choices: [{ message: { content: 'nearly done' }, finish_reason: 'stop' }] } });
      await model?.close();
      model = undefined;
    }
  });

  it('a server that ends cleanly before any finish_reason gives StreamIncompleteError', async () => {
    const chat = await mocked([{ content: 'never finished', cutOff: { afterChunks: -3 } }]);
    await expect(chat.stream(request).final()).rejects.toMatchObject({
      name: 'StreamIncompleteError',
      partial: { choices: [{ message: { content: 'never finished' } }] },
    });
  });

  it('streams reasoning, text and usage to the final completion', async () => {
    const usage = { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19, completion_tokens_details: { reasoning_tokens: 3 } };
    const chat = await mocked([{ reasoning: 'A capital city.', content: 'Paris is the capital of France.', usage }]);
    const stream = chat.stream(request);
    const reasoning: string[] = [];
    const content: string[] = [];
    stream.on('reasoning', (e) => reasoning.push(e.delta));
    stream.on('content', (e) => content.push(e.delta));
    const completion = await stream.final();
    expect(reasoning.join('')).toBe('A capital city.');
    expect(content.join('')).toBe('Paris is the capital of France.');
    expect(content.length).toBeGreaterThan(1);
    expect(completion.choices[0]?.message).toEqual({
      role: 'assistant',
      content: 'Paris is the capital of France.',
      reasoning_content: 'A capital city.',
    });
    expect(completion.choices[0]?.finish_reason).toBe('stop');
    expect(completion.usage).toEqual(usage);
  });

  it('an error event after output began rejects final() with the text so far in .partial', async () => {
    const chat = await mocked([{ content: 'so far', streamError: { message: 'Upstream died', type: 'server_error' } }]);
    const error = await chat.stream(request).final().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Ai4tsError);
    expect((error as Ai4tsError).message).toContain('Upstream died');
    expect(contentOf(error)).toBe('so far');
  });

  it('an HTTP 429 rejects create() and stream() with RateLimitError, the typed ApiError', async () => {
    const chat = await mocked([{ httpError: { status: 429 } }, { httpError: { status: 429 } }]);
    const created = await chat.create(request).catch((e: unknown) => e);
    expect(created).toBeInstanceOf(RateLimitError);
    expect(created).toMatchObject({ status: 429, message: expect.stringContaining('Scripted HTTP 429') });
    const streamed = await chat.stream(request).final().catch((e: unknown) => e);
    expect(streamed).toBeInstanceOf(RateLimitError);
    expect(streamed).toMatchObject({ status: 429 });
  });
});

// Hand-rolled: these stall at a chosen moment, need to see the server's side of the socket close, or stream unasked.
describe('ChatService over node:http', () => {
  it('abort() mid-stream rejects with AbortError carrying the text so far and releases the socket', async () => {
    const { chat, closed } = await serveChat((_req, res) => startStream(res, sseText([chunk({ content: 'first words' })])));
    const stream = chat.stream(request);
    stream.on('content', () => stream.abort());
    const error = await stream.final().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AbortError);
    expect(contentOf(error)).toBe('first words');
    await closed;
  });

  it('leaving the for-await loop early aborts the request and releases the socket', async () => {
    const { chat, closed } = await serveChat((_req, res) => startStream(res, sseText([chunk({ content: 'a' }), chunk({ content: 'b' })])));
    const stream = chat.stream(request);
    for await (const event of stream) if (event.type === 'content') break;
    await closed;
    await expect(stream.final()).rejects.toBeInstanceOf(AbortError);
  });

  it('cancelling toReadableStream() aborts the request and releases the socket', async () => {
    const { chat, closed } = await serveChat((_req, res) => startStream(res, sseText([chunk({ content: 'a' })])));
    const stream = chat.stream(request);
    const reader = stream.toReadableStream().getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toContain('event: content\ndata: {"type":"content","delta":"a"');
    await reader.cancel();
    await closed;
    await expect(stream.final()).rejects.toBeInstanceOf(AbortError);
  });

  it('an idle stall gives TimeoutError (phase idle) with the text so far in .partial', async () => {
    const { chat, closed } = await serveChat(
      (_req, res) => startStream(res, sseText([chunk({ role: 'assistant', content: 'so far' })])),
      { idleTimeout: 150 },
    );
    const error = await chat.stream(request).final().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TimeoutError);
    expect((error as TimeoutError).phase).toBe('idle');
    expect(contentOf(error)).toBe('so far');
    await closed;
  });

  it('create() against an always-streaming daemon (Ollama-like) aggregates the SSE answer', async () => {
    let body: Record<string, unknown> = {};
    const { chat } = await serveChat((_req, res, n) => {
      body = JSON.parse(server?.bodies[n - 1] ?? '') as Record<string, unknown>;
      startStream(res, `${sseText([chunk({ content: '<think>hm</think>Hi' }), finish('stop')])}data: [DONE]\n\n`);
      res.end();
    });
    const completion = await chat.create(request);
    expect(body).not.toHaveProperty('stream');
    expect(completion.choices[0]?.message).toEqual({ role: 'assistant', content: 'Hi', reasoning_content: 'hm' });
  });

  // One listener constructor for both calls: the preset's quirk held for stream() but not for create(), which threw
  // StreamIncompleteError against the very server stream() read to the end.
  it("create() against a streaming daemon follows the preset's doneWithoutFinishReason, as stream() does", async () => {
    const preset = { ...PROVIDERS['openai-compatible'], quirks: { streamOptions: true, doneWithoutFinishReason: true } };
    const { chat } = await serveChat(
      (_req, res) => {
        startStream(res, `${sseText([chunk({ role: 'assistant', content: 'no finish reason' })])}data: [DONE]\n\n`);
        res.end();
      },
      { provider: preset },
    );
    const streamed = await chat.stream(request).final();
    const created = await chat.create(request);
    expect(created.choices[0]).toEqual(streamed.choices[0]);
    expect(created.choices[0]).toMatchObject({ finish_reason: 'stop', message: { content: 'no finish reason' } });
  });
});


/**
 * The service over real sockets: @ai4ts/testing's scripted model for streams, stream errors, cut-offs and HTTP
 * errors; the test kit's node:http server where a test needs control the mock does not give.
 */
import type { ServerResponse } from 'node:http';
import { AbortError, ApiError, ConnectionError, TimeoutError, Transport } from '@ai4ts/core';
import { type MockModel, type MockTurn, startMockModel } from '@ai4ts/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { serve, sseText, startSse, type TestServer } from '@ai4ts/test-kit';
import { type Message, MessagesService, type MessageCreateParams } from '../src/index.js';
import { blockStart, delta, messageStart } from './fixtures.js';

let running: TestServer | undefined;
let model: MockModel | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
  await model?.close();
  model = undefined;
});

/** The scripted model answering one turn; resolves to its `/v1` URL. */
async function mock(...script: MockTurn[]): Promise<string> {
  model = await startMockModel({ script });
  return model.baseURL;
}

/** A test server whose handler writes the SSE body; the headers go out at once. */
async function serveSse(write: (res: ServerResponse) => void | Promise<void>): Promise<TestServer> {
  running = await serve((_req, res) => {
    startSse(res);
    void write(res);
  });
  return running;
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 5));
const service = (url: string, options: { idleTimeout?: number } = {}) =>
  new MessagesService(
    new Transport({ provider: 'anthropic', apiKey: 'sk-ant-local', baseURL: url, maxRetries: 0, ...options }),
  );
const request: MessageCreateParams = {
  model: 'claude-sonnet-4-5',
  max_tokens: 256,
  messages: [{ role: 'user', content: 'Weather?' }],
};
const textSoFar = sseText([
  messageStart(),
  blockStart(0, { type: 'text', text: '' }),
  delta(0, { type: 'text_delta', text: 'It is ' }),
], { named: true });

describe('MessagesService against the scripted model', () => {
  it('final() alone collects a stream written one event per chunk', async () => {
    const url = await mock({
      reasoning: 'The user wants the weather.',
      content: 'Let me check that.',
      toolCalls: [
        {
          id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6',
          name: 'get_weather',
          arguments: { location: 'San Francisco, CA "the city"', unit: 'fahrenheit' },
        },
      ],
      usage: { prompt_tokens: 472, completion_tokens: 89, total_tokens: 561 },
      chunkDelayMs: 5,
    });
    const message = await service(url).stream(request).final();
    expect(message.content.map((b) => b.type)).toEqual(['thinking', 'text', 'tool_use']);
    expect(message.content[2]).toMatchObject({ input: { location: 'San Francisco, CA "the city"', unit: 'fahrenheit' } });
    expect(message.usage.output_tokens).toBe(89);
    expect(model?.requests.map((r) => r.body)).toEqual([{ ...request, stream: true }]);
  });

  it('overloaded_error after text began rejects with ApiError holding the partial text', async () => {
    const url = await mock({ content: 'It is ', streamError: { message: 'Overloaded', type: 'overloaded_error' } });
    const stream = service(url).stream(request);
    const deltas: string[] = [];
    stream.on('content', (e) => deltas.push(e.delta));
    const error = (await stream.final().catch((e: unknown) => e)) as ApiError<Message>;
    expect(error).toBeInstanceOf(ApiError);
    expect(error.code).toBe('overloaded_error');
    expect(error.type).toBe('overloaded_error');
    expect(error.partial?.content).toEqual([{ type: 'text', text: 'It is ' }]);
    expect(deltas.join('')).toBe('It is ');
    expect(stream.listener.status).toBe('failed');
  });

  it('an HTTP error rejects with the typed ApiError in Anthropic\'s shape and a partial of null', async () => {
    const url = await mock({ httpError: { status: 529 } });
    const error = (await service(url)
      .stream(request)
      .final()
      .catch((e: unknown) => e)) as ApiError<Message>;
    expect(error).toBeInstanceOf(ApiError);
    expect(error.status).toBe(529);
    expect(error.type).toBe('overloaded_error');
    expect(error.message).toContain('Scripted HTTP 529');
    expect(error.partial).toBeUndefined();
  });

  it('a server that drops the connection mid-stream gives ConnectionError with the partial', async () => {
    // -3: after the text deltas, before content_block_stop, message_delta and message_stop.
    const url = await mock({ content: 'It is ', cutOff: { afterChunks: -3, reset: true } });
    const error = (await service(url)
      .stream(request)
      .final()
      .catch((e: unknown) => e)) as ConnectionError<Message>;
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error.partial?.content).toEqual([{ type: 'text', text: 'It is ' }]);
  });

  it('a server that ends cleanly without message_stop gives StreamIncompleteError', async () => {
    const url = await mock({ content: 'It is ', cutOff: { afterChunks: -3 } });
    const error = (await service(url)
      .stream(request)
      .final()
      .catch((e: unknown) => e)) as Error;
    expect(error.name).toBe('StreamIncompleteError');
  });

  it('a failing stream nobody awaits raises no unhandled rejection', async () => {
    const url = await mock({ content: 'It is ', streamError: { message: 'Overloaded', type: 'overloaded_error' } });
    const stream = service(url).stream(request);
    const failed = await new Promise<unknown>((resolve) => stream.on('error', (e) => resolve(e.error)));
    expect(failed).toBeInstanceOf(ApiError);
    await tick(); // an unhandled rejection would surface here and fail the run
  });
});

describe('MessagesService over a hand-rolled node:http server', () => {
  it('abort() mid-stream rejects with AbortError holding the partial and releases the socket', async () => {
    // Hand-rolled: the server must see the socket close; the mock does not report it.
    const server = await serveSse((res) => {
      res.write(textSoFar); // then silence: only the abort ends the wait
    });
    const stream = service(server.baseURL).stream(request);
    stream.on('content', () => stream.abort());
    const error = (await stream.final().catch((e: unknown) => e)) as AbortError<Message>;
    expect(error).toBeInstanceOf(AbortError);
    expect(error.partial?.content).toEqual([{ type: 'text', text: 'It is ' }]);
    await server.closed(1);
  });

  it("the caller's signal aborts the stream too", async () => {
    // Hand-rolled: the server must see the socket close; the mock does not report it.
    const server = await serveSse((res) => {
      res.write(textSoFar);
    });
    const controller = new AbortController();
    const stream = service(server.baseURL).stream(request, { signal: controller.signal });
    stream.on('content', () => controller.abort());
    await expect(stream.final()).rejects.toBeInstanceOf(AbortError);
    await server.closed(1);
  });

  it('breaking out of the iteration aborts the request and releases the socket, without an unhandled rejection', async () => {
    // Hand-rolled: the server must see the socket close; the mock does not report it.
    const server = await serveSse((res) => {
      res.write(textSoFar);
    });
    const stream = service(server.baseURL).stream(request);
    for await (const event of stream) {
      if (event.type === 'content') break;
    }
    await server.closed(1);
    await expect(stream.final()).rejects.toBeInstanceOf(AbortError);
  });

  it('a stall past idleTimeout gives TimeoutError with the partial', async () => {
    // Hand-rolled: the stall must start after the text, and the mock's chunkDelayMs delays every event alike.
    const server = await serveSse((res) => {
      res.write(textSoFar);
    });
    const error = (await service(server.baseURL, { idleTimeout: 50 })
      .stream(request)
      .final()
      .catch((e: unknown) => e)) as TimeoutError<Message>;
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error.phase).toBe('idle');
    expect(error.partial?.content).toEqual([{ type: 'text', text: 'It is ' }]);
    await server.closed(1);
  });
});

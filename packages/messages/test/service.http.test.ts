/** The service over real sockets: chunked writes, aborts, disconnects, stalls and stream errors. */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AbortError, ApiError, ConnectionError, TimeoutError, Transport } from '@ai4ts/core';
import { afterEach, describe, expect, it } from 'vitest';
import { type Message, MessagesService, type MessageCreateParams } from '../src/index.js';
import { blockStart, delta, messageStart, overloaded, sseText, thinkingTextToolStream } from './fixtures.js';

interface Running {
  url: string;
  /** Resolves when the n-th response (1-based) closed, from either side. */
  closed(n: number): Promise<void>;
  stop(): Promise<void>;
}

let running: Running | undefined;
afterEach(async () => {
  await running?.stop();
  running = undefined;
});

/** A server on 127.0.0.1 whose handler writes the SSE body; headers go out at once. */
async function serve(write: (res: ServerResponse) => void | Promise<void>): Promise<Running> {
  const closes: Promise<void>[] = [];
  const server = createServer((req, res) => {
    closes.push(new Promise((resolve) => res.once('close', () => resolve())));
    req.resume();
    req.once('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.flushHeaders();
      void write(res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  running = {
    url: `http://127.0.0.1:${port}/v1`,
    closed: (n) => closes[n - 1] ?? Promise.reject(new Error(`no request ${n}`)),
    stop: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
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
]);

describe('MessagesService over node:http', () => {
  it('final() alone collects a stream written one event per chunk', async () => {
    const server = await serve(async (res) => {
      for (const event of thinkingTextToolStream()) {
        res.write(sseText([event]));
        await tick();
      }
      res.end();
    });
    const message = await service(server.url).stream(request).final();
    expect(message.content.map((b) => b.type)).toEqual(['thinking', 'text', 'tool_use']);
    expect(message.usage.output_tokens).toBe(89);
  });

  it('overloaded_error after text began rejects with ApiError holding the partial text', async () => {
    const server = await serve((res) => {
      res.end(textSoFar + sseText([overloaded()]));
    });
    const stream = service(server.url).stream(request);
    const deltas: string[] = [];
    stream.on('content', (e) => deltas.push(e.delta));
    const error = (await stream.final().catch((e: unknown) => e)) as ApiError<Message>;
    expect(error).toBeInstanceOf(ApiError);
    expect(error.code).toBe('overloaded_error');
    expect(error.type).toBe('overloaded_error');
    expect(error.partial?.content).toEqual([{ type: 'text', text: 'It is ' }]);
    expect(deltas).toEqual(['It is ']);
    expect(stream.listener.status).toBe('failed');
  });

  it('abort() mid-stream rejects with AbortError holding the partial and releases the socket', async () => {
    const server = await serve((res) => {
      res.write(textSoFar); // then silence: only the abort ends the wait
    });
    const stream = service(server.url).stream(request);
    stream.on('content', () => stream.abort());
    const error = (await stream.final().catch((e: unknown) => e)) as AbortError<Message>;
    expect(error).toBeInstanceOf(AbortError);
    expect(error.partial?.content).toEqual([{ type: 'text', text: 'It is ' }]);
    await server.closed(1);
  });

  it("the caller's signal aborts the stream too", async () => {
    const server = await serve((res) => {
      res.write(textSoFar);
    });
    const controller = new AbortController();
    const stream = service(server.url).stream(request, { signal: controller.signal });
    stream.on('content', () => controller.abort());
    await expect(stream.final()).rejects.toBeInstanceOf(AbortError);
    await server.closed(1);
  });

  it('breaking out of the iteration aborts the request and releases the socket, without an unhandled rejection', async () => {
    const server = await serve((res) => {
      res.write(textSoFar);
    });
    const stream = service(server.url).stream(request);
    for await (const event of stream) {
      if (event.type === 'content') break;
    }
    await server.closed(1);
    await expect(stream.final()).rejects.toBeInstanceOf(AbortError);
  });

  it('a server that drops the connection mid-stream gives ConnectionError with the partial', async () => {
    const server = await serve(async (res) => {
      res.write(textSoFar);
      await tick();
      res.destroy();
    });
    const error = (await service(server.url)
      .stream(request)
      .final()
      .catch((e: unknown) => e)) as ConnectionError<Message>;
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error.partial?.content).toEqual([{ type: 'text', text: 'It is ' }]);
  });

  it('a server that ends cleanly without message_stop gives StreamIncompleteError', async () => {
    const server = await serve((res) => {
      res.end(textSoFar);
    });
    const error = (await service(server.url)
      .stream(request)
      .final()
      .catch((e: unknown) => e)) as Error;
    expect(error.name).toBe('StreamIncompleteError');
  });

  it('a stall past idleTimeout gives TimeoutError with the partial', async () => {
    const server = await serve((res) => {
      res.write(textSoFar);
    });
    const error = (await service(server.url, { idleTimeout: 50 })
      .stream(request)
      .final()
      .catch((e: unknown) => e)) as TimeoutError<Message>;
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error.phase).toBe('idle');
    expect(error.partial?.content).toEqual([{ type: 'text', text: 'It is ' }]);
    await server.closed(1);
  });

  it('a failing stream nobody awaits raises no unhandled rejection', async () => {
    const server = await serve((res) => {
      res.end(textSoFar + sseText([overloaded()]));
    });
    const stream = service(server.url).stream(request);
    const failed = await new Promise<unknown>((resolve) => stream.on('error', (e) => resolve(e.error)));
    expect(failed).toBeInstanceOf(ApiError);
    await tick(); // an unhandled rejection would surface here and fail the run
  });
});

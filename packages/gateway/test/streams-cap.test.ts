/**
 * The cap on concurrent streams over real sockets, with a daemon that holds its streams open: past the cap a stream
 * request gets a 503 with Retry-After and an OpenAI error without reaching the daemon, and a slot comes back however
 * a stream ends (done, an error, the client leaving).
 */
import type { ServerResponse } from 'node:http';
import { listenGateway } from '@ai4ts/gateway';
import { readerOf, sendSse, sleep, SSE_HEADERS, sseFrame } from '@ai4ts/test-kit';
import { afterEach, describe, expect, it } from 'vitest';
import { TYPED_ANSWER } from '../../bridge/test/helpers.js';
import { readChunks, startDaemon } from './helpers.js';

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const server of open.splice(0).reverse()) await server.close();
});

function ask(url: string, message: string, stream: boolean, signal?: AbortSignal): Promise<Response> {
  return fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    body: JSON.stringify({ model: 'daemon', messages: [{ role: 'user', content: message }], stream }),
    signal,
  });
}

/** Asks until the answer is not a 503 (a slot is given back when the proxy sees the end, a moment later). */
async function askUntilAccepted(url: string, message: string): Promise<Response> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const response = await ask(url, message, true);
    if (response.status !== 503) return response;
    await response.body?.cancel();
    await sleep(20);
  }
  throw new Error('The slot never came back');
}

describe('maxConcurrentStreams', () => {
  it('refuses a stream past the cap with 503 and Retry-After, and gets slots back on done, error and disconnect', async () => {
    const held: ServerResponse[] = [];
    const daemon = await startDaemon((res, request) => {
      const body = request.body as { message: string };
      if (body.message === 'quick') return sendSse(res, TYPED_ANSWER);
      res.writeHead(200, SSE_HEADERS);
      res.write(sseFrame({ type: 'text', content: 'held' }));
      held.push(res);
    });
    open.push(daemon);
    const proxy = await listenGateway({ upstream: daemon.url, dialect: 'typed', maxConcurrentStreams: 2 });
    open.push(proxy);

    const first = await ask(proxy.url, 'hold', true);
    const leaving = new AbortController();
    const second = await ask(proxy.url, 'hold', true, leaving.signal);
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(held).toHaveLength(2);

    const refused = await ask(proxy.url, 'hold', true);
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(await refused.json()).toEqual({
      error: {
        message: 'The proxy is serving its maximum of 2 concurrent streams; retry later',
        type: 'server_error',
        param: null,
        code: 'too_many_streams',
      },
    });
    expect(daemon.requests).toHaveLength(2); // the daemon never saw it

    // Non-stream answers are not streams: they still go through.
    expect((await ask(proxy.url, 'quick', false)).status).toBe(200);

    // A stream that ends with done gives its slot back.
    held[0]?.end(sseFrame({ type: 'done' }));
    expect(readChunks(await first.text()).done).toBe(true);
    const third = await askUntilAccepted(proxy.url, 'hold');
    expect(third.status).toBe(200);
    expect(held).toHaveLength(3);

    // A stream that fails (an error event after output) gives its slot back.
    held[2]?.end(sseFrame({ type: 'error', message: 'crashed' }));
    const failed = readChunks(await third.text());
    expect(failed.chunks.at(-1)?.error?.message).toContain('crashed');
    const fourth = await askUntilAccepted(proxy.url, 'hold');
    expect(fourth.status).toBe(200);

    // A client that leaves gives its slot back (and the daemon's request is cut).
    await readerOf(second).read();
    leaving.abort();
    await daemon.cut;
    const fifth = await askUntilAccepted(proxy.url, 'quick');
    expect(readChunks(await fifth.text()).done).toBe(true);

    for (const res of held) res.end(sseFrame({ type: 'done' }));
    await fourth.text();
  });

  it('a stream that fails before output gives its slot back', async () => {
    const daemon = await startDaemon((res) => {
      res.writeHead(500).end('boom');
    });
    open.push(daemon);
    const proxy = await listenGateway({ upstream: daemon.url, dialect: 'typed', maxConcurrentStreams: 1 });
    open.push(proxy);
    for (let i = 0; i < 3; i++) expect((await ask(proxy.url, 'hi', true)).status).toBe(502);
  });

  it('refuses a cap that is not a positive integer', async () => {
    await expect(listenGateway({ upstream: 'http://127.0.0.1:9', dialect: 'typed', maxConcurrentStreams: 0 })).rejects.toThrow(
      RangeError,
    );
  });
});

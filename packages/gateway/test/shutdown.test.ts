/**
 * Graceful shutdown: /readyz turns 503 and new requests are refused while streams in flight finish; past the deadline
 * the connections close, and a resumable generation goes on into the store, where a reconnection finds it whole.
 */
import { createGateway, listenGateway, MemoryStreamStore } from '@ai4ts/gateway';
import { parseSse } from '@ai4ts/sse';
import { startMockModel } from '@ai4ts/testing';
import { describe, expect, it } from 'vitest';
import { chatText } from './resume-helpers.js';

const ANSWER = 'A slow and steady answer, '.repeat(6);
const REQUEST = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: true });

describe('shutdown', () => {
  it('while draining, /readyz is 503 and a new request a 503 shutting_down; /healthz stays 200', async () => {
    const proxy = createGateway({ upstream: 'http://127.0.0.1:9/v1', upstreamProtocol: 'chat' });
    expect((await proxy.fetch(new Request('http://gateway/readyz'))).status).toBe(200);
    expect(await proxy.drain(0)).toBe(true);
    const ready = await proxy.fetch(new Request('http://gateway/readyz'));
    expect([ready.status, await ready.json()]).toEqual([503, { status: 'draining' }]);
    expect((await proxy.fetch(new Request('http://gateway/healthz'))).status).toBe(200);
    const refused = await proxy.fetch(new Request('http://gateway/v1/chat/completions', { method: 'POST', body: REQUEST }));
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(await refused.json()).toMatchObject({ error: { code: 'shutting_down' } });
    await proxy.finish(0);
  });

  it('lets a stream in flight finish before it closes', async () => {
    const model = await startMockModel({ script: () => ({ content: ANSWER, chunkDelayMs: 5 }) });
    const gateway = await listenGateway({ upstream: model.baseURL, upstreamProtocol: 'chat' });
    const response = await fetch(`${gateway.url}/v1/chat/completions`, { method: 'POST', body: REQUEST });
    const events = (async () => {
      const data: string[] = [];
      for await (const event of parseSse(response)) data.push(event.data);
      return data;
    })();
    const shutdown = gateway.shutdown({ deadlineMs: 10_000 });
    const data = await events;
    expect(chatText(data)).toBe(ANSWER);
    expect(data.at(-1)).toBe('[DONE]');
    await shutdown;
    await model.close();
  });

  it('past the deadline, closes the connections; a resumable generation finishes into the store', async () => {
    const model = await startMockModel({ script: () => ({ content: ANSWER, chunkDelayMs: 10 }) });
    const store = new MemoryStreamStore();
    const gateway = await listenGateway({ upstream: model.baseURL, upstreamProtocol: 'chat', resumable: true, store });
    const response = await fetch(`${gateway.url}/v1/chat/completions`, { method: 'POST', body: REQUEST });
    const streamId = response.headers.get('x-ai4ts-stream-id') ?? '';
    const seen: string[] = [];
    const reading = (async () => {
      try {
        for await (const event of parseSse(response)) seen.push(event.id ?? '');
      } catch {
        // cut by the shutdown
      }
    })();
    const readyz = (await fetch(`${gateway.url}/readyz`)).status;
    const store_ = store; // the store is closed by the shutdown; read what it held just before
    const finished = new Promise<string[]>((resolve) => {
      void (async () => {
        const data: string[] = [];
        for await (const message of store_.read(streamId, 0, new AbortController().signal)) data.push(message.data);
        resolve(data);
      })();
    });
    await gateway.shutdown({ deadlineMs: 50, generationsMs: 20_000 });
    await reading;
    expect(readyz).toBe(200);
    expect(seen.length).toBeGreaterThan(0);
    const data = await finished;
    expect(chatText(data)).toBe(ANSWER);
    expect(data.at(-1)).toBe('[DONE]');
    await model.close();
  });
});

/**
 * The stream store's guarantees through the gateway, in one process (the memory store): a stream belongs to the
 * credential that created it, its errors are in its own protocol's shape, a resume past its end is a 400, readers
 * count against `maxConcurrentStreams`, and the store is bounded in bytes and streams (a live stream over the bound
 * ends with an error event, a new one is a 503). The same failures with a real Redis are in redis-chaos.test.ts.
 */
import { type ListeningGateway, listenGateway, MemoryStreamStore, type StreamInfo } from '@ai4ts/gateway';
import { parseSse } from '@ai4ts/sse';
import { type MockModel, startMockModel } from '@ai4ts/testing';
import { afterEach, describe, expect, it } from 'vitest';

const ANSWER = 'The quick brown fox jumps over the lazy dog. '.repeat(20);
const CHAT = { model: 'm', messages: [{ role: 'user', content: 'The fox?' }], stream: true };
const MESSAGES = { model: 'm', max_tokens: 100, messages: [{ role: 'user', content: 'The fox?' }], stream: true };
const INFO: StreamInfo = { protocol: 'chat', owner: 'o' };

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const server of open.splice(0).reverse()) await server.close();
});

async function setup(options: { delay?: number; store?: MemoryStreamStore; maxConcurrentStreams?: number } = {}) {
  const model: MockModel = await startMockModel({ script: () => ({ content: ANSWER, chunkDelayMs: options.delay ?? 0 }) });
  open.push(model);
  const gateway: ListeningGateway = await listenGateway({
    upstream: model.baseURL,
    upstreamProtocol: 'chat',
    auth: ['sk-alice', 'sk-bob'],
    resumable: true,
    ...(options.store ? { store: options.store } : {}),
    ...(options.maxConcurrentStreams ? { maxConcurrentStreams: options.maxConcurrentStreams } : {}),
  });
  open.push(gateway);
  return { model, gateway };
}

/** POSTs a resumable request; its response, not read yet. */
function start(gateway: ListeningGateway, path: string, body: unknown, headers: Record<string, string>): Promise<Response> {
  return fetch(`${gateway.url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
}

async function events(response: Response) {
  const out = [];
  for await (const event of parseSse(response)) out.push(event);
  return out;
}

const alice = { authorization: 'Bearer sk-alice' };
const bob = { authorization: 'Bearer sk-bob' };

describe('who may read a stream', () => {
  it('only the credential that created it: anyone else is told it does not exist', async () => {
    const { gateway } = await setup();
    const created = await start(gateway, '/v1/chat/completions', CHAT, alice);
    const id = created.headers.get('x-ai4ts-stream-id') ?? '';
    const whole = await events(created);

    const byBob = await fetch(`${gateway.url}/v1/streams/${id}`, { headers: bob });
    expect(byBob.status).toBe(404);
    expect(await byBob.json()).toMatchObject({ error: { code: 'stream_not_found' } });
    const byBobPost = await start(gateway, '/v1/chat/completions', CHAT, { ...bob, 'last-event-id': `${id}:1` });
    expect(byBobPost.status).toBe(404);
    await byBobPost.body?.cancel();

    // The same credential, sent as x-api-key, is the same owner.
    const byAlice = await fetch(`${gateway.url}/v1/streams/${id}`, { headers: { 'x-api-key': 'sk-alice' } });
    expect(byAlice.status).toBe(200);
    expect((await events(byAlice)).map((event) => event.data)).toEqual(whole.map((event) => event.data));
  });
});

describe('resuming a finished stream', () => {
  it('past its last event is a 400 invalid_event_id, in the protocol of the stream (Messages here)', async () => {
    const { gateway } = await setup();
    const created = await start(gateway, '/v1/messages', MESSAGES, { 'x-api-key': 'sk-alice' });
    const id = created.headers.get('x-ai4ts-stream-id') ?? '';
    const whole = await events(created);
    expect(whole.at(-1)?.event).toBe('message_stop');

    for (const past of [whole.length + 1, 999_999_999_999_999]) {
      const response = await fetch(`${gateway.url}/v1/streams/${id}`, {
        headers: { 'x-api-key': 'sk-alice', 'last-event-id': `${id}:${past}` },
      });
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({
        type: 'error',
        error: { type: 'invalid_request_error', code: 'invalid_event_id' },
      });
    }
    // At its last event: nothing more, and no error.
    const atEnd = await fetch(`${gateway.url}/v1/streams/${id}`, {
      headers: { 'x-api-key': 'sk-alice', 'last-event-id': `${id}:${whole.length}` },
    });
    expect([atEnd.status, (await events(atEnd)).length]).toEqual([200, 0]);
  });
});

describe('readers and the concurrency cap', () => {
  it('each reader holds a stream slot: past maxConcurrentStreams a reader gets a 503 with Retry-After', async () => {
    const { gateway } = await setup({ delay: 5, maxConcurrentStreams: 2 });
    const live = await start(gateway, '/v1/chat/completions', CHAT, alice);
    const id = live.headers.get('x-ai4ts-stream-id') ?? '';
    const reader = await fetch(`${gateway.url}/v1/streams/${id}`, { headers: alice });
    expect(reader.status).toBe(200);
    const refused = await fetch(`${gateway.url}/v1/streams/${id}`, { headers: alice });
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(await refused.json()).toMatchObject({ error: { code: 'too_many_streams' } });
    // The reader's slot is given back when it leaves.
    await reader.body?.cancel();
    await expect
      .poll(async () => {
        const again = await fetch(`${gateway.url}/v1/streams/${id}`, { headers: alice });
        await again.body?.cancel();
        return again.status;
      })
      .toBe(200);
    await live.body?.cancel();
  });
});

describe('the memory store’s bounds', () => {
  const message = (n: number, size = 2) => ({ data: String(n).padEnd(size, '.'), id: `s:${n}` });
  const read = async (store: MemoryStreamStore, id: string) => {
    const out: string[] = [];
    for await (const item of store.read(id, 0, new AbortController().signal)) out.push(item.data);
    return out;
  };

  it('past maxStreams the oldest finished stream goes; with only live ones left a new stream is a 503', async () => {
    const store = new MemoryStreamStore({ maxStreams: 2 });
    await store.create('a', INFO);
    await store.end('a');
    await store.create('b', INFO);
    await store.end('b');
    await store.create('c', INFO);
    await expect(read(store, 'a')).rejects.toMatchObject({ status: 404 });
    expect(await read(store, 'b')).toEqual([]);
    await store.create('d', INFO); // b goes; c and d are live
    await expect(store.create('e', INFO)).rejects.toMatchObject({
      status: 503,
      headers: { 'retry-after': '1' },
      error: { code: 'store_unavailable' },
    });
    expect(store.size).toBe(2);
    await store.close();
  });

  it('past maxBytes the oldest finished streams go; a live stream that would pass it is refused', async () => {
    const store = new MemoryStreamStore({ maxBytes: 1000 });
    for (const id of ['a', 'b', 'c']) {
      await store.create(id, INFO);
      for (let n = 1; n <= 3; n++) await store.append(id, n, message(n, 100));
      await store.end(id);
    }
    expect(store.bytes).toBeLessThanOrEqual(1000);
    await store.create('live', INFO);
    for (let n = 1; n <= 6; n++) await store.append('live', n, message(n, 100));
    expect(store.bytes).toBeLessThanOrEqual(1000);
    await expect(read(store, 'a')).rejects.toMatchObject({ status: 404 });
    await expect(store.append('live', 7, message(7, 500))).rejects.toMatchObject({ status: 503 });
    await store.close();
  });

  it('1,500 finished streams of 64 KB stay within the bound', async () => {
    const store = new MemoryStreamStore({ maxBytes: 8 * 1024 * 1024, maxStreams: 1000 });
    const data = 'x'.repeat(64 * 1024);
    for (let i = 0; i < 1500; i++) {
      await store.create(`s${i}`, INFO);
      await store.append(`s${i}`, 1, { data });
      await store.end(`s${i}`);
    }
    expect(store.bytes).toBeLessThanOrEqual(8 * 1024 * 1024);
    expect(store.size).toBeLessThanOrEqual(1000);
    await store.close();
  });

  it('through the gateway: a live stream over the bound ends with an error event, a new one is a quick 503', async () => {
    const store = new MemoryStreamStore({ maxBytes: 3000, maxStreams: 1 });
    const { gateway, model } = await setup({ store, delay: 2 });
    const overflowing = await events(await start(gateway, '/v1/chat/completions', CHAT, alice));
    const last = overflowing.at(-1)?.data ?? '';
    expect(last).not.toBe('[DONE]');
    expect(JSON.parse(last)).toMatchObject({ error: { code: 'store_unavailable', message: expect.stringContaining('stream store') } });

    const slow = await setup({ store: new MemoryStreamStore({ maxStreams: 1 }), delay: 20 });
    const running = await start(slow.gateway, '/v1/messages', MESSAGES, { 'x-api-key': 'sk-alice' });
    const refused = await start(slow.gateway, '/v1/messages', MESSAGES, { 'x-api-key': 'sk-alice' });
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(await refused.json()).toMatchObject({ type: 'error', error: { type: 'overloaded_error', code: 'store_unavailable' } });
    expect(slow.model.requests).toHaveLength(1); // the refused request never reached the upstream
    await running.body?.cancel();
    expect(model.requests).toHaveLength(1);
  });
});

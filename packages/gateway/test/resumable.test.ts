/**
 * Resumable streams in one process (the in-memory store): ids on every event, the generation going on without its
 * client, reconnection with Last-Event-ID to the same URL or to /v1/streams/{id} (no gap, no duplicate), and the
 * store's bounds.
 */
import { type ListeningGateway, listenGateway, MemoryStreamStore, type StreamInfo } from '@ai4ts/gateway';
import { parseSse } from '@ai4ts/sse';
import { type MockModel, startMockModel } from '@ai4ts/testing';
import { seededRandom, sleep } from '@ai4ts/test-kit';
import { afterEach, describe, expect, it } from 'vitest';

const INFO: StreamInfo = { protocol: 'chat', owner: 'o' };
import { chatText, readFlaky } from './resume-helpers.js';

const ANSWER = 'The quick brown fox jumps over the lazy dog, then naps; résumé 用户 🦊. '.repeat(3);
const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const server of open.splice(0).reverse()) await server.close();
});

async function setup(options: { resumable?: boolean; store?: MemoryStreamStore; delay?: number } = {}) {
  const model: MockModel = await startMockModel({ script: () => ({ content: ANSWER, chunkDelayMs: options.delay ?? 1 }) });
  open.push(model);
  const gateway: ListeningGateway = await listenGateway({
    upstream: model.baseURL,
    upstreamProtocol: 'chat',
    auth: 'sk-gateway',
    ...(options.resumable === undefined ? {} : { resumable: options.resumable }),
    ...(options.store ? { store: options.store } : {}),
  });
  open.push(gateway);
  return { model, gateway };
}

const request = { model: 'm', messages: [{ role: 'user', content: 'Tell me about the fox' }], stream: true };

function expectNumbered(streamId: string, ids: readonly string[]) {
  expect(streamId).toMatch(/^[0-9a-f-]{36}$/);
  expect(ids).toEqual(ids.map((_, i) => `${streamId}:${i + 1}`));
}

describe('resumable streams, in memory', () => {
  it('every event carries an id, resumable or not', async () => {
    const { gateway } = await setup();
    const response = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer sk-gateway' },
      body: JSON.stringify(request),
    });
    expect(response.headers.get('x-ai4ts-resumable')).toBeNull();
    const streamId = response.headers.get('x-ai4ts-stream-id') ?? '';
    const events = [];
    for await (const event of parseSse(response)) events.push(event);
    expectNumbered(streamId, events.map((event) => event.id ?? ''));
    expect(chatText(events.map((event) => event.data))).toBe(ANSWER);
  });

  it.each(['same-url', 'streams'] as const)(
    'a client cut at random points resumes (%s): the answer whole, no gap, no duplicate, over many runs',
    async (via) => {
      const { gateway } = await setup();
      const random = seededRandom(via === 'streams' ? 7 : 11);
      for (let run = 0; run < 8; run++) {
        const read = await readFlaky({
          bases: [gateway.url],
          path: '/v1/chat/completions',
          body: request,
          token: 'sk-gateway',
          random,
          via,
          cuts: 1 + Math.floor(random() * 5),
        });
        expect(read.connections).toBeGreaterThan(1);
        expectNumbered(read.streamId, read.ids);
        expect(chatText(read.data)).toBe(ANSWER);
        expect(read.data.at(-1)).toBe('[DONE]');
      }
    },
    60_000,
  );

  it('the generation goes on without its client; the rest waits in the store', async () => {
    const { model, gateway } = await setup({ resumable: true, delay: 3 });
    const controller = new AbortController();
    const response = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer sk-gateway' },
      body: JSON.stringify(request),
      signal: controller.signal,
    });
    expect(response.headers.get('x-ai4ts-resumable')).toBe('1');
    const streamId = response.headers.get('x-ai4ts-stream-id') ?? '';
    const first = [];
    for await (const event of parseSse(response)) {
      first.push(event);
      if (first.length === 3) break;
    }
    controller.abort();
    // Long after the client left: the stream read again from its start holds the whole answer.
    await sleep(400);
    const again = await fetch(`${gateway.url}/v1/streams/${streamId}`, { headers: { authorization: 'Bearer sk-gateway' } });
    const events = [];
    for await (const event of parseSse(again)) events.push(event);
    expectNumbered(streamId, events.map((event) => event.id ?? ''));
    expect(events.slice(0, 3).map((event) => event.data)).toEqual(first.map((event) => event.data));
    expect(chatText(events.map((event) => event.data))).toBe(ANSWER);
    expect(model.requests).toHaveLength(1);
  });

  it('an unknown stream, or an id of another stream, is refused in the protocol’s shape', async () => {
    const { gateway } = await setup();
    const unknown = await fetch(`${gateway.url}/v1/streams/00000000-0000-4000-8000-000000000000`, {
      headers: { authorization: 'Bearer sk-gateway' },
    });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ error: { code: 'stream_not_found' } });
    const viaMessages = await fetch(`${gateway.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': 'sk-gateway', 'last-event-id': '00000000-0000-4000-8000-000000000000:3' },
      body: '{}',
    });
    expect(viaMessages.status).toBe(404);
    expect(await viaMessages.json()).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });
    const mismatch = await fetch(`${gateway.url}/v1/streams/00000000-0000-4000-8000-000000000000`, {
      headers: { authorization: 'Bearer sk-gateway', 'last-event-id': '11111111-0000-4000-8000-000000000000:1' },
    });
    expect(mismatch.status).toBe(400);
  });
});

describe('MemoryStreamStore bounds', () => {
  const message = (n: number) => ({ data: `m${n}`, id: `s:${n}` });
  const read = async (store: MemoryStreamStore, id: string, after: number) => {
    const out: string[] = [];
    for await (const item of store.read(id, after, new AbortController().signal)) out.push(item.data);
    return out;
  };

  it('keeps at most maxEvents per stream: resuming before them is refused, after them works', async () => {
    const store = new MemoryStreamStore({ maxEvents: 3 });
    await store.create('s', INFO);
    for (let n = 1; n <= 5; n++) await store.append('s', n, message(n));
    await store.end('s');
    expect(await read(store, 's', 2)).toEqual(['m3', 'm4', 'm5']);
    await expect(read(store, 's', 1)).rejects.toMatchObject({ status: 404, error: { code: 'stream_not_found' } });
    await store.close();
  });

  it('forgets a stream ttlMs after its last message, and wakes its readers', async () => {
    const store = new MemoryStreamStore({ ttlMs: 50 });
    await store.create('s', INFO);
    await store.append('s', 1, message(1));
    const live = read(store, 's', 0); // waits for more, until the stream expires
    expect(await live).toEqual(['m1']);
    await expect(read(store, 's', 0)).rejects.toMatchObject({ status: 404 });
  });
});

/**
 * The fault suite's Redis chaos: a gateway on a real redis-server (started here on a free port, nothing saved, the
 * DEBUG command allowed) whose Redis is killed mid-stream, restarted, filled (`maxmemory` with `noeviction`) and
 * stalled (`DEBUG SLEEP`, `CLIENT PAUSE`). Each failure ends the live stream and its readers at once with the
 * protocol's in-stream error naming the store (never a clean end, never a minute of pings), a new resumable request
 * is a quick 503 with Retry-After and no client-library text, and `/readyz` says 503 until Redis is back. Also: the
 * readers of one instance share one subscriber connection.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { type ListeningGateway, listenGateway } from '@ai4ts/gateway';
import { RedisKeyCounters, RedisKeyStore, RedisStreamStore } from '@ai4ts/gateway/redis';
import { parseSse } from '@ai4ts/sse';
import { type MockModel, startMockModel } from '@ai4ts/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort, redisCli, startRedis, stop } from './redis-server.js';

const CHAT = { model: 'm', messages: [{ role: 'user', content: 'The fox?' }], stream: true };
const MESSAGES = { model: 'm', max_tokens: 100, messages: [{ role: 'user', content: 'The fox?' }], stream: true };
const AUTH = { authorization: 'Bearer sk-gateway' };

let redis: ChildProcess | undefined;
let port = 0;
const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const server of open.splice(0).reverse()) await server.close();
  await stop(redis, false, 'SIGKILL');
});

/** A fresh Redis, a scripted model streaming `content`, and a resumable gateway storing its streams in that Redis. */
async function setup(content: string, chunkDelayMs: number) {
  port = await freePort();
  redis = await startRedis(port, ['--enable-debug-command', 'yes']);
  const model: MockModel = await startMockModel({ script: () => ({ content, chunkDelayMs }) });
  open.push(model);
  const store = new RedisStreamStore({ redis: `redis://127.0.0.1:${port}`, commandTimeoutMs: 1000, blockMs: 200 });
  const gateway: ListeningGateway = await listenGateway({
    upstream: model.baseURL,
    upstreamProtocol: 'chat',
    auth: 'sk-gateway',
    resumable: true,
    store,
  });
  open.push(gateway, store);
  return { model, gateway };
}

function post(gateway: ListeningGateway, path: string, body: unknown, headers: Record<string, string> = AUTH) {
  return fetch(`${gateway.url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
}

/** Reads a stream: `after.act` runs once `after.count` events arrived. Resolves to every event (comments are not events). */
async function readAll(response: Response, after?: { count: number; act: () => unknown }) {
  const events = [];
  for await (const event of parseSse(response)) {
    events.push(event);
    if (events.length === after?.count) await after.act();
  }
  return events;
}

/** The last event of a chat stream: the store's in-stream error, and no `[DONE]`. */
function expectStoreError(events: ReadonlyArray<{ data: string }>, why: RegExp) {
  const last = events.at(-1)?.data ?? '';
  expect(events.some((event) => event.data === '[DONE]')).toBe(false);
  const error = JSON.parse(last).error;
  expect(error).toMatchObject({ code: 'store_unavailable', message: expect.stringMatching(why) });
  expect(error.message).toMatch(/stream store/);
}

/** A new resumable request while the store is down: a 503 with Retry-After, no client-library text. */
async function expectRefused(gateway: ListeningGateway, model: MockModel) {
  const before = model.requests.length;
  const refused = await post(gateway, '/v1/messages', MESSAGES, { 'x-api-key': 'sk-gateway' });
  expect(refused.status).toBe(503);
  expect(refused.headers.get('retry-after')).toBe('1');
  const body = await refused.text();
  expect(JSON.parse(body)).toMatchObject({ type: 'error', error: { type: 'overloaded_error', code: 'store_unavailable' } });
  expect(body).not.toMatch(/ioredis|max retries|Reached the max|ECONNREFUSED|127\.0\.0\.1|Stream isn.t|Command timed out/);
  expect(model.requests.length).toBe(before); // the upstream was not asked
  expect((await fetch(`${gateway.url}/readyz`)).status).toBe(503);
}

describe('Redis chaos', () => {
  it('killed mid-stream: the live client and a reader end at once with the store error; new requests a quick 503; a restart serves again', async () => {
    const { gateway, model } = await setup('The quick brown fox jumps over the lazy dog. '.repeat(10), 20);
    const live = await post(gateway, '/v1/chat/completions', CHAT);
    const id = live.headers.get('x-ai4ts-stream-id') ?? '';
    const reader = await fetch(`${gateway.url}/v1/streams/${id}`, { headers: AUTH });
    expect(reader.status).toBe(200);
    const [liveEvents, readerEvents] = await Promise.all([
      readAll(live, { count: 8, act: () => stop(redis, false, 'SIGKILL') }),
      readAll(reader),
    ]);
    expectStoreError(liveEvents, /cannot be reached/);
    expectStoreError(readerEvents, /cannot be reached/);
    await expectRefused(gateway, model);

    redis = await startRedis(port, ['--enable-debug-command', 'yes']);
    await expect.poll(async () => (await fetch(`${gateway.url}/readyz`)).status, { timeout: 5000 }).toBe(200);
    // The stream was lost with Redis's memory: a clear 404.
    const lost = await fetch(`${gateway.url}/v1/streams/${id}`, { headers: AUTH });
    expect(lost.status).toBe(404);
    await lost.body?.cancel();
    const again = await readAll(await post(gateway, '/v1/chat/completions', CHAT));
    expect(again.at(-1)?.data).toBe('[DONE]');
  }, 15_000);

  it('full (maxmemory, noeviction): the stream ends with an error event, never a clean 200 end', async () => {
    const { gateway } = await setup('x'.repeat(20_000), 0);
    redisCli(port, 'config', 'set', 'maxmemory-policy', 'noeviction');
    const response = await post(gateway, '/v1/chat/completions', CHAT);
    expect(response.status).toBe(200);
    const id = response.headers.get('x-ai4ts-stream-id') ?? '';
    const fill = () => {
      const used = Number(/used_memory:(\d+)/.exec(redisCli(port, 'info', 'memory'))?.[1]);
      redisCli(port, 'config', 'set', 'maxmemory', String(used + 100_000));
    };
    const events = await readAll(response, { count: 5, act: fill });
    expect(events.length).toBeGreaterThan(5);
    expectStoreError(events, /out of memory/);
    // A reader after the failure is not served a truncated stream as if whole either.
    const reader = await fetch(`${gateway.url}/v1/streams/${id}`, { headers: AUTH });
    if (reader.status === 200) expectStoreError(await readAll(reader), /out of memory/);
    else expect([reader.status, (await reader.json()).error.code]).toEqual([404, 'stream_not_found']);
  }, 15_000);

  it('stalled (DEBUG SLEEP): the live stream ends with the store error after the command timeout; new requests a 503', async () => {
    const { gateway, model } = await setup('The quick brown fox jumps over the lazy dog. '.repeat(10), 20);
    const live = await post(gateway, '/v1/chat/completions', CHAT);
    let sleeping: ChildProcess | undefined;
    const events = await readAll(live, {
      count: 5,
      act: () => {
        sleeping = spawn('redis-cli', ['-p', String(port), 'debug', 'sleep', '5'], { stdio: 'ignore' });
      },
    });
    expectStoreError(events, /does not answer/);
    await expectRefused(gateway, model);
    await stop(sleeping);
  }, 15_000);

  it('paused (CLIENT PAUSE): the same, and it serves again once the pause ends', async () => {
    const { gateway, model } = await setup('The quick brown fox jumps over the lazy dog. '.repeat(10), 20);
    const live = await post(gateway, '/v1/chat/completions', CHAT);
    const id = live.headers.get('x-ai4ts-stream-id') ?? '';
    const events = await readAll(live, { count: 5, act: () => redisCli(port, 'client', 'pause', '4000', 'ALL') });
    expectStoreError(events, /does not answer/);
    await expectRefused(gateway, model);
    await expect.poll(async () => (await fetch(`${gateway.url}/readyz`)).status, { timeout: 8000 }).toBe(200);
    // The end entry, sent during the pause, was written once it ended: a reader now ends with the failure too.
    const reader = await fetch(`${gateway.url}/v1/streams/${id}`, { headers: AUTH });
    expectStoreError(await readAll(reader), /does not answer/);
    const again = await readAll(await post(gateway, '/v1/chat/completions', CHAT));
    expect(again.at(-1)?.data).toBe('[DONE]');
  }, 15_000);

  it('readers of one instance share one subscriber connection', async () => {
    const { gateway } = await setup('The quick brown fox jumps over the lazy dog. '.repeat(10), 10);
    const clients = () => redisCli(port, 'client', 'list').split('\n').length;
    const live = await post(gateway, '/v1/chat/completions', CHAT);
    const id = live.headers.get('x-ai4ts-stream-id') ?? '';
    const before = clients();
    const readers = await Promise.all(
      Array.from({ length: 20 }, () => fetch(`${gateway.url}/v1/streams/${id}`, { headers: AUTH })),
    );
    expect(readers.map((reader) => reader.status)).toEqual(readers.map(() => 200));
    expect(clients()).toBeLessThanOrEqual(before + 1);
    const read = await Promise.all([live, ...readers].map((response) => readAll(response)));
    for (const events of read) expect(events.at(-1)?.data).toBe('[DONE]');
  }, 15_000);

  it('virtual keys in Redis (the stream store in memory): killed, /readyz is a 503 key_store_unavailable; restarted, ready again', async () => {
    port = await freePort();
    redis = await startRedis(port);
    const model = await startMockModel({ script: () => ({ content: 'Hi' }) });
    open.push(model);
    const options = { redis: `redis://127.0.0.1:${port}`, commandTimeoutMs: 1000 };
    const gateway = await listenGateway({
      upstream: model.baseURL,
      upstreamProtocol: 'chat',
      auth: 'sk-gateway',
      keys: { store: new RedisKeyStore(options), counters: new RedisKeyCounters(options) },
    });
    open.push({ close: () => gateway.shutdown({ deadlineMs: 1000 }) });
    const readyz = async () => {
      const response = await fetch(`${gateway.url}/readyz`);
      return { status: response.status, body: await response.json() };
    };
    expect(await readyz()).toEqual({ status: 200, body: { status: 'ready', cooling: [] } });

    await stop(redis, false, 'SIGKILL');
    const down = await readyz();
    expect(down).toEqual({ status: 503, body: { status: 'key_store_unavailable', cooling: [] } });
    expect(JSON.stringify(down.body)).not.toMatch(/127\.0\.0\.1|ioredis|ECONNREFUSED/);

    redis = await startRedis(port);
    await expect.poll(async () => (await readyz()).status, { timeout: 5000 }).toBe(200);
  }, 15_000);
});

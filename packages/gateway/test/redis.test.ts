/**
 * Resumable streams across two gateway processes sharing a real redis-server (Debian's, started here on a free port
 * with `--save ''`, and stopped): a client that disconnects at random points from one instance resumes on the other,
 * and the answer it assembles is byte-identical to an uninterrupted one, over many runs. Also: the store's bounds,
 * and a Redis restart, after which a lost stream is a clear 404 and /readyz says why while Redis is down.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { RedisStreamStore } from '@ai4ts/gateway/redis';
import { type MockModel, startMockModel } from '@ai4ts/testing';
import { seededRandom, sleep } from '@ai4ts/test-kit';
import type { StreamInfo } from '@ai4ts/gateway';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startRedis, stop } from './redis-server.js';
import { chatText, readFlaky } from './resume-helpers.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const ANSWER = 'Résumé of the fox: quick, brown, 用户 🦊, then a nap under the "lazy" dog.\n'.repeat(4);
const REQUEST = { model: 'm', messages: [{ role: 'user', content: 'The fox?' }], stream: true };
const INFO: StreamInfo = { protocol: 'chat', owner: 'o' };

/** A gateway process (the CLI, through tsx), resumable, on the shared Redis; resolves to its URL. */
async function startGateway(upstream: string, redisPort: number): Promise<{ child: ChildProcess; url: string }> {
  const args = ['tsx', 'packages/gateway/src/cli.ts', '--upstream', upstream, '--upstream-protocol', 'chat'];
  args.push('--port', '0', '--resumable', '--redis', `redis://127.0.0.1:${redisPort}`);
  const child = spawn('npx', args, {
    cwd: ROOT,
    env: { ...process.env, AI4TS_PROXY_TOKEN: 'sk-gateway' },
    stdio: ['ignore', 'pipe', 'inherit'],
    detached: true,
  });
  let text = '';
  for await (const chunk of child.stdout ?? []) {
    text += chunk;
    const line = /^listening on (\S+)\n/m.exec(text);
    if (line?.[1]) return { child, url: line[1] };
  }
  throw new Error('The gateway exited before listening');
}

let redisPort = 0;
let redis: ChildProcess | undefined;
let model: MockModel;
const gateways: Array<{ child: ChildProcess; url: string }> = [];

beforeAll(async () => {
  redisPort = await freePort();
  redis = await startRedis(redisPort);
  model = await startMockModel({ script: () => ({ content: ANSWER, chunkDelayMs: 2 }) });
  gateways.push(...(await Promise.all([startGateway(model.baseURL, redisPort), startGateway(model.baseURL, redisPort)])));
}, 120_000);

afterAll(async () => {
  for (const gateway of gateways) await stop(gateway.child, true);
  await model?.close();
  await stop(redis);
}, 30_000);

describe('two gateway processes sharing Redis', () => {
  it('a client cut at random points, reconnecting to the other instance each time, gets the answer byte for byte', async () => {
    const random = seededRandom(16);
    const bases = gateways.map((gateway) => gateway.url);
    for (let run = 0; run < 10; run++) {
      const read = await readFlaky({
        bases: run % 2 ? [...bases].reverse() : bases,
        path: '/v1/chat/completions',
        body: REQUEST,
        token: 'sk-gateway',
        random,
        via: run % 3 === 0 ? 'streams' : 'same-url',
        cuts: 2 + Math.floor(random() * 4),
      });
      expect(read.connections).toBeGreaterThan(2);
      expect(read.ids).toEqual(read.ids.map((_, i) => `${read.streamId}:${i + 1}`));
      expect(chatText(read.data)).toBe(ANSWER);
      expect(read.data.at(-1)).toBe('[DONE]');
    }
  }, 120_000);

  it('a Redis restart loses the streams it held: a clear 404, and /readyz is 503 while Redis is down', async () => {
    const [a, b] = gateways;
    const started = await fetch(`${a?.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer sk-gateway' },
      body: JSON.stringify(REQUEST),
    });
    const streamId = started.headers.get('x-ai4ts-stream-id');
    await started.text();
    await stop(redis);
    const down = await fetch(`${b?.url}/readyz`);
    expect([down.status, await down.json()]).toEqual([503, { status: 'store_unavailable', cooling: [] }]);
    redis = await startRedis(redisPort);
    await expect.poll(async () => (await fetch(`${b?.url}/readyz`)).status, { timeout: 15_000 }).toBe(200);
    const lost = await fetch(`${b?.url}/v1/streams/${streamId}`, { headers: { authorization: 'Bearer sk-gateway' } });
    expect(lost.status).toBe(404);
    expect(await lost.json()).toMatchObject({ error: { code: 'stream_not_found', message: expect.stringContaining('lost') } });
  }, 60_000);
});

describe('RedisStreamStore', () => {
  const message = (n: number) => ({ data: `m${n}`, id: `s:${n}` });
  const readAll = async (store: RedisStreamStore, id: string, after: number) => {
    const out: string[] = [];
    for await (const item of store.read(id, after, new AbortController().signal)) out.push(item.data);
    return out;
  };

  it('keeps at most maxEvents, expires after ttlMs, and serves live readers', async () => {
    const store = new RedisStreamStore({ redis: `redis://127.0.0.1:${redisPort}`, maxEvents: 3, ttlMs: 300, blockMs: 50 });
    try {
      await store.create('bounded', INFO);
      const live = readAll(store, 'bounded', 0);
      await store.append('bounded', 1, message(1));
      await store.append('bounded', 2, message(2));
      await store.end('bounded');
      expect(await live).toEqual(['m1', 'm2']);

      await store.create('trimmed', INFO);
      for (let n = 1; n <= 5; n++) await store.append('trimmed', n, message(n));
      await store.end('trimmed');
      expect(await readAll(store, 'trimmed', 3)).toEqual(['m4', 'm5']);
      // Its protocol and owner outlive the trimmed opening entry.
      expect(await store.info('trimmed')).toEqual(INFO);
      expect(await store.info('never')).toBeUndefined();
      await expect(readAll(store, 'trimmed', 1)).rejects.toMatchObject({ status: 404 });

      await sleep(500);
      await expect(readAll(store, 'bounded', 0)).rejects.toMatchObject({ status: 404, error: { code: 'stream_not_found' } });
      expect(await store.ready()).toBe(true);
    } finally {
      await store.close();
    }
  });
});

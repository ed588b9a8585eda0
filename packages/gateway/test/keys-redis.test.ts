/**
 * Two gateway instances on one real redis-server share a virtual key's RPM, TPM and budget under concurrent load:
 * what they admit together never passes a limit by more than one request's estimate. The key is made on one instance
 * (its admin API) and used on both, revoked on the other, and its spend read back through either.
 */
import type { ChildProcess } from 'node:child_process';
import { type KeySettings, type ListeningGateway, listenGateway } from '@ai4ts/gateway';
import { RedisKeyCounters, RedisKeyStore } from '@ai4ts/gateway/redis';
import { startMockModel } from '@ai4ts/testing';
import { sleep } from '@ai4ts/test-kit';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { keysCommand } from '../src/keys/cli.js';
import { freePort, startRedis, stop } from './redis-server.js';

const ADMIN = 'admin-token-a81f2c';
const USAGE = { prompt_tokens: 40, completion_tokens: 60, total_tokens: 100 };

let redis: ChildProcess | undefined;
let url = '';
beforeAll(async () => {
  const port = await freePort();
  redis = await startRedis(port);
  url = `redis://127.0.0.1:${port}`;
});
afterAll(async () => {
  await stop(redis);
});

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const server of open.splice(0).reverse()) await server.close();
});

/** Two instances on the same Redis (a prefix of their own per test) in front of one scripted model. */
async function twoInstances(prefix?: string): Promise<[ListeningGateway, ListeningGateway]> {
  const model = await startMockModel({ script: () => ({ content: 'Hello there', usage: USAGE }) });
  open.push(model);
  const instance = async () => {
    const options = { redis: url, ...(prefix === undefined ? {} : { keyPrefix: `${prefix}:` }) };
    const gateway = await listenGateway({
      upstream: model.baseURL,
      upstreamProtocol: 'chat',
      upstreamToken: 'sk-upstream',
      keys: { store: new RedisKeyStore(options), counters: new RedisKeyCounters(options) },
      adminToken: ADMIN,
    });
    // shutdown() also closes the key store and counters (Gateway.finish).
    open.push({ close: () => gateway.shutdown({ deadlineMs: 1000 }) });
    return gateway;
  };
  return [await instance(), await instance()];
}

async function createKey(gateway: ListeningGateway, settings: Partial<KeySettings>): Promise<{ key: string; id: string }> {
  const response = await fetch(`${gateway.url}/admin/keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'shared', ...settings }),
  });
  expect(response.status).toBe(201);
  return (await response.json()) as { key: string; id: string };
}

function chat(gateway: ListeningGateway, key: string): Promise<Response> {
  return fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], max_tokens: 100 }),
  });
}

/** `count` calls at once, alternating between the instances: the statuses, and the bodies of the refusals. */
async function burst(gateways: readonly ListeningGateway[], key: string, count: number): Promise<{ ok: number; refused: string[] }> {
  // The rate window is the clock's minute: a burst that straddles its end would count in two windows.
  const intoMinute = Date.now() % 60_000;
  if (intoMinute > 50_000) await sleep(60_000 - intoMinute + 100);
  const responses = await Promise.all(Array.from({ length: count }, (_, i) => chat(gateways[i % gateways.length] as ListeningGateway, key)));
  const refused: string[] = [];
  let ok = 0;
  for (const response of responses) {
    const body = await response.text();
    if (response.status === 200) ok++;
    else {
      expect(response.status).toBe(429);
      refused.push((JSON.parse(body) as { error: { code: string } }).error.code);
    }
  }
  return { ok, refused };
}

async function spentUsd(gateway: ListeningGateway, id: string): Promise<number> {
  const response = await fetch(`${gateway.url}/admin/keys/${id}/spend`, { headers: { authorization: `Bearer ${ADMIN}` } });
  return ((await response.json()) as { spentUsd: number }).spentUsd;
}

// Up to 10 s waiting out the end of a minute, then 40 calls at once on a shared machine.
describe('a key shared by two instances on one Redis', { timeout: 60_000 }, () => {
  it('RPM: of 30 concurrent calls across both, exactly the limit are admitted', async () => {
    const gateways = await twoInstances('rpm');
    const { key } = await createKey(gateways[0], { rpm: 10 });
    const { ok, refused } = await burst(gateways, key, 30);
    expect(ok).toBe(10);
    expect(refused).toEqual(Array(20).fill('rate_limit_exceeded'));
  });

  it('TPM: what both admitted used no more than the limit', async () => {
    const gateways = await twoInstances('tpm');
    const tpm = 2000;
    const { key } = await createKey(gateways[1], { tpm });
    const { ok, refused } = await burst(gateways, key, 40);
    expect(ok).toBeGreaterThan(0);
    expect(refused.length).toBeGreaterThan(0);
    // Each admitted call reserved about 130 tokens (its body / 4 and max_tokens 100) and used 100.
    expect(ok * USAGE.total_tokens).toBeLessThanOrEqual(tpm);
  });

  it('budget: what both admitted cost at most the budget and one estimate; the spend is the same from either', async () => {
    const gateways = await twoInstances('budget');
    // gpt-4o-mini: each call costs 40 * 0.15 + 60 * 0.6 = 42 micro-dollars, and reserves about 63 at admission.
    // Costs are counted in whole nano-dollars, rounded up: the sums are compared to the micro-dollar.
    const perCall = (USAGE.prompt_tokens * 0.15 + USAGE.completion_tokens * 0.6) / 1e6;
    const budget = 0.001;
    const { key, id } = await createKey(gateways[0], { budget: { usd: budget, period: 'month' } });
    const first = await burst(gateways, key, 40);
    expect(first.refused.length).toBeGreaterThan(0);
    expect(first.refused.every((code) => code === 'budget_exceeded')).toBe(true);
    await expect.poll(() => spentUsd(gateways[0], id)).toBeCloseTo(first.ok * perCall, 6);
    // Settled, the reservations came back: more calls fit, never past the budget.
    const second = await burst(gateways, key, 40);
    const admitted = first.ok + second.ok;
    await expect.poll(() => spentUsd(gateways[1], id)).toBeCloseTo(admitted * perCall, 6);
    expect(admitted * perCall).toBeLessThanOrEqual(budget);
    expect(await spentUsd(gateways[0], id)).toBe(await spentUsd(gateways[1], id));
  });

  it('a key made on one instance works on the other, and revoked there is refused by both', async () => {
    const gateways = await twoInstances('revoke');
    const { key, id } = await createKey(gateways[0], {});
    expect((await chat(gateways[1], key)).status).toBe(200);
    const revoked = await fetch(`${gateways[1].url}/admin/keys/${id}`, { method: 'DELETE', headers: { authorization: `Bearer ${ADMIN}` } });
    expect(revoked.status).toBe(200);
    for (const gateway of gateways) expect((await chat(gateway, key)).status).toBe(401);
  });

  it('the keys command on Redis: a key it creates works on both instances, and it reads the spend they counted', async () => {
    const gateways = await twoInstances();
    const lines: string[] = [];
    const write = (text: string) => {
      lines.push(text);
    };
    expect(await keysCommand(['create', '--keys', url, '--name', 'from-cli', '--budget', '5', '--period', 'week'], {}, write, () => undefined)).toBe(0);
    const key = String(lines.pop()).trim();
    for (const gateway of gateways) expect((await chat(gateway, key)).status).toBe(200);
    const id = ((await (await fetch(`${gateways[0].url}/admin/keys`, { headers: { authorization: `Bearer ${ADMIN}` } })).json()) as {
      data: Array<{ id: string; name: string }>;
    }).data.find((record) => record.name === 'from-cli')?.id;
    const perCall = (USAGE.prompt_tokens * 0.15 + USAGE.completion_tokens * 0.6) / 1e6;
    await expect.poll(() => spentUsd(gateways[1], String(id))).toBeCloseTo(2 * perCall, 6);
    expect(await keysCommand(['spend', String(id), '--keys', url], {}, write, () => undefined)).toBe(0);
    expect(JSON.parse(String(lines.pop()))).toMatchObject({ name: 'from-cli', spentUsd: expect.closeTo(2 * perCall, 6), budgetUsd: 5, period: 'week' });
  });
});

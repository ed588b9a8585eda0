/**
 * A route's upstreams over many requests: an upstream that keeps failing cools down (skipped, unless every upstream
 * is cooling), is tried again once the cooldown is over, and one failure then cools it again; `/readyz` and
 * `Gateway.health()` say so. The strategies counted, never timed: `weighted` gives exact shares, `least-busy` the
 * upstream with the fewest answers in flight, `latency` the one whose first event comes sooner. A routing file with
 * several upstreams, and the errors of a bad one, with their line and column.
 */
import { createGateway } from '@ai4ts/gateway';
import { serve, sseFrame, sseText, startSse } from '@ai4ts/test-kit';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { readRoutes } from '../src/upstreams/routes-file.js';
import {
  type Answer,
  askChat,
  chatAnswer,
  chatText,
  chunk,
  gatewayOf,
  NO_RETRY,
  status,
  upstreamOf,
} from './fallback-helpers.js';
import { readChunks } from './helpers.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The upstream each answer names, for `count` requests one after the other. */
async function upstreamsOf(ask: () => Promise<Response>, count: number): Promise<(string | null)[]> {
  const names: (string | null)[] = [];
  for (let i = 0; i < count; i++) {
    const response = await ask();
    await response.arrayBuffer();
    names.push(response.headers.get('x-ai4ts-upstream'));
  }
  return names;
}

/** A Chat stream whose first chunk comes at once and the rest once `released` resolves: in flight until then. */
function held(released: Promise<void>): Answer {
  return async (res) => {
    startSse(res);
    res.write(sseFrame(chunk({ role: 'assistant', content: 'held ' }, null)));
    await released;
    res.end(sseText([chunk({ content: 'then done' }, null), chunk({}, 'stop'), '[DONE]']));
  };
}

function gate(): { released: Promise<void>; release: () => void } {
  let release!: () => void;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  return { released, release };
}

describe('cooldown', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  // Only Date is faked, and moved by hand: the cooldown ends when the test says, however slow the machine.
  it('an upstream that fails N times in the window cools down, is tried again after it, and recovers', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const later = (ms: number) => vi.setSystemTime(Date.now() + ms);
    let down = true;
    const a = await upstreamOf(() => (down ? status(503) : chatAnswer('A is back')));
    const b = await upstreamOf(() => chatAnswer('B'));
    const gateway = await gatewayOf({
      routes: [
        {
          model: '*',
          upstreams: [{ upstream: a.root, protocol: 'chat', name: 'a' }, { upstream: b.root, protocol: 'chat', name: 'b' }],
          cooldown: { failures: 2, window: 60_000, duration: 30_000 },
        },
      ],
      upstreamRetry: NO_RETRY,
    });
    const attempt = async () => {
      const response = await askChat(gateway);
      await response.arrayBuffer();
      return [response.headers.get('x-ai4ts-upstream'), response.headers.get('x-ai4ts-attempts')];
    };
    const cooling = async () => ((await (await fetch(`${gateway.url}/readyz`)).json()) as { cooling: unknown[] }).cooling;
    expect(await attempt()).toEqual(['b', '2']);
    expect(await attempt()).toEqual(['b', '2']);
    // Two failures: a cools down and is not asked.
    expect(await attempt()).toEqual(['b', '1']);
    expect(a.bodies).toHaveLength(2);
    const ready = await fetch(`${gateway.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready', cooling: [{ route: '*', upstream: 'a', until: expect.any(String) }] });

    // Half-open after the cooldown: asked again, and one failure cools it again.
    later(29_000);
    expect(await attempt()).toEqual(['b', '1']);
    later(1_000);
    expect(await cooling()).toEqual([]);
    expect(await attempt()).toEqual(['b', '2']);
    expect(await attempt()).toEqual(['b', '1']);
    expect(a.bodies).toHaveLength(3);
    expect(await cooling()).toEqual([{ route: '*', upstream: 'a', until: new Date(Date.now() + 30_000).toISOString() }]);

    down = false;
    later(30_000);
    expect(await cooling()).toEqual([]);
    expect(await attempt()).toEqual(['a', '1']);
    expect(await attempt()).toEqual(['a', '1']);
  });

  it('when every upstream cools down, every one is still asked', async () => {
    const a = await upstreamOf(() => status(503));
    const b = await upstreamOf(() => status(503));
    const gateway = await gatewayOf({
      routes: [
        {
          model: '*',
          upstreams: [{ upstream: a.root, protocol: 'chat', name: 'a' }, { upstream: b.root, protocol: 'chat', name: 'b' }],
          cooldown: { failures: 1, duration: 60_000 },
        },
      ],
      upstreamRetry: NO_RETRY,
    });
    for (let i = 0; i < 2; i++) {
      const response = await askChat(gateway);
      await response.arrayBuffer();
      expect([response.status, response.headers.get('x-ai4ts-attempts')]).toEqual([502, '2']);
    }
    expect([a.bodies.length, b.bodies.length]).toEqual([2, 2]);
  });
});

describe('strategies', () => {
  it('weighted: 3 to 1 gives a, a, b, a in every cycle of four', async () => {
    const a = await upstreamOf(() => chatAnswer('a'));
    const b = await upstreamOf(() => chatAnswer('b'));
    const gateway = await gatewayOf({
      routes: [
        {
          model: '*',
          strategy: 'weighted',
          upstreams: [
            { upstream: a.root, protocol: 'chat', name: 'a', weight: 3 },
            { upstream: b.root, protocol: 'chat', name: 'b', weight: 1 },
          ],
        },
      ],
    });
    expect(await upstreamsOf(() => askChat(gateway), 8)).toEqual(['a', 'a', 'b', 'a', 'a', 'a', 'b', 'a']);
    expect([a.bodies.length, b.bodies.length]).toEqual([6, 2]);
  });

  it('least-busy: the upstream with the fewest answers in flight, the listed order on a tie', async () => {
    const { released, release } = gate();
    const a = await upstreamOf(() => held(released));
    const b = await upstreamOf(() => held(released));
    const gateway = await gatewayOf({
      routes: [
        {
          model: '*',
          strategy: 'least-busy',
          upstreams: [{ upstream: a.root, protocol: 'chat', name: 'a' }, { upstream: b.root, protocol: 'chat', name: 'b' }],
        },
      ],
    });
    const open: Response[] = [];
    for (let i = 0; i < 3; i++) open.push(await askChat(gateway, true));
    expect(open.map((response) => response.headers.get('x-ai4ts-upstream'))).toEqual(['a', 'b', 'a']);
    release();
    for (const response of open) expect(readChunks(await response.text()).text).toBe('held then done');
    // Every answer ended: nothing is in flight, so a again.
    expect(await upstreamsOf(() => askChat(gateway, true), 1)).toEqual(['a']);
    expect([a.bodies.length, b.bodies.length]).toEqual([3, 1]);
  });

  it('latency: once both are measured, the upstream whose first event comes sooner', async () => {
    const slow: Answer = async (res) => {
      await sleep(800);
      await chatAnswer('slow')(res);
    };
    const a = await upstreamOf(() => slow);
    const b = await upstreamOf(() => chatAnswer('fast'));
    const gateway = await gatewayOf({
      routes: [
        {
          model: '*',
          strategy: 'latency',
          upstreams: [{ upstream: a.root, protocol: 'chat', name: 'slow' }, { upstream: b.root, protocol: 'chat', name: 'fast' }],
        },
      ],
    });
    // Each upstream is measured first (in the listed order), then the faster one is preferred.
    expect(await upstreamsOf(() => askChat(gateway), 5)).toEqual(['slow', 'fast', 'fast', 'fast', 'fast']);
  });
});

describe('health', () => {
  it('Gateway.health() reports each upstream: state, failures, cooldown end, in flight, latency', async () => {
    const a = await upstreamOf(() => status(503));
    const { released, release } = gate();
    const b = await upstreamOf(() => held(released));
    const gateway = createGateway({
      routes: [
        {
          model: 'm*',
          upstreams: [{ upstream: a.root, protocol: 'chat', name: 'a' }, { upstream: b.root, protocol: 'chat', name: 'b' }],
          cooldown: { failures: 1, duration: 60_000 },
        },
      ],
      upstreamRetry: NO_RETRY,
    });
    const server = await serve((req, res) => gateway.node(req, res), { readBody: false });
    try {
      expect(gateway.health()).toEqual([
        { route: 'm*', upstream: 'a', state: 'healthy', failures: 0, inFlight: 0, cooldowns: 0 },
        { route: 'm*', upstream: 'b', state: 'healthy', failures: 0, inFlight: 0, cooldowns: 0 },
      ]);
      const response = await fetch(`${server.url}v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: 'Hi' }] }),
      });
      const [healthA, healthB] = gateway.health();
      expect(healthA).toEqual({ route: 'm*', upstream: 'a', state: 'cooling', failures: 0, cooldownUntil: expect.any(Number), inFlight: 0, cooldowns: 1 });
      expect(healthA?.cooldownUntil).toBeGreaterThan(Date.now());
      expect(healthB).toEqual({ route: 'm*', upstream: 'b', state: 'healthy', failures: 0, inFlight: 1, latencyMs: expect.any(Number), cooldowns: 0 });
      release();
      expect(readChunks(await response.text()).text).toBe('held then done');
      await expect.poll(() => gateway.health()[1]?.inFlight).toBe(0);
    } finally {
      release();
      await server.close();
    }
  });
  it('an answer whose client left is no longer in flight', async () => {
    const { released, release } = gate();
    const upstream = await upstreamOf(() => held(released));
    const gateway = createGateway({ routes: [{ model: '*', upstreams: [{ upstream: upstream.root, protocol: 'chat', name: 'u' }] }] });
    const server = await serve((req, res) => gateway.node(req, res), { readBody: false });
    try {
      const client = new AbortController();
      const response = await fetch(`${server.url}v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: 'Hi' }] }),
        signal: client.signal,
      });
      expect(response.status).toBe(200);
      expect(gateway.health()[0]?.inFlight).toBe(1);
      client.abort();
      await expect.poll(() => gateway.health()[0]?.inFlight).toBe(0);
    } finally {
      release();
      await server.close();
    }
  });
});

describe('the routing file with several upstreams', () => {
  const FILE = (a: string, b: string) => `routes:
  - model: "*"
    strategy: weighted
    cooldown: { failures: 2, window: 30000, duration: 10000 }
    upstreams:
      - { upstream: "${a}", protocol: chat, keyEnv: KEY_A, name: primary, weight: 2 }
      - { upstream: "${b}", protocol: messages, name: claude }
`;
  const ENV = { KEY_A: 'sk-key-of-primary-3c1f' };

  it('reads a route of several upstreams, and the gateway falls back through it', async () => {
    const a = await upstreamOf(() => status(503));
    const b = await upstreamOf(() => chatAnswer('from b'));
    expect(readRoutes(FILE(a.root, b.root), ENV, 'yaml')).toEqual([
      {
        model: '*',
        strategy: 'weighted',
        cooldown: { failures: 2, window: 30000, duration: 10000 },
        upstreams: [
          { upstream: a.root, protocol: 'chat', upstreamToken: ENV.KEY_A, upstreamModel: undefined, name: 'primary', weight: 2 },
          { upstream: b.root, protocol: 'messages', upstreamToken: undefined, upstreamModel: undefined, name: 'claude' },
        ],
      },
    ]);
    const gateway = await gatewayOf({
      routes: readRoutes(FILE(a.root, b.root).replace('protocol: messages', 'protocol: chat'), ENV, 'yaml'),
      upstreamRetry: NO_RETRY,
    });
    const response = await askChat(gateway);
    expect([response.headers.get('x-ai4ts-upstream'), response.headers.get('x-ai4ts-attempts')]).toEqual(['claude', '2']);
    expect(await chatText(response)).toBe('from b');
    expect(a.bodies[0]).toMatchObject({ model: 'm' });
  });

  it('names a bad field of one upstream and where it is', () => {
    const file = FILE('http://127.0.0.1:1/v1', 'http://127.0.0.1:2/v1');
    expect(() => readRoutes(file.replace('weight: 2', 'weight: 0'), ENV, 'yaml')).toThrow(
      /^the routing file: routes\.0\.upstreams\.0\.weight \(line 6, column \d+\): Too small/,
    );
    expect(() => readRoutes(file.replace('protocol: messages', 'protocol: grpc'), ENV, 'yaml')).toThrow(
      /^the routing file: routes\.0\.upstreams\.1\.protocol \(line 7, column \d+\): Invalid option/,
    );
    expect(() => readRoutes(file.replace('strategy: weighted', 'strategy: random'), ENV, 'yaml')).toThrow(
      /^the routing file: routes\.0\.strategy \(line 3, column 15\): Invalid option: expected one of "priority"\|"weighted"\|"least-busy"\|"latency"$/,
    );
    expect(() => readRoutes(file.replace('name: claude', 'name: primary'), ENV, 'yaml')).toThrow(
      /^the routing file: routes\.0\.upstreams \(line 6, column 7\): two upstreams have the same name$/,
    );
    expect(() => readRoutes(file.replace('failures: 2', 'failures: 1.5'), ENV, 'yaml')).toThrow(/routes\.0\.cooldown\.failures \(line 4/);
    expect(() => readRoutes(file, {}, 'yaml')).toThrow('the routing file: KEY_A is not set');
  });
});

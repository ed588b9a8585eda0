/**
 * The gateway (issue 29): `ai4ts-gateway` against a floor relay that passes the bytes through, every server in its
 * own process on 127.0.0.1, the same canned upstream (bench/gateway-upstream.ts) behind each, and the same client
 * (node:http with keep-alive, in this process) in front.
 *
 * - direct: the upstream itself (the baseline of the added latency).
 * - floor relay (bench/pass-relay.ts): node:http, the request and the answer piped through.
 * - gateway chat -> chat: Chat Completions in, a Chat Completions upstream.
 * - gateway chat -> messages: Chat Completions in, an Anthropic Messages upstream, translated both ways.
 *
 * Measured: the added latency of sequential non-streamed requests (p50, p99, over the upstream's own), and per
 * shape (non-streamed ~1 KB, streamed 200 events) and concurrency (1, 64): requests per second of wall time and the
 * server process's CPU time per request (from /proc: Linux only), each round interleaved, best of two. Streams: the
 * added time to the first byte. Not measured yet (issue 29's list): Portkey's gateway, the operator configuration,
 * concurrency 256, 10,000 open streams and the 10-minute soak.
 *
 * Run through `npm run bench -- gateway` (it needs the built dist: `npm run bench` builds first).
 */
import { Agent, request } from 'node:http';
import { collectChatCompletion } from '@ai4ts/chat';
import { EVENTS } from './gateway-upstream.ts';
import { fmt, print } from './input.ts';
import { cpuMs, ROOT, type ServerProcess, startProcess } from './processes.ts';

const CLI = `${ROOT}packages/gateway/dist/cli.js`;
const CHAT = '/v1/chat/completions';
const PLAIN = JSON.stringify({ model: 'bench', messages: [{ role: 'user', content: 'hi' }] });
const STREAMED = JSON.stringify({ model: 'bench', messages: [{ role: 'user', content: 'hi' }], stream: true });

interface Contender extends ServerProcess {
  /** Whose CPU a request costs: the contender's own process (the upstream's for `direct`). */
  pid: number;
  /** The target's ratio to the floor relay's CPU per request; undefined for the relay and the upstream. */
  cpuTarget?: number;
}

interface Answer {
  status: number;
  body: string;
  /** ms from sending to the first byte of the body, and to its end. */
  firstByte: number;
  total: number;
}

function ask(url: string, body: string, agent: Agent, keep = false): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let firstByte = -1;
    const parts: Buffer[] = [];
    const req = request(`${url}${CHAT}`, { method: 'POST', agent, headers: { 'content-type': 'application/json' } }, (res) => {
      res.on('data', (chunk: Buffer) => {
        if (firstByte < 0) firstByte = performance.now() - started;
        if (keep || res.statusCode !== 200) parts.push(chunk);
      });
      res.on('end', () => {
        const answer = { status: res.statusCode ?? 0, body: Buffer.concat(parts).toString(), firstByte, total: performance.now() - started };
        if (answer.status !== 200) reject(new Error(`${url}: HTTP ${answer.status}: ${answer.body.slice(0, 300)}`));
        else resolve(answer);
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** `total` requests with `concurrency` in flight; the latencies of each and the wall time. */
async function load(url: string, body: string, total: number, concurrency: number): Promise<{ wall: number; latencies: number[] }> {
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  const latencies: number[] = [];
  let sent = 0;
  const started = performance.now();
  const worker = async () => {
    while (sent < total) {
      sent++;
      latencies.push((await ask(url, body, agent)).total);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const wall = performance.now() - started;
  agent.destroy();
  return { wall, latencies };
}

function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] as number;
}

/** Checked first: each contender answers the upstream's text, whole, as a valid Chat Completions answer. */
async function check(contenders: Contender[]): Promise<void> {
  const agent = new Agent({ keepAlive: true });
  for (const contender of contenders) {
    const plain = JSON.parse((await ask(contender.url, PLAIN, agent, true)).body) as { choices: { message: { content: string } }[] };
    // The gateway asks its upstream for a stream even for a non-streamed request, so its answer is the stream's text.
    const content = plain.choices[0]?.message.content ?? '';
    if (!content.startsWith('The quick brown fox') && content !== 'token '.repeat(EVENTS)) throw new Error(`${contender.name}: wrong answer`);
    const streamed = await collectChatCompletion((await ask(contender.url, STREAMED, agent, true)).body);
    if (streamed.choices[0]?.message.content !== 'token '.repeat(EVENTS)) throw new Error(`${contender.name}: wrong stream`);
  }
  agent.destroy();
}

export default async function run(): Promise<void> {
  const started: ServerProcess[] = [];
  const start = async (name: string, args: string[]) => {
    const server = await startProcess(name, args);
    started.push(server);
    return server;
  };
  try {
    const upstream = await start('upstream', ['--import', 'tsx', 'bench/gateway-upstream.ts']);
    const gateway = (name: string, protocol: string) =>
      start(name, [CLI, '--upstream', `${upstream.url}/v1`, '--upstream-protocol', protocol, '--port', '0']);
    const relay = await start('floor relay', ['--import', 'tsx', 'bench/pass-relay.ts', upstream.url]);
    const same = await gateway('gateway chat -> chat', 'chat');
    const cross = await gateway('gateway chat -> messages', 'messages');
    const contenders: Contender[] = [
      { ...upstream, name: 'direct', pid: upstream.child.pid as number },
      { ...relay, pid: relay.child.pid as number },
      { ...same, pid: same.child.pid as number, cpuTarget: 1.3 },
      { ...cross, pid: cross.child.pid as number, cpuTarget: 1.5 },
    ];
    await check(contenders);
    // Warm-up: every server's code paths compiled before anything is measured.
    for (const contender of contenders) {
      await load(contender.url, PLAIN, 2000, 16);
      await load(contender.url, STREAMED, 300, 16);
    }
    sequential(contenders, await latencies(contenders, PLAIN, 'total'), 'non-streamed, sequential');
    sequential(contenders, await latencies(contenders, STREAMED, 'firstByte'), `streamed (${EVENTS} events), first byte, sequential`);
    await throughput(contenders);
  } finally {
    for (const server of started) server.child.kill();
  }
}

/** Sequential requests, contenders interleaved one request each, 600 rounds: each one's times. */
async function latencies(contenders: Contender[], body: string, measure: 'total' | 'firstByte'): Promise<Map<string, number[]>> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const times = new Map(contenders.map((c) => [c.name, [] as number[]]));
  for (let round = 0; round < 600; round++)
    for (const contender of contenders) times.get(contender.name)?.push((await ask(contender.url, body, agent))[measure]);
  agent.destroy();
  return times;
}

function sequential(contenders: Contender[], times: Map<string, number[]>, shape: string): void {
  const at = (name: string, q: number) => quantile(times.get(name) ?? [], q);
  const relayAdded = at('floor relay', 0.5) - at('direct', 0.5);
  const rows = contenders.map((contender) => {
    const added50 = at(contender.name, 0.5) - at('direct', 0.5);
    const added99 = at(contender.name, 0.99) - at('direct', 0.99);
    const gateway = contender.cpuTarget !== undefined;
    return {
      server: contender.name,
      'p50 ms': at(contender.name, 0.5).toFixed(3),
      'p99 ms': at(contender.name, 0.99).toFixed(3),
      'added p50 ms': contender.name === 'direct' ? '' : added50.toFixed(3),
      'added p99 ms': contender.name === 'direct' ? '' : added99.toFixed(3),
      'target: added p50 <= relay + 0.1': !gateway ? '' : added50 <= relayAdded + 0.1 ? 'met' : '**MISSED**',
    };
  });
  print({
    title: `Gateway latency: ${shape} (600 requests each, interleaved; keep-alive)`,
    columns: Object.keys(rows[0] ?? {}),
    rows,
    notes: [`The floor relay adds ${relayAdded.toFixed(3)} ms at the median here; the target (issue 29) is the gateway within 0.1 ms of it.`],
  });
}

/** Per shape and concurrency: requests/s and CPU per request of each server, two interleaved rounds, best CPU. */
async function throughput(contenders: Contender[]): Promise<void> {
  const cases = [
    { shape: 'non-streamed ~1 KB', body: PLAIN, concurrency: 1, total: 1500 },
    { shape: 'non-streamed ~1 KB', body: PLAIN, concurrency: 64, total: 6000 },
    { shape: `streamed ${EVENTS} events`, body: STREAMED, concurrency: 1, total: 300 },
    { shape: `streamed ${EVENTS} events`, body: STREAMED, concurrency: 64, total: 1200 },
  ];
  const rows: Record<string, string>[] = [];
  for (const { shape, body, concurrency, total } of cases) {
    const best = new Map<string, { cpu: number; rps: number; p50: number; p99: number }>();
    for (let round = 0; round < 2; round++) {
      for (const contender of round === 0 ? contenders : [...contenders].reverse()) {
        const cpu0 = cpuMs(contender.pid);
        const { wall, latencies: times } = await load(contender.url, body, total, concurrency);
        const cpu = (cpuMs(contender.pid) - cpu0) / total;
        const seen = best.get(contender.name);
        if (!seen || cpu < seen.cpu)
          best.set(contender.name, { cpu, rps: total / (wall / 1000), p50: quantile(times, 0.5), p99: quantile(times, 0.99) });
      }
    }
    const floor = best.get('floor relay')?.cpu ?? Number.NaN;
    for (const contender of contenders) {
      const figures = best.get(contender.name);
      if (!figures) continue;
      const ratio = figures.cpu / floor;
      const target = contender.cpuTarget;
      rows.push({
        shape,
        concurrency: String(concurrency),
        server: contender.name,
        'requests / s': String(Math.round(figures.rps)),
        'p50 / p99 ms': `${fmt(figures.p50)} / ${fmt(figures.p99)}`,
        'CPU µs / request': (figures.cpu * 1000).toFixed(0),
        'CPU / relay': contender.name === 'direct' ? '' : `${ratio.toFixed(2)}x`,
        target: target === undefined ? '' : ratio <= target ? `met (<= ${target})` : `**MISSED** (<= ${target})`,
      });
    }
  }
  print({
    title: 'Gateway throughput and CPU per request (best of 2 interleaved rounds; the server process\'s CPU from /proc, 10 ms ticks)',
    columns: Object.keys(rows[0] ?? {}),
    rows,
    notes: [
      "direct is the canned upstream itself (its CPU per request is the upstream's); the relay passes a non-streamed request through as one, while the gateway asks its upstream for a stream and aggregates it (issue 29 names this as the first cost to remove).",
    ],
  });
}

/**
 * Upstream health in `/metrics`, read when scraped: an upstream that failed once counts a failure in its window, one
 * that cooled down says `cooling` (and 0 for the other states) with a cooldown counted, and the upstream that answered
 * in its place shows its answer in flight and its latency; parsed by the strict exposition reader.
 */
import { sseFrame, sseText, startSse } from '@ai4ts/test-kit';
import { describe, expect, it } from 'vitest';
import { type Answer, askChat, chatAnswer, chatText, chunk, gatewayOf, NO_RETRY, status, upstreamOf } from './fallback-helpers.js';
import { readChunks } from './helpers.js';
import { type Family, parsePrometheusText, total } from './prometheus-text.js';

/** A Chat stream whose first chunk comes at once and the rest once `released` resolves: in flight until then. */
function held(released: Promise<void>): Answer {
  return async (res) => {
    startSse(res);
    res.write(sseFrame(chunk({ role: 'assistant', content: 'held ' }, null)));
    await released;
    res.end(sseText([chunk({ content: 'then done' }, null), chunk({}, 'stop'), '[DONE]']));
  };
}

/** The samples of one family for one upstream of route `m*`, by their `state` label (or '' without one). */
function ofUpstream(families: Map<string, Family>, name: string, upstream: string): Record<string, number> {
  const family = families.get(name);
  if (!family) throw new Error(`no ${name} in the scrape`);
  const samples = family.samples.filter((sample) => sample.labels.route === 'm*' && sample.labels.upstream === upstream);
  return Object.fromEntries(samples.map((sample) => [sample.labels.state ?? '', sample.value]));
}

describe('upstream health in /metrics', () => {
  it('state, failures in the window, cooldowns, in flight and latency of each upstream, read when scraped', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const a = await upstreamOf(() => status(503));
    const b = await upstreamOf((n) => (n === 1 ? chatAnswer('B') : held(released)));
    const gateway = await gatewayOf({
      routes: [
        {
          model: 'm*',
          upstreams: [{ upstream: a.root, protocol: 'chat', name: 'a' }, { upstream: b.root, protocol: 'chat', name: 'b' }],
          cooldown: { failures: 2, window: 60_000, duration: 60_000 },
        },
      ],
      upstreamRetry: NO_RETRY,
      metrics: true,
    });
    const scrape = async () => {
      const response = await fetch(`${gateway.url}/metrics`);
      expect(response.status).toBe(200);
      return parsePrometheusText(await response.text());
    };

    const before = await scrape();
    expect(ofUpstream(before, 'ai4ts_gateway_upstream_state', 'a')).toEqual({ healthy: 1, cooling: 0, 'half-open': 0 });
    expect(ofUpstream(before, 'ai4ts_gateway_upstream_cooldowns_total', 'a')).toEqual({ '': 0 });
    // No answer yet: no latency to say.
    expect(before.get('ai4ts_gateway_upstream_latency_seconds')?.samples).toEqual([]);

    // First request: a fails once (one failure in its window, still healthy), b answers.
    expect(await chatText(await askChat(gateway))).toBe('B');
    const once = await scrape();
    expect(ofUpstream(once, 'ai4ts_gateway_upstream_failures', 'a')).toEqual({ '': 1 });
    expect(ofUpstream(once, 'ai4ts_gateway_upstream_state', 'a')).toEqual({ healthy: 1, cooling: 0, 'half-open': 0 });
    // Measured (a local answer may round to 0 ms, so only its presence and sign are checked).
    expect(ofUpstream(once, 'ai4ts_gateway_upstream_latency_seconds', 'b')['']).toBeGreaterThanOrEqual(0);
    expect(ofUpstream(once, 'ai4ts_gateway_upstream_latency_seconds', 'a')).toEqual({});

    // Second request, streamed: a fails again and cools down; b's answer is held in flight.
    const streamed = await askChat(gateway, true);
    expect(streamed.status).toBe(200);
    const cooling = await scrape();
    expect(ofUpstream(cooling, 'ai4ts_gateway_upstream_state', 'a')).toEqual({ healthy: 0, cooling: 1, 'half-open': 0 });
    expect(ofUpstream(cooling, 'ai4ts_gateway_upstream_state', 'b')).toEqual({ healthy: 1, cooling: 0, 'half-open': 0 });
    expect(ofUpstream(cooling, 'ai4ts_gateway_upstream_cooldowns_total', 'a')).toEqual({ '': 1 });
    expect(ofUpstream(cooling, 'ai4ts_gateway_upstream_cooldowns_total', 'b')).toEqual({ '': 0 });
    expect(ofUpstream(cooling, 'ai4ts_gateway_upstream_failures', 'a')).toEqual({ '': 0 }); // the window starts again
    expect(ofUpstream(cooling, 'ai4ts_gateway_upstream_in_flight', 'b')).toEqual({ '': 1 });
    expect(ofUpstream(cooling, 'ai4ts_gateway_upstream_in_flight', 'a')).toEqual({ '': 0 });
    expect(total(cooling, 'ai4ts_gateway_fallbacks_total')).toBe(1); // the first request's; the stream is not over

    release();
    expect(readChunks(await streamed.text()).text).toBe('held then done');
    await expect.poll(async () => ofUpstream(await scrape(), 'ai4ts_gateway_upstream_in_flight', 'b')).toEqual({ '': 0 });
  });
});

/**
 * `/metrics` after real traffic through the gateway (streamed and not, an upstream's error, an upstream's 429 after a
 * retry, a stream that fails after its 200, a refused token, a held stream), read back by a strict parser of the text
 * format and checked against what was sent; no token, and no model name a client made up, in any label.
 */
import type { ServerResponse } from 'node:http';
import { type GatewayOptions, type ListeningGateway, listenGateway } from '@ai4ts/gateway';
import { type MockModel, type MockTurn, startMockModel } from '@ai4ts/testing';
import { sseFrame } from '@ai4ts/test-kit';
import { Counter, Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import type { AccessLogEntry } from '../src/http/access-log.js';
import type { Incoming } from '../src/http/incoming.js';
import { GatewayMetrics } from '../src/metrics.js';
import { startDaemon } from './helpers.js';
import { type Family, parsePrometheusText, total } from './prometheus-text.js';

const UPSTREAM_KEY = 'sk-upstream-secret-0123456789';
const GATEWAY_KEY = 'sk-gateway-secret-9876543210';
const WRONG_KEY = 'sk-wrong-client-key-5555555555';
const METRICS_TOKEN = 'metrics-scraper-token-4242424242';
/** A configured model whose name needs every escape of a label value. */
const ODD_MODEL = 'odd"model\\with\nbreak';
/** A model no route names by itself, sent by a client: it must never become a label. */
const MADE_UP_MODEL = 'made-up-model-name-7777';

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const server of open.splice(0).reverse()) await server.close();
});

async function mockModel(script: MockTurn[]): Promise<MockModel> {
  const model = await startMockModel({ script, seed: 3 });
  open.push(model);
  return model;
}

async function gateway(options: GatewayOptions): Promise<ListeningGateway> {
  const proxy = await listenGateway({ auth: GATEWAY_KEY, ...options });
  open.push(proxy);
  return proxy;
}

async function chat(proxy: ListeningGateway, model: string, stream: boolean, key = GATEWAY_KEY): Promise<{ status: number; text: string }> {
  const response = await fetch(`${proxy.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, stream, messages: [{ role: 'user', content: 'hi' }] }),
  });
  return { status: response.status, text: await response.text() };
}

async function scrape(proxy: ListeningGateway, token?: string): Promise<{ text: string; families: Map<string, Family> }> {
  const response = await fetch(`${proxy.url}/metrics`, token ? { headers: { authorization: `Bearer ${token}` } } : {});
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  const text = await response.text();
  return { text, families: parsePrometheusText(text) };
}

const ROUTE = '/v1/chat/completions';
const usage = (prompt: number, completion: number) => ({ prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion });

describe('/metrics after real traffic', () => {
  it('counts each request by route, upstream, model and status, its tokens, timings and retries, and no secret', async () => {
    const model = await mockModel([
      { content: 'one', usage: usage(12, 7) }, // non-stream, known model
      { content: 'two', usage: usage(5, 3) }, // stream, known model
      { httpError: { status: 400 } }, // the upstream refuses the request: passed on as a 400
      { httpError: { status: 429 } }, // a 429, retried once...
      { httpError: { status: 429 } }, // ...and again: the client gets the upstream's 429
      { content: 'four', streamError: { message: 'overloaded', code: 'overloaded' } }, // fails after its 200, before its usage
      { content: 'five', usage: usage(1, 1) }, // the odd model, through its own route
      { content: 'six', usage: usage(3, 4) }, // a made-up model, through the catch-all route
    ]);
    const upstream = { upstream: model.baseURL, protocol: 'chat', upstreamToken: UPSTREAM_KEY } as const;
    const proxy = await gateway({
      routes: [
        { model: 'known-model', ...upstream },
        { model: ODD_MODEL, ...upstream },
        { model: '*', ...upstream },
      ],
      upstreamRetry: { maxRetries: 1, backoff: { initialMs: 1, maxMs: 1 } },
      metrics: true,
    });

    expect((await chat(proxy, 'known-model', false)).status).toBe(200);
    const streamed = await chat(proxy, 'known-model', true);
    expect(streamed.status).toBe(200);
    expect(streamed.text).toContain('data: [DONE]');
    expect((await chat(proxy, 'known-model', false)).status).toBe(400);
    expect((await chat(proxy, 'known-model', false)).status).toBe(429);
    const failed = await chat(proxy, 'known-model', true);
    expect(failed.status).toBe(200);
    expect(failed.text).toContain('overloaded');
    expect((await chat(proxy, ODD_MODEL, false)).status).toBe(200);
    expect((await chat(proxy, MADE_UP_MODEL, false)).status).toBe(200);
    expect((await chat(proxy, 'known-model', false, WRONG_KEY)).status).toBe(401);

    const { text, families } = await scrape(proxy);
    for (const secret of [UPSTREAM_KEY, GATEWAY_KEY, WRONG_KEY, MADE_UP_MODEL]) expect(text).not.toContain(secret);
    const name = `chat@${new URL(model.baseURL).host}`;

    const requests = families.get('ai4ts_gateway_requests_total');
    expect(requests?.type).toBe('counter');
    expect(requests?.help).toMatch(/^Requests answered/);
    const known = { route: ROUTE, protocol: 'chat', upstream: name, model: 'known-model' };
    expect(total(families, 'ai4ts_gateway_requests_total', { ...known, status: '200', result: 'ok' })).toBe(2);
    expect(total(families, 'ai4ts_gateway_requests_total', { ...known, status: '200', result: 'error' })).toBe(1);
    expect(total(families, 'ai4ts_gateway_requests_total', { ...known, status: '400', result: 'error' })).toBe(1);
    expect(total(families, 'ai4ts_gateway_requests_total', { ...known, status: '429', result: 'error' })).toBe(1);
    // The label escaped on the wire (\" \\ \n) and read back as the configured name.
    expect(text).toContain('model="odd\\"model\\\\with\\nbreak"');
    expect(total(families, 'ai4ts_gateway_requests_total', { model: ODD_MODEL, status: '200' })).toBe(1);
    expect(total(families, 'ai4ts_gateway_requests_total', { model: 'other', status: '200' })).toBe(1);
    // The refused token: counted by its route, before any upstream or model was known.
    expect(total(families, 'ai4ts_gateway_requests_total', { route: ROUTE, status: '401' })).toBe(1);
    expect(requests?.samples.find((sample) => sample.labels.status === '401')?.labels).toEqual({
      route: ROUTE,
      status: '401',
      result: 'error',
    });
    expect(total(families, 'ai4ts_gateway_requests_total')).toBe(8);

    // Tokens as the upstream reported them (the failed stream ended before its usage): 12+5+1+3 in, 7+3+1+4 out.
    expect(total(families, 'ai4ts_gateway_tokens_total', { type: 'input' })).toBe(21);
    expect(total(families, 'ai4ts_gateway_tokens_total', { type: 'output' })).toBe(15);
    expect(total(families, 'ai4ts_gateway_tokens_total', { type: 'input', model: 'known-model' })).toBe(17);

    // Every request has a duration; the five that had an upstream event a time to first token.
    expect(families.get('ai4ts_gateway_request_duration_seconds')?.type).toBe('histogram');
    expect(total(families, 'ai4ts_gateway_request_duration_seconds_count')).toBe(8);
    expect(total(families, 'ai4ts_gateway_request_duration_seconds_count', { stream: 'true' })).toBe(2);
    expect(total(families, 'ai4ts_gateway_time_to_first_token_seconds_count')).toBe(5);
    expect(total(families, 'ai4ts_gateway_time_to_first_token_seconds_count', { model: 'known-model' })).toBe(3);

    // The 429 was retried once; the upstream's 429 is not the gateway's own rejection.
    expect(total(families, 'ai4ts_gateway_upstream_retries_total', { upstream: name })).toBe(1);
    expect(families.get('ai4ts_gateway_rate_limit_rejections_total')?.samples).toEqual([]);
    expect(total(families, 'ai4ts_gateway_active_streams')).toBe(0);
    expect(total(families, 'ai4ts_gateway_store_ready')).toBe(1);
  });

  it('counts a stream in flight, and behind a token refuses a scraper without it', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const daemon = await startDaemon(async (res: ServerResponse) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(sseFrame({ type: 'text', content: 'held ' }));
      await released;
      res.end(sseFrame({ type: 'done', tokens: { prompt: 1, completion: 1, total: 2 } }));
    });
    open.push(daemon);
    const proxy = await gateway({ upstream: daemon.url, dialect: 'typed', metrics: { token: METRICS_TOKEN } });

    const response = await fetch(`${proxy.url}${ROUTE}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${GATEWAY_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'daemon', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(response.status).toBe(200);
    const during = await scrape(proxy, METRICS_TOKEN);
    expect(total(during.families, 'ai4ts_gateway_active_streams')).toBe(1);
    release();
    expect(await response.text()).toContain('held ');
    const after = await scrape(proxy, METRICS_TOKEN);
    expect(total(after.families, 'ai4ts_gateway_active_streams')).toBe(0);
    expect(total(after.families, 'ai4ts_gateway_requests_total', { route: ROUTE, model: 'daemon', status: '200' })).toBe(1);

    const withoutToken: Record<string, string>[] = [{}, { authorization: `Bearer ${GATEWAY_KEY}` }];
    for (const headers of withoutToken) {
      const refused = await fetch(`${proxy.url}/metrics`, { headers });
      expect(refused.status).toBe(401);
      expect(await refused.text()).not.toContain(METRICS_TOKEN);
    }
    expect((await fetch(`${proxy.url}/metrics`, { method: 'POST' })).status).toBe(405);
  });

  it('serves a path of its choice from the registry it is given, beside the registry’s own metrics', async () => {
    const registry = new Registry();
    new Counter({ name: 'app_own_total', help: 'The application’s own', registers: [registry] }).inc();
    const model = await mockModel([{ content: 'ok', usage: usage(1, 1) }]);
    const proxy = await gateway({
      upstream: model.baseURL,
      upstreamProtocol: 'chat',
      metrics: { path: '/internal/metrics', registry },
    });
    expect((await chat(proxy, 'any', false)).status).toBe(200);
    expect((await fetch(`${proxy.url}/metrics`)).status).toBe(404);
    const families = parsePrometheusText(await registry.metrics());
    expect(families.has('app_own_total')).toBe(true);
    expect(total(families, 'ai4ts_gateway_requests_total', { status: '200', model: 'other' })).toBe(1);
    const served = await fetch(`${proxy.url}/internal/metrics`);
    expect(served.status).toBe(200);
    expect(parsePrometheusText(await served.text()).has('app_own_total')).toBe(true);
  });
});

describe('the entry fields other features fill', () => {
  const incoming: Incoming = {
    method: 'GET',
    path: '/metrics',
    query: new URLSearchParams(),
    scheme: 'http',
    header: () => undefined,
    text: async () => '',
  };
  const entry = (fields: Partial<AccessLogEntry>): AccessLogEntry => ({
    time: new Date(0).toISOString(),
    requestId: 'r',
    method: 'POST',
    path: ROUTE,
    route: ROUTE,
    protocol: 'chat',
    model: 'known-model',
    upstream: 'chat@b.example',
    status: 200,
    durationMs: 10,
    ...fields,
  });

  it('reads the key name, the cost, the attempts and the gateway’s own 429s from the entry', async () => {
    const metrics = new GatewayMetrics({}, { streams: () => 0, storeReady: async () => true, models: () => ['known-model'], health: () => [] });
    metrics.observe(entry({ keyName: 'ci', cost: 0.25, attempts: 2 }));
    metrics.observe(entry({ keyName: 'ci', cost: 0.5 }));
    metrics.observe(entry({ keyName: 'ci', status: 429, upstream: undefined }));
    metrics.observe(entry({ status: 429, error: 'rate_limit_exceeded' })); // an upstream's 429, passed on
    const reply = await metrics.scrape(incoming);
    const families = parsePrometheusText(reply.text ?? '');
    expect(total(families, 'ai4ts_gateway_requests_total', { key: 'ci' })).toBe(3);
    expect(total(families, 'ai4ts_gateway_cost_usd_total', { key: 'ci', model: 'known-model' })).toBe(0.75);
    expect(total(families, 'ai4ts_gateway_fallbacks_total', { route: ROUTE, upstream: 'chat@b.example' })).toBe(1);
    expect(total(families, 'ai4ts_gateway_rate_limit_rejections_total')).toBe(1);
    expect(total(families, 'ai4ts_gateway_rate_limit_rejections_total', { key: 'ci', route: ROUTE })).toBe(1);
  });
});

describe('the test’s exposition parser', () => {
  it('refuses what the format does not allow, so that the checks above cannot pass on a malformed text', () => {
    const histogram = (inf: number, count: number) =>
      `# TYPE h histogram\nh_bucket{le="1"} 1\nh_bucket{le="+Inf"} ${inf}\nh_sum 1\nh_count ${count}\n`;
    expect(() => parsePrometheusText(histogram(2, 2))).not.toThrow();
    expect(() => parsePrometheusText(histogram(2, 3))).toThrow(/\+Inf bucket 2 is not _count 3/);
    expect(() => parsePrometheusText('# TYPE h histogram\nh_bucket{le="2"} 3\nh_bucket{le="+Inf"} 2\nh_sum 1\nh_count 2\n')).toThrow(
      /bucket counts fall/,
    );
    expect(() => parsePrometheusText('# TYPE c counter\nc{l="a\\x"} 1\n')).toThrow(/unknown escape/);
    expect(() => parsePrometheusText('c 1\n')).toThrow(/not in the family/);
    expect(() => parsePrometheusText('# TYPE c counter\nc 1\n# TYPE d counter\nd 1\nc 2\n')).toThrow(/not in the family/);
    expect(() => parsePrometheusText('# TYPE c counter\nc one\n')).toThrow(/not a number/);
    expect(parsePrometheusText('# HELP c a \\\\ and\\n\n# TYPE c counter\nc{l="q\\"b\\\\s\\nn"} 1.5e1\n').get('c')).toEqual({
      name: 'c',
      help: 'a \\ and\n',
      type: 'counter',
      samples: [{ name: 'c', labels: { l: 'q"b\\s\nn' }, value: 15 }],
    });
  });
});

/**
 * `x-ai4ts-cost` over node:http: a header on a whole answer, an HTTP trailer (declared by `Trailer:`) at the end of a
 * stream, read with node:http's `res.trailers`; nothing for a model without a price; exposed to browsers by CORS with
 * the virtual keys' rate-limit headers.
 */
import { request } from 'node:http';
import { type GatewayOptions, type ListeningGateway, listenGateway } from '@ai4ts/gateway';
import { startMockModel } from '@ai4ts/testing';
import { afterEach, describe, expect, it } from 'vitest';

/** 40 input tokens at $1 and 60 output tokens at $2 per million: $0.00016. */
const USAGE = { prompt_tokens: 40, completion_tokens: 60, total_tokens: 100 };
const PRICES = { 'priced-model': { input: 1, output: 2 } };

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const server of open.splice(0).reverse()) await server.close();
});

async function gateway(options: Partial<GatewayOptions> = {}): Promise<ListeningGateway> {
  const model = await startMockModel({ script: () => ({ content: 'Hello there', usage: USAGE }) });
  open.push(model);
  const proxy = await listenGateway({ upstream: model.baseURL, upstreamProtocol: 'chat', prices: PRICES, ...options });
  open.push(proxy);
  return proxy;
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  trailers: Record<string, string | undefined>;
}

/** One POST with node:http, read to its end: `trailers` are only there once the body was read. */
function post(proxy: ListeningGateway, path: string, body: unknown): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(`${proxy.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text, trailers: res.trailers }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

const chat = (model: string, stream: boolean) => ({ model, stream, messages: [{ role: 'user', content: 'Hi' }] });

describe('x-ai4ts-cost', () => {
  it('a whole answer: a header in USD from the price table', async () => {
    const answer = await post(await gateway(), '/v1/chat/completions', chat('priced-model', false));
    expect(answer.status).toBe(200);
    expect(answer.headers['x-ai4ts-cost']).toBe('0.00016');
    expect(answer.headers.trailer).toBeUndefined();
  });

  it('a stream: declared by Trailer and sent as a trailer once its last event is out', async () => {
    const answer = await post(await gateway(), '/v1/chat/completions', chat('priced-model', true));
    expect(answer.status).toBe(200);
    expect(answer.text).toContain('data: [DONE]');
    expect(answer.headers.trailer).toBe('x-ai4ts-cost');
    expect(answer.headers['x-ai4ts-cost']).toBeUndefined(); // not known when the headers left
    expect(answer.trailers).toEqual({ 'x-ai4ts-cost': '0.00016' });
  });

  it('a Messages stream through the Chat upstream: the same trailer', async () => {
    const body = { ...chat('priced-model', true), max_tokens: 100 };
    const answer = await post(await gateway(), '/v1/messages', body);
    expect(answer.status).toBe(200);
    expect(answer.text).toContain('event: message_stop');
    expect(answer.trailers).toEqual({ 'x-ai4ts-cost': '0.00016' });
  });

  it('a resumable stream (read back from the stream store): the same trailer', async () => {
    const answer = await post(await gateway({ resumable: true }), '/v1/chat/completions', chat('priced-model', true));
    expect(answer.headers['x-ai4ts-resumable']).toBe('1');
    expect(answer.text).toContain('data: [DONE]');
    expect(answer.trailers).toEqual({ 'x-ai4ts-cost': '0.00016' });
  });

  it('a model without a price: no header, no trailer', async () => {
    const proxy = await gateway();
    const whole = await post(proxy, '/v1/chat/completions', chat('unpriced-model', false));
    expect(whole.status).toBe(200);
    expect(whole.headers['x-ai4ts-cost']).toBeUndefined();
    const streamed = await post(proxy, '/v1/chat/completions', chat('unpriced-model', true));
    expect(streamed.text).toContain('data: [DONE]');
    expect(streamed.headers.trailer).toBeUndefined();
    expect(streamed.trailers).toEqual({});
  });

  it('CORS exposes it with the upstream, attempts and rate-limit headers', async () => {
    const proxy = await gateway({ cors: 'https://app.example' });
    const answer = await post(proxy, '/v1/chat/completions', chat('priced-model', false));
    const exposed = String(answer.headers['access-control-expose-headers']).split(/,\s*/);
    expect(exposed).toEqual(
      expect.arrayContaining([
        'x-ai4ts-cost',
        'x-ai4ts-upstream',
        'x-ai4ts-attempts',
        'x-ratelimit-limit-requests',
        'x-ratelimit-remaining-requests',
        'x-ratelimit-reset-requests',
        'x-ratelimit-limit-tokens',
        'x-ratelimit-remaining-tokens',
        'x-ratelimit-reset-tokens',
      ]),
    );
  });
});

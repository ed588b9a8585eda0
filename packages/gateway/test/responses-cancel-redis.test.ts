/**
 * `POST /v1/responses/{id}/cancel` from any instance sharing a real redis-server: a background response runs on
 * instance A against a slow upstream, the cancel is sent to instance B, and A aborts the upstream call (the upstream
 * sees its connection close before its answer ended) and stores the response `cancelled`, which both instances read.
 */
import type { ChildProcess } from 'node:child_process';
import { type ListeningGateway, listenGateway } from '@ai4ts/gateway';
import { RedisStreamStore } from '@ai4ts/gateway/redis';
import { closeAll, serve, sseFrame, startSse, type TestServer } from '@ai4ts/test-kit';
import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startRedis, stop } from './redis-server.js';

let redisPort = 0;
let redis: ChildProcess | undefined;

beforeAll(async () => {
  redisPort = await freePort();
  redis = await startRedis(redisPort);
}, 60_000);

const gateways: ListeningGateway[] = [];
afterEach(async () => {
  for (const gateway of gateways.splice(0)) await gateway.close();
  await closeAll();
});

afterAll(async () => {
  await stop(redis);
}, 30_000);

/** A Chat Completions upstream that answers one word every 50 ms for ten seconds; `ended` says whether it finished. */
async function slowUpstream(): Promise<{ server: TestServer; ended: boolean[] }> {
  const ended: boolean[] = [];
  const server = await serve((_req, res, n) => {
    startSse(res);
    ended[n - 1] = false;
    let sent = 0;
    const chunk = (delta: Record<string, unknown>, finish: string | null) => ({
      id: 'chatcmpl-slow',
      object: 'chat.completion.chunk',
      created: 0,
      model: 'slow-model',
      choices: [{ index: 0, delta, finish_reason: finish }],
    });
    res.write(sseFrame(chunk({ role: 'assistant', content: '' }, null)));
    const timer = setInterval(() => {
      if (++sent < 200) {
        res.write(sseFrame(chunk({ content: `w${sent} ` }, null)));
        return;
      }
      clearInterval(timer);
      res.end(sseFrame(chunk({}, 'stop')) + sseFrame('[DONE]'));
      ended[n - 1] = true;
    }, 50);
    res.once('close', () => clearInterval(timer));
  });
  return { server, ended };
}

async function twoInstances(upstream: TestServer): Promise<[OpenAI, OpenAI]> {
  for (let i = 0; i < 2; i++)
    gateways.push(
      await listenGateway({
        upstream: upstream.baseURL,
        upstreamProtocol: 'chat',
        auth: ['sk-one', 'sk-two'],
        upstreamToken: 'sk-upstream-key',
        store: new RedisStreamStore({ redis: `redis://127.0.0.1:${redisPort}` }),
      }),
    );
  const [a, b] = gateways.map((gateway) => new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'sk-one', maxRetries: 0 }));
  if (!a || !b) throw new Error('two gateways');
  return [a, b];
}

describe('cancel across gateway instances sharing a redis-server', () => {
  it('a background response running on A is cancelled on B: the upstream call is aborted, both read it cancelled', async () => {
    const { server, ended } = await slowUpstream();
    const [a, b] = await twoInstances(server);
    const started = await a.responses.create({ model: 'slow-model', input: 'Tell me everything', background: true });
    expect(started.status).toBe('in_progress');
    // Some of the answer has been stored: the generation runs on A.
    const replay = await b.responses.retrieve(started.id, { stream: true });
    for await (const event of replay) if (event.type === 'response.output_text.delta') break;

    // Another credential is told it does not exist, and nothing is cancelled.
    const other = new OpenAI({ baseURL: `${gateways[1]?.url}/v1`, apiKey: 'sk-two', maxRetries: 0 });
    await expect(other.responses.cancel(started.id)).rejects.toMatchObject({ status: 404 });

    const cancelled = await b.responses.cancel(started.id);
    expect(cancelled.status).toBe('cancelled');
    // The upstream saw its one request's connection close before its answer ended.
    await server.closed(1);
    expect(server.requests).toBe(1);
    expect(ended[0]).toBe(false);
    expect((await a.responses.retrieve(started.id)).status).toBe('cancelled');
    expect((await b.responses.retrieve(started.id)).status).toBe('cancelled');
    // The text kept is the part generated before the cancel.
    const text = cancelled.output
      .flatMap((item) => (item.type === 'message' ? item.content : []))
      .map((part) => (part.type === 'output_text' ? part.text : ''))
      .join('');
    expect(text.startsWith('w1 ')).toBe(true);
    // Cancelling again, on either instance, answers the response as it is.
    expect((await a.responses.cancel(started.id)).status).toBe('cancelled');
    expect((await b.responses.cancel(started.id)).status).toBe('cancelled');
  }, 30_000);

  it('a response cancelled on the instance it runs on still is, with the shared store', async () => {
    const { server, ended } = await slowUpstream();
    const [a] = await twoInstances(server);
    const started = await a.responses.create({ model: 'slow-model', input: 'Tell me everything', background: true });
    const replay = await a.responses.retrieve(started.id, { stream: true });
    for await (const event of replay) if (event.type === 'response.output_text.delta') break;
    expect((await a.responses.cancel(started.id)).status).toBe('cancelled');
    await server.closed(1);
    expect(ended[0]).toBe(false);
  }, 30_000);
});

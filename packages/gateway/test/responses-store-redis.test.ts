/**
 * Stored Responses shared through a real redis-server: two gateway instances, each with its own connection (nothing
 * shared in memory), and a client that alternates between them turn by turn, sending each turn the instant the
 * previous `response.completed` arrived; a background response started on one instance and replayed on the other.
 */
import type { ChildProcess } from 'node:child_process';
import { type ListeningGateway, listenGateway } from '@ai4ts/gateway';
import { RedisStreamStore } from '@ai4ts/gateway/redis';
import { type MockModel, type MockRequestBody, type MockTurn, startMockModel } from '@ai4ts/testing';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, redisCli, startRedis, stop } from './redis-server.js';

const WEATHER_SCHEMA = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
const weatherTool: OpenAI.Responses.FunctionTool = { type: 'function', name: 'get_weather', parameters: WEATHER_SCHEMA, strict: false };

function script(body: MockRequestBody): MockTurn {
  const text = JSON.stringify(body);
  if (text.includes('slow')) return { content: 'a b c d e f', chunkDelayMs: 20 };
  const count = (needle: string) => text.split(needle).length - 1;
  // Each question gets its tool call, then its answer: the count says how many results the conversation holds.
  if (count('Weather in Paris?') === count('Paris: 18C')) return { content: `Paris has 18C (${count('Paris: 18C')}).` };
  return { reasoning: 'Look it up.', toolCalls: [{ name: 'get_weather', arguments: { city: 'Paris' } }] };
}

let redisPort = 0;
let redis: ChildProcess | undefined;
let model: MockModel;
const gateways: ListeningGateway[] = [];

beforeAll(async () => {
  redisPort = await freePort();
  redis = await startRedis(redisPort);
  model = await startMockModel({ script, seed: 11 });
  for (const protocol of ['messages', 'messages'] as const)
    gateways.push(
      await listenGateway({
        upstream: model.baseURL,
        upstreamProtocol: protocol,
        auth: ['sk-one', 'sk-two'],
        upstreamToken: 'sk-upstream-key',
        store: new RedisStreamStore({ redis: `redis://127.0.0.1:${redisPort}` }),
      }),
    );
}, 60_000);

afterAll(async () => {
  for (const gateway of gateways) await gateway.close();
  await model?.close();
  await stop(redis);
}, 30_000);

function client(index: number, key = 'sk-one'): OpenAI {
  const gateway = gateways[index % 2];
  if (!gateway) throw new Error('no gateway');
  return new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: key, maxRetries: 0 });
}

describe('two gateway instances sharing a redis-server', () => {
  it('tool turns alternate between the instances, each sent the instant the previous one completed', async () => {
    let previous: string | undefined;
    let callId: string | undefined;
    for (let turn = 0; turn < 20; turn++) {
      const input: OpenAI.Responses.ResponseInput = callId
        ? [{ type: 'function_call_output', call_id: callId, output: 'Paris: 18C' }]
        : [{ role: 'user', content: 'Weather in Paris?' }];
      const stream = await client(turn).responses.create({
        model: 'mock-model',
        input,
        tools: [weatherTool],
        stream: true,
        ...(previous && { previous_response_id: previous }),
      });
      callId = undefined;
      for await (const event of stream) {
        if (event.type !== 'response.completed') continue;
        previous = event.response.id;
        const call = event.response.output.find((item) => item.type === 'function_call');
        if (call?.type === 'function_call') callId = call.call_id;
      }
    }
    // Ten tool calls and ten answers, the last request carrying all ten results, each paired with its call.
    const last = await client(1).responses.retrieve(previous ?? '');
    expect(last.output[0]?.type).toBe('message');
    expect(JSON.stringify(last.output)).toContain('Paris has 18C (10).');
    // Another credential is told it does not exist, on either instance.
    await expect(client(0, 'sk-two').responses.retrieve(previous ?? '')).rejects.toMatchObject({ status: 404 });
    // The store holds no credential.
    const keys = redisCli(redisPort, '--scan', '--pattern', '*');
    const values = keys
      .split('\n')
      .filter((key) => key.includes(':resp:'))
      .map((key) => redisCli(redisPort, 'get', key))
      .join('\n');
    expect(values).not.toContain('sk-one');
    expect(values).not.toContain('sk-upstream-key');
  }, 60_000);

  it('a background response started on one instance is read and replayed on the other', async () => {
    const started = await client(0).responses.create({ model: 'mock-model', input: 'slow please', background: true });
    expect(started.status).toBe('in_progress');
    const replay = await client(1).responses.retrieve(started.id, { stream: true, starting_after: 0 });
    const types: string[] = [];
    for await (const event of replay) types.push(event.type);
    expect(types[0]).toBe('response.in_progress');
    expect(types.at(-1)).toBe('response.completed');
    expect((await client(1).responses.retrieve(started.id)).status).toBe('completed');
    // Cancelling on the other instance: it does not run there, and the response has completed anyway.
    expect((await client(1).responses.cancel(started.id)).status).toBe('completed');
  });
});

/**
 * The OpenAI Agents SDK (`@openai/agents`, its Responses model) through the gateway's stored responses: a tool-using
 * agent continued by `previousResponseId`, so that every step after the first sends only its new items and the
 * gateway supplies the rest, on every upstream protocol of @ai4ts/testing's scripted model. Tracing is off: nothing
 * leaves 127.0.0.1.
 */
import { Agent, OpenAIProvider, Runner, setTracingDisabled, tool } from '@openai/agents';
import { type GatewayProtocol, type ListeningGateway, listenGateway } from '@ai4ts/gateway';
import { type MockModel, type MockRequestBody, type MockTurn, startMockModel } from '@ai4ts/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';

const PROTOCOLS: GatewayProtocol[] = ['chat', 'responses', 'messages', 'gemini'];

/** Each question gets its tool call, then its answer, which counts the results the conversation holds. */
function script(body: MockRequestBody): MockTurn {
  const text = JSON.stringify(body);
  const count = (needle: string) => text.split(needle).length - 1;
  if (count('Weather in Paris?') === count('Paris: 18C')) return { content: `Paris has 18C (${count('Paris: 18C')}).` };
  return { toolCalls: [{ name: 'get_weather', arguments: { city: 'Paris' } }] };
}

const servers: Array<{ model: MockModel; gateway: ListeningGateway; protocol: GatewayProtocol }> = [];

beforeAll(async () => {
  setTracingDisabled(true);
  for (const protocol of PROTOCOLS) {
    const model = await startMockModel({ script, seed: 9 });
    const gateway = await listenGateway({
      upstream: protocol === 'gemini' ? model.geminiBaseURL : model.baseURL,
      upstreamProtocol: protocol,
      auth: 'sk-one',
      upstreamToken: 'sk-upstream-key',
    });
    servers.push({ model, gateway, protocol });
  }
});

afterAll(async () => {
  for (const { model, gateway } of servers) {
    await gateway.close();
    await model.close();
  }
});

describe.each(PROTOCOLS)('to a %s upstream', (protocol) => {
  it('an agent with a tool runs two turns continued by previousResponseId', async () => {
    const server = servers.find((candidate) => candidate.protocol === protocol);
    if (!server) throw new Error(`no ${protocol} server`);
    const provider = new OpenAIProvider({ apiKey: 'sk-one', baseURL: `${server.gateway.url}/v1`, useResponses: true });
    const runner = new Runner({ modelProvider: provider, tracingDisabled: true });
    const getWeather = tool({
      name: 'get_weather',
      description: 'The weather in a city',
      parameters: z.object({ city: z.string() }),
      execute: async ({ city }) => `${city}: 18C`,
    });
    const agent = new Agent({ name: 'weather', instructions: 'Answer with the tool.', model: 'mock-model', tools: [getWeather] });

    const first = await runner.run(agent, 'Weather in Paris?');
    expect(first.finalOutput).toBe('Paris has 18C (1).');
    const second = await runner.run(agent, 'Weather in Paris?', { previousResponseId: first.lastResponseId });
    expect(second.finalOutput).toBe('Paris has 18C (2).');
    // The second run's last response continued another by id, and the gateway held the whole conversation for it:
    // both questions, both calls and both results.
    const read = (path: string) =>
      fetch(`${server.gateway.url}/v1/responses/${path}`, { headers: { authorization: 'Bearer sk-one' } }).then((response) => response.json());
    const last = await read(second.lastResponseId ?? '');
    expect(last.previous_response_id).toMatch(/^resp_/);
    const items = await read(`${second.lastResponseId}/input_items?order=asc&limit=100`);
    const types = items.data.map((item: { type?: string }) => item.type ?? 'message');
    expect(types.filter((type: string) => type === 'function_call')).toHaveLength(2);
    expect(types.filter((type: string) => type === 'function_call_output')).toHaveLength(2);
    expect(JSON.stringify(items.data).split('Weather in Paris?')).toHaveLength(3);
  });
});

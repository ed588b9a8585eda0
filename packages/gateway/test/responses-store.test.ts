/**
 * Stored Responses through the gateway, with real clients (openai-node, the Vercel AI SDK's OpenAI Responses provider
 * at its defaults) against @ai4ts/testing's scripted model speaking each upstream protocol: `previous_response_id`
 * and `item_reference` resolved from the gateway's store, the retrieval API, background responses, and only the
 * creating credential reaching what it stored.
 */
import { createOpenAI } from '@ai-sdk/openai';
import { defineTool, Transport } from '@ai4ts/core';
import { runResponsesToolLoop } from '@ai4ts/responses';
import { type GatewayProtocol, type ListeningGateway, listenGateway } from '@ai4ts/gateway';
import { type MockModel, type MockRequestBody, type MockTurn, startMockModel } from '@ai4ts/testing';
import { generateText, jsonSchema, stepCountIs, streamText, tool } from 'ai';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';

const PROTOCOLS: GatewayProtocol[] = ['chat', 'responses', 'messages', 'gemini'];
const ANSWER = 'Paris has 18C.';
const WEATHER_SCHEMA = { type: 'object' as const, properties: { city: { type: 'string' as const } }, required: ['city'] };

/** Calls the tool until the request carries its result, then answers: only a whole conversation gets the answer. */
function script(body: MockRequestBody): MockTurn {
  const text = JSON.stringify(body);
  if (text.includes('Paris: 18C')) return { content: ANSWER };
  return { reasoning: 'Look it up.', toolCalls: [{ name: 'get_weather', arguments: { city: 'Paris' } }] };
}

interface Upstream {
  model: MockModel;
  gateway: ListeningGateway;
}

const upstreams = new Map<GatewayProtocol, Upstream>();
Reflect.set(globalThis, 'AI_SDK_LOG_WARNINGS', false);

beforeAll(async () => {
  for (const protocol of PROTOCOLS) {
    const model = await startMockModel({ script, seed: 3 });
    const upstream = protocol === 'gemini' ? model.geminiBaseURL : model.baseURL;
    const gateway = await listenGateway({
      upstream,
      upstreamProtocol: protocol,
      auth: ['sk-one', 'sk-two'],
      upstreamToken: 'sk-upstream-key',
      upstreamModel: protocol === 'gemini' ? 'gemini-2.5-flash' : undefined,
    });
    upstreams.set(protocol, { model, gateway });
  }
});

afterAll(async () => {
  for (const { model, gateway } of upstreams.values()) {
    await gateway.close();
    await model.close();
  }
});

function gatewayOf(protocol: GatewayProtocol): ListeningGateway {
  const upstream = upstreams.get(protocol);
  if (!upstream) throw new Error(`no ${protocol} upstream`);
  return upstream.gateway;
}

const weatherTool: OpenAI.Responses.FunctionTool = {
  type: 'function',
  name: 'get_weather',
  parameters: WEATHER_SCHEMA,
  strict: false,
};

describe.each(PROTOCOLS)('to a %s upstream', (protocol) => {
  const client = () => new OpenAI({ baseURL: `${gatewayOf(protocol).url}/v1`, apiKey: 'sk-one', maxRetries: 0 });

  it('openai-node continues by previous_response_id with the tool result only', async () => {
    const openai = client();
    const first = await openai.responses.create({ model: 'mock-model', input: 'Weather in Paris?', tools: [weatherTool] });
    expect(first).toMatchObject({ store: true });
    expect(first.id).toMatch(/^resp_/);
    const call = first.output.find((item) => item.type === 'function_call');
    expect(call?.type).toBe('function_call');
    if (call?.type !== 'function_call') return;
    expect(call.id).toMatch(/^fc_/);
    const second = await openai.responses.create({
      model: 'mock-model',
      previous_response_id: first.id,
      input: [{ type: 'function_call_output', call_id: call.call_id, output: 'Paris: 18C' }],
      tools: [weatherTool],
    });
    expect(second.output_text).toBe(ANSWER);
    expect(second.previous_response_id).toBe(first.id);
    // What the gateway kept: the first turn's input and output, then the tool result.
    const items = await openai.responses.inputItems.list(second.id, { order: 'asc' });
    expect(items.data.map((item) => item.type)).toEqual(['message', ...first.output.map((item) => item.type), 'function_call_output']);
    expect(items.data[1]?.id).toBe(first.output[0]?.id);
  });

  it('openai-node streamed: the next turn sent the instant response.completed arrived finds it', async () => {
    const openai = client();
    const stream = await openai.responses.create({ model: 'mock-model', input: 'Weather in Paris?', tools: [weatherTool], stream: true });
    let next: Promise<OpenAI.Responses.Response> | undefined;
    for await (const event of stream) {
      if (event.type === 'response.created') expect(event.response).toMatchObject({ store: true });
      if (event.type !== 'response.completed') continue;
      const call = event.response.output.find((item) => item.type === 'function_call');
      if (call?.type !== 'function_call') throw new Error('no call');
      next = openai.responses.create({
        model: 'mock-model',
        previous_response_id: event.response.id,
        input: [{ type: 'function_call_output', call_id: call.call_id, output: 'Paris: 18C' }],
      });
    }
    expect((await next)?.output_text).toBe(ANSWER);
  });

  it.each([false, true])('the AI SDK at its defaults (store: true, item_reference) runs the tool loop, streamed: %s', async (streamed) => {
    const sentToGateway: string[] = [];
    const openai = createOpenAI({
      baseURL: `${gatewayOf(protocol).url}/v1`,
      apiKey: 'sk-one',
      fetch: (input, init) => {
        sentToGateway.push(String(init?.body));
        return fetch(input, init);
      },
    });
    const tools = {
      get_weather: tool({
        inputSchema: jsonSchema<{ city: string }>(WEATHER_SCHEMA),
        execute: async ({ city }) => `${city}: 18C`,
      }),
    };
    const options = { model: openai.responses('mock-model'), prompt: 'Weather in Paris?', tools, stopWhen: stepCountIs(4), maxOutputTokens: 500 };
    const result = streamed ? streamText(options) : await generateText(options);
    expect(await result.text).toBe(ANSWER);
    expect((await result.steps).length).toBe(2);
    // The SDK referred to the first step's reasoning by id (a Gemini answer here has none), and the gateway resolved
    // it for the upstream.
    if (protocol !== 'gemini') expect(sentToGateway[1]).toContain('"item_reference"');
    const sent = upstreams.get(protocol)?.model.requests.at(-1)?.body;
    expect(JSON.stringify(sent)).toContain('Paris: 18C');
  });

  it("ai4ts's own Responses loop continues by previous_response_id through the gateway", async () => {
    const sentToGateway: string[] = [];
    const transport = new Transport({
      baseURL: `${gatewayOf(protocol).url}/v1`,
      apiKey: 'sk-one',
      maxRetries: 0,
      fetch: (input, init) => {
        sentToGateway.push(String(init.body));
        return fetch(input, init);
      },
    });
    const getWeather = defineTool({
      name: 'get_weather',
      description: 'The weather in a city',
      parameters: z.object({ city: z.string() }),
      execute: ({ city }) => `${city}: 18C`,
    });
    const result = await runResponsesToolLoop(transport, { model: 'mock-model', input: 'Weather in Paris?', tools: [getWeather] });
    expect(result.text).toBe(ANSWER);
    expect(result.steps).toHaveLength(2);
    // The second step sent only the tool result, by id: the gateway held the rest and sent it all upstream.
    expect(JSON.parse(sentToGateway[1] ?? '{}')).toMatchObject({ previous_response_id: expect.stringMatching(/^resp_/), input: [{ type: 'function_call_output' }] });
    const sent = upstreams.get(protocol)?.model.requests.at(-1)?.body;
    expect(JSON.stringify(sent)).toContain('Weather in Paris?');
  });

  it('another credential gets the 404 for the response and for its items', async () => {
    const first = await client().responses.create({ model: 'mock-model', input: 'Weather in Paris?', tools: [weatherTool] });
    const other = new OpenAI({ baseURL: `${gatewayOf(protocol).url}/v1`, apiKey: 'sk-two', maxRetries: 0 });
    await expect(other.responses.retrieve(first.id)).rejects.toMatchObject({ status: 404, code: 'response_not_found' });
    await expect(other.responses.create({ model: 'mock-model', previous_response_id: first.id, input: 'Go on' })).rejects.toMatchObject({
      status: 404,
      code: 'response_not_found',
    });
    const itemId = first.output[0]?.id ?? '';
    await expect(
      other.responses.create({ model: 'mock-model', input: [{ type: 'item_reference', id: itemId }, { role: 'user', content: 'Go on' }] }),
    ).rejects.toMatchObject({ status: 404, code: 'item_not_found' });
    await expect(other.responses.delete(first.id)).rejects.toMatchObject({ status: 404 });
    expect((await client().responses.retrieve(first.id)).id).toBe(first.id);
  });
});

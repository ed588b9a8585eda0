/**
 * Reasoning seals through the response store: a Responses client continues a tool loop by `previous_response_id`, or
 * by `item_reference` to its reasoning items, and the gateway resolves the stored items before translating them to
 * a Messages upstream with thinking (which refuses a thinking block it did not sign and a tool loop whose last
 * assistant turn does not start with thinking), a Responses upstream with `encrypted_content` (which refuses
 * reasoning it did not encrypt) and a Gemini 3 upstream (which refuses a function call without its thought
 * signature). Each later upstream request must carry back every seal the upstream issued: the store keeps the output
 * items exactly as the codec wrote them.
 */
import type { GatewayProtocol } from '@ai4ts/gateway';
import type { MockRequestBody, MockScriptContext, MockTurn } from '@ai4ts/testing';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { gatewayPerProtocol, type Json, sealsSentBack } from './fidelity-helpers.js';

type Upstream = Exclude<GatewayProtocol, 'chat'>;
const UPSTREAMS: Upstream[] = ['messages', 'responses', 'gemini'];
/** A Gemini 3 model: the scripted Gemini upstream requires every function call's signature back. */
const MODEL = 'gemini-3-seals';
const ANSWER = 'Paris 18C, Tokyo 22C, Oslo 3C.';
const CITIES: Record<string, string> = { Paris: '18C', Tokyo: '22C', Oslo: '3C' };
const weatherTool: OpenAI.Responses.FunctionTool = {
  type: 'function',
  name: 'get_weather',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  strict: false,
};

/** A turn's body, sent aggregated or streamed. */
type Body = Omit<OpenAI.Responses.ResponseCreateParamsNonStreaming, 'stream'>;
const record = (value: unknown): Json => (typeof value === 'object' && value !== null ? Object.fromEntries(Object.entries(value)) : {});

/** How many tool results an upstream request carries, in its protocol. */
function resultCount(body: MockRequestBody, context: MockScriptContext): number {
  const marker = { chat: '"role":"tool"', responses: '"type":"function_call_output"', messages: '"type":"tool_result"', gemini: '"functionResponse"' }[
    context.protocol
  ];
  return JSON.stringify(body).split(marker).length - 1;
}

/** Two parallel calls with reasoning (Messages adds a redacted block), then one more call, then the answer. */
function script(body: MockRequestBody, context: MockScriptContext): MockTurn {
  const results = resultCount(body, context);
  const call = (id: string, city: string) => ({ id: `call_${id}_${context.step}`, name: 'get_weather', arguments: { city } });
  if (results === 0)
    return {
      reasoning: 'Two cities: two calls.',
      ...(context.protocol === 'messages' && { redactedThinking: `EmwKAhgBEgy${context.step}` }),
      toolCalls: [call('paris', 'Paris'), call('tokyo', 'Tokyo')],
    };
  if (results === 2) return { reasoning: 'One more city.', toolCalls: [call('oslo', 'Oslo')] };
  return { reasoning: 'All known.', content: ANSWER };
}

/** The seals each of an upstream's two tool-calling answers gives (Messages: a thinking and a redacted block first). */
const ISSUED: Record<Upstream, [number, number]> = { messages: [2, 1], responses: [1, 1], gemini: [1, 1] };

// Default state 'gateway': the gateway resolves the conversation, a Responses upstream included.
const upstreams = gatewayPerProtocol({ script, seed: 17 }, UPSTREAMS);

/** One turn through openai-node, aggregated or streamed (the streamed one stored from its events). */
async function create(client: OpenAI, body: Body, streamed: boolean) {
  return streamed ? client.responses.stream(body).finalResponse() : client.responses.create(body);
}

function callsOf(response: OpenAI.Responses.Response): OpenAI.Responses.ResponseFunctionToolCall[] {
  return response.output.filter((item) => item.type === 'function_call');
}

/** Each call's result, last call first (paired by id, not by order). */
function resultsOf(response: OpenAI.Responses.Response): OpenAI.Responses.ResponseInputItem.FunctionCallOutput[] {
  return callsOf(response)
    .reverse()
    .map((call) => ({ type: 'function_call_output', call_id: call.call_id, output: CITIES[JSON.parse(call.arguments).city] ?? '' }));
}

function textOf(response: OpenAI.Responses.Response): string {
  return response.output
    .flatMap((item) => (item.type === 'message' ? item.content : []))
    .map((part) => (part.type === 'output_text' ? part.text : ''))
    .join('');
}

/**
 * How a client continues by reference: the whole conversation again, each reasoning item of an answer as an
 * `item_reference` (its seal only in the store), every other output item as it was received.
 */
function referenced(response: OpenAI.Responses.Response): OpenAI.Responses.ResponseInput {
  return response.output.map((item): OpenAI.Responses.ResponseInputItem => {
    switch (item.type) {
      case 'reasoning':
        return { type: 'item_reference', id: item.id };
      case 'message':
      case 'function_call':
        return item;
      default:
        throw new Error(`No output item of type ${item.type} was scripted`);
    }
  });
}

const CASES = UPSTREAMS.flatMap((upstream) =>
  (['previous_response_id', 'item_reference'] as const).flatMap((by) =>
    [false, true].map((streamed) => [upstream, by, streamed ? 'streamed' : 'aggregated'] as const),
  ),
);

describe.each(CASES)('a Responses client, %s upstream, continued by %s, %s', (protocol, by, mode) => {
  it('three steps: every later upstream request carries every seal the upstream issued', async () => {
    const upstream = upstreams.get(protocol);
    if (!upstream) throw new Error('no upstream');
    const { model, gateway } = upstream;
    const client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'sk-gateway', maxRetries: 0 });
    const streamed = mode === 'streamed';
    const seen = model.requests.length;
    const base = { model: MODEL, reasoning: { effort: 'low' as const }, tools: [weatherTool] };

    let input: OpenAI.Responses.ResponseInput = [{ role: 'user', content: 'Weather in Paris, Tokyo and Oslo?' }];
    const first = await create(client, { ...base, input }, streamed);
    expect(callsOf(first).map((call) => JSON.parse(call.arguments).city)).toEqual(['Paris', 'Tokyo']);

    const next = (answer: OpenAI.Responses.Response): Body => {
      if (by === 'previous_response_id') return { ...base, previous_response_id: answer.id, input: resultsOf(answer) };
      input = [...input, ...referenced(answer), ...resultsOf(answer)];
      return { ...base, input };
    };
    const second = await create(client, next(first), streamed);
    expect(callsOf(second).map((call) => JSON.parse(call.arguments).city)).toEqual(['Oslo']);
    const third = await create(client, next(second), streamed);
    expect(textOf(third)).toBe(ANSWER);

    const bodies = model.requests.slice(seen).map((recorded) => record(recorded.body));
    expect(bodies).toHaveLength(3);
    // The scripted upstream checked that each seal is one it issued; here, that none was left out.
    const [one, two] = ISSUED[protocol];
    const secondSeals = sealsSentBack(protocol, bodies[1] ?? {});
    const thirdSeals = sealsSentBack(protocol, bodies[2] ?? {});
    expect(secondSeals).toHaveLength(one);
    expect(thirdSeals).toHaveLength(one + two);
    expect(thirdSeals.slice(0, one)).toEqual(secondSeals);
    // Thinking stayed on for Messages: its rule on the last assistant turn applied to every later request.
    if (protocol === 'messages') for (const body of bodies) expect(body.thinking).toMatchObject({ type: 'enabled' });
    // A Responses upstream was asked for its encrypted reasoning, to be sent back.
    if (protocol === 'responses') for (const body of bodies) expect(body.include).toContain('reasoning.encrypted_content');
  });
});

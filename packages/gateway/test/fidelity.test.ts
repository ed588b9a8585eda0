/**
 * Lossless turns, for every inbound x upstream pair: a three-step tool conversation with reasoning and parallel calls,
 * each turn sent back the way the inbound protocol's clients keep it (the assistant message, output items, content
 * blocks or model content as answered, vendor fields included), the results in an order other than the calls', to
 * @ai4ts/testing's scripted upstream, which refuses what the real API refuses: unpaired calls and results, thinking
 * it did not sign, reasoning it did not encrypt, a Gemini 3 function call without its signature. Each upstream must
 * get its own reasoning back, sealed, on every later turn. Aggregated answers are read as JSON; streamed ones by each
 * protocol's official client (openai-node's stream helpers, @anthropic-ai/sdk's MessageStream, @google/genai), whose
 * folded result is what such a client sends back.
 */
import Anthropic from '@anthropic-ai/sdk';
import type { GatewayProtocol, ListeningGateway } from '@ai4ts/gateway';
import type { MockRequestBody, MockScriptContext, MockTurn } from '@ai4ts/testing';
import { type GenerateContentConfig, GoogleGenAI, type Part } from '@google/genai';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { gatewayPerProtocol, type Json, list, PROTOCOLS, sealsSentBack } from './fidelity-helpers.js';

/** A Gemini 3 model: the scripted Gemini upstream requires every function call's signature back. */
const MODEL = 'gemini-3-fidelity';
const ANSWER = 'Paris 18C, Tokyo 22C, Oslo 3C.';
const CITIES: Record<string, string> = { Paris: '18C', Tokyo: '22C', Oslo: '3C' };
const SCHEMA = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };


/** How many tool results a request carries, whichever protocol it is in. */
function resultCount(body: MockRequestBody, context: MockScriptContext): number {
  const text = JSON.stringify(body);
  const marker = { chat: '"role":"tool"', responses: '"type":"function_call_output"', messages: '"type":"tool_result"', gemini: '"functionResponse"' }[
    context.protocol
  ];
  return text.split(marker).length - 1;
}

/** Two parallel calls with reasoning, then one more, then the answer; Messages adds a redacted block to the first. */
function script(body: MockRequestBody, context: MockScriptContext): MockTurn {
  const results = resultCount(body, context);
  const step = (id: string, city: string) => ({ id: `call_${id}_${context.step}`, name: 'get_weather', arguments: { city } });
  if (results === 0)
    return {
      reasoning: 'Two cities: two calls.',
      ...(context.protocol === 'messages' && { redactedThinking: `EmwKAhgBEgy${context.step}` }),
      toolCalls: [step('paris', 'Paris'), step('tokyo', 'Tokyo')],
    };
  if (results === 2) return { reasoning: 'One more city.', toolCalls: [step('oslo', 'Oslo')] };
  return { reasoning: 'All known.', content: ANSWER };
}

interface Call {
  id: string;
  name: string;
  city: string;
}

/** An inbound protocol as its clients speak it: the first request, and the next one from an answer. */
interface Client {
  path: string;
  first(): Json;
  /** The request after `answer`: its turn kept as the client received it, then each call's result, last call first. */
  next(request: Json, answer: Json): Json;
  calls(answer: Json): Call[];
  text(answer: Json): string;
  /** Where the answer keeps its reasoning's seals (signatures, encrypted content), for the envelope checks. */
  seals(answer: Json): string[];
  /** The answer streamed through the official client of the protocol, folded by it, as plain JSON. */
  stream(url: string, body: Json): Promise<Json>;
}

/** What a client folded, as the plain JSON it would send back. */
const plain = (value: unknown): Json => JSON.parse(JSON.stringify(value));
const openai = (url: string) => new OpenAI({ baseURL: `${url}/v1`, apiKey: 'sk-gateway', maxRetries: 0 });

const record = (value: unknown): Json => (typeof value === 'object' && value !== null ? Object.fromEntries(Object.entries(value)) : {});
const messageOf = (answer: Json): Json => record(list(answer.choices)[0]?.message);
const contentOf = (answer: Json): Json => record(list(answer.candidates)[0]?.content);
const cityOf = (args: unknown): string => String((typeof args === 'string' ? JSON.parse(args) : args)?.city);

const CLIENTS: Record<GatewayProtocol, Client> = {
  chat: {
    path: '/v1/chat/completions',
    first: () => ({
      model: MODEL,
      reasoning_effort: 'low',
      messages: [{ role: 'user', content: 'Weather in Paris, Tokyo and Oslo?' }],
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: SCHEMA } }],
    }),
    next(request, answer) {
      const message = messageOf(answer);
      const results = CLIENTS.chat.calls(answer).reverse().map((call) => ({ role: 'tool', tool_call_id: call.id, content: CITIES[call.city] }));
      return { ...request, messages: [...list(request.messages), message, ...results] };
    },
    calls: (answer) =>
      list(messageOf(answer).tool_calls).map((call) => {
        const fn = record(call.function);
        return { id: String(call.id), name: String(fn.name), city: cityOf(fn.arguments) };
      }),
    text: (answer) => String(messageOf(answer).content ?? ''),
    seals: (answer) => list(messageOf(answer).thinking_blocks).map((block) => String(block.signature ?? block.data)),
    // The request is the JSON the aggregated cell sends, which the SDK's types do not describe field by field.
    stream: async (url, body) =>
      plain(await openai(url).chat.completions.stream(body as unknown as OpenAI.ChatCompletionCreateParamsStreaming).finalChatCompletion()),
  },
  responses: {
    path: '/v1/responses',
    first: () => ({
      model: MODEL,
      store: false,
      reasoning: { effort: 'low' },
      input: [{ role: 'user', content: 'Weather in Paris, Tokyo and Oslo?' }],
      tools: [{ type: 'function', name: 'get_weather', parameters: SCHEMA }],
    }),
    next(request, answer) {
      const results = CLIENTS.responses
        .calls(answer)
        .reverse()
        .map((call) => ({ type: 'function_call_output', call_id: call.id, output: CITIES[call.city] }));
      return { ...request, input: [...list(request.input), ...list(answer.output), ...results] };
    },
    calls: (answer) =>
      list(answer.output)
        .filter((item) => item.type === 'function_call')
        .map((item) => ({ id: String(item.call_id), name: String(item.name), city: cityOf(item.arguments) })),
    text: (answer) =>
      list(answer.output)
        .filter((item) => item.type === 'message')
        .flatMap((item) => list(item.content))
        .map((part) => String(part.text ?? ''))
        .join(''),
    seals: (answer) =>
      list(answer.output)
        .filter((item) => item.type === 'reasoning' && item.encrypted_content !== undefined)
        .map((item) => String(item.encrypted_content)),
    stream: async (url, body) =>
      plain(await openai(url).responses.stream(body as unknown as OpenAI.Responses.ResponseCreateParamsStreaming).finalResponse()),
  },
  messages: {
    path: '/v1/messages',
    first: () => ({
      model: MODEL,
      max_tokens: 4096,
      thinking: { type: 'enabled', budget_tokens: 2048 },
      messages: [{ role: 'user', content: 'Weather in Paris, Tokyo and Oslo?' }],
      tools: [{ name: 'get_weather', input_schema: SCHEMA }],
    }),
    next(request, answer) {
      const results = CLIENTS.messages
        .calls(answer)
        .reverse()
        .map((call) => ({ type: 'tool_result', tool_use_id: call.id, content: CITIES[call.city] }));
      return {
        ...request,
        messages: [...list(request.messages), { role: 'assistant', content: answer.content }, { role: 'user', content: results }],
      };
    },
    calls: (answer) =>
      list(answer.content)
        .filter((block) => block.type === 'tool_use')
        .map((block) => ({ id: String(block.id), name: String(block.name), city: cityOf(block.input) })),
    text: (answer) =>
      list(answer.content)
        .filter((block) => block.type === 'text')
        .map((block) => String(block.text))
        .join(''),
    seals: (answer) =>
      list(answer.content)
        .filter((block) => block.type === 'redacted_thinking' || (block.type === 'thinking' && block.signature !== ''))
        .map((block) => String(block.signature ?? block.data)),
    stream: async (url, body) => {
      const client = new Anthropic({ baseURL: url, apiKey: 'sk-gateway', maxRetries: 0 });
      return plain(await client.messages.stream(body as unknown as Anthropic.MessageStreamParams).finalMessage());
    },
  },
  gemini: {
    path: `/v1beta/models/${MODEL}:generateContent`,
    first: () => ({
      contents: [{ role: 'user', parts: [{ text: 'Weather in Paris, Tokyo and Oslo?' }] }],
      tools: [{ functionDeclarations: [{ name: 'get_weather', parametersJsonSchema: SCHEMA }] }],
      generationConfig: { thinkingConfig: { includeThoughts: true, thinkingBudget: 2048 } },
    }),
    next(request, answer) {
      const content = contentOf(answer);
      const parts = CLIENTS.gemini
        .calls(answer)
        .reverse()
        .map((call) => ({ functionResponse: { id: call.id, name: call.name, response: { output: CITIES[call.city] } } }));
      return { ...request, contents: [...list(request.contents), content, { role: 'user', parts }] };
    },
    calls: (answer) =>
      list(contentOf(answer).parts)
        .filter((part) => part.functionCall)
        .map((part) => {
          const call = record(part.functionCall);
          return { id: String(call.id ?? ''), name: String(call.name), city: cityOf(call.args) };
        }),
    text: (answer) =>
      list(contentOf(answer).parts)
        .filter((part) => typeof part.text === 'string' && part.thought !== true)
        .map((part) => String(part.text))
        .join(''),
    seals: (answer) =>
      list(contentOf(answer).parts)
        .filter((part) => part.thought === true && part.thoughtSignature !== undefined)
        .map((part) => String(part.thoughtSignature)),
    stream: async (url, body) => {
      const client = new GoogleGenAI({ apiKey: 'sk-gateway', httpOptions: { baseUrl: url } });
      const generation = record(body.generationConfig);
      const config = { tools: body.tools, thinkingConfig: generation.thinkingConfig } as GenerateContentConfig;
      const parts: Part[] = [];
      const contents = body.contents as Parameters<typeof client.models.generateContentStream>[0]['contents'];
      for await (const chunk of await client.models.generateContentStream({ model: MODEL, contents, config }))
        parts.push(...(chunk.candidates?.[0]?.content?.parts ?? []));
      // The model's turn as a Gemini client sends it back: every part that says something.
      const kept = parts.filter((part) => part.text !== '' || part.thoughtSignature !== undefined);
      return plain({ candidates: [{ content: { role: 'model', parts: kept } }] });
    },
  },
};

/**
 * Per upstream: the seals of its first answer that a client sees on reasoning (Messages: the redacted block too;
 * Gemini signs the first call, whose id carries it), and the seals each of its two tool-calling answers gives.
 */
const SEALS: Record<GatewayProtocol, { client: number; answers: [number, number] }> = {
  chat: { client: 0, answers: [0, 0] },
  responses: { client: 1, answers: [1, 1] },
  messages: { client: 2, answers: [2, 1] },
  gemini: { client: 0, answers: [1, 1] },
};

const upstreams = gatewayPerProtocol({ script, seed: 11 });

async function send(gateway: ListeningGateway, client: Client, body: Json, stream: boolean): Promise<Json> {
  if (stream) return client.stream(gateway.url, body);
  const response = await fetch(`${gateway.url}${client.path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify(body),
  });
  const json = record(await response.json());
  if (response.status !== 200) throw new Error(`${response.status}: ${JSON.stringify(json)}`);
  return json;
}

const PAIRS = PROTOCOLS.flatMap((inbound) =>
  PROTOCOLS.flatMap((upstream) => [false, true].map((stream) => [inbound, upstream, stream ? 'streamed' : 'aggregated'] as const)),
);

describe.each(PAIRS)('%s in, %s upstream, %s', (inbound, upstreamProtocol, mode) => {
  it('three steps: reasoning sealed and sent back, parallel calls paired with their results by id, the answer', async () => {
    const upstream = upstreams.get(upstreamProtocol);
    if (!upstream) throw new Error('no upstream');
    const { model, gateway } = upstream;
    const client = CLIENTS[inbound];
    const seen = model.requests.length;

    let request = client.first();
    const first = await send(gateway, client, request, mode === 'streamed');
    expect(client.calls(first).map((call) => call.city)).toEqual(['Paris', 'Tokyo']);
    // Another vendor's seal reaches the client in an envelope, its own vendor's as it is.
    for (const seal of client.seals(first)) {
      if (inbound === upstreamProtocol || (inbound === 'chat' && upstreamProtocol === 'messages')) expect(seal).not.toMatch(/^ai4ts\.seal\./);
      else expect(seal).toMatch(/^ai4ts\.seal\./);
    }
    expect(client.seals(first)).toHaveLength(SEALS[upstreamProtocol].client);

    request = client.next(request, first);
    const second = await send(gateway, client, request, mode === 'streamed');
    expect(client.calls(second).map((call) => call.city)).toEqual(['Oslo']);

    request = client.next(request, second);
    const third = await send(gateway, client, request, mode === 'streamed');
    expect(client.text(third)).toBe(ANSWER);

    const bodies = model.requests.slice(seen).map((recorded) => record(recorded.body));
    expect(bodies).toHaveLength(3);
    // Each upstream got every seal it gave back, on every later turn (the scripted upstream checked each one).
    const [one, two] = SEALS[upstreamProtocol].answers;
    expect(sealsSentBack(upstreamProtocol, bodies[1] ?? {})).toHaveLength(one);
    expect(sealsSentBack(upstreamProtocol, bodies[2] ?? {})).toHaveLength(one + two);
  });
});

it('a Chat client that kept no thinking_blocks: the Messages upstream gets the turn without thinking, not a refusal', async () => {
  const upstream = upstreams.get('messages');
  if (!upstream) throw new Error('no upstream');
  const client = CLIENTS.chat;
  const request = client.first();
  const first = await send(upstream.gateway, client, request, false);
  const next = client.next(request, first);
  // The message as a client that keeps only the standard fields sends it back.
  const messages = list(next.messages).map(({ thinking_blocks: _, ...message }) => message);
  const second = await send(upstream.gateway, client, { ...next, messages }, false);
  expect(client.calls(second).map((call) => call.city)).toEqual(['Oslo']);
  const body = record(upstream.model.requests.at(-1)?.body);
  expect(body.thinking).toBeUndefined();
  expect(sealsSentBack('messages', body)).toEqual([]);
});

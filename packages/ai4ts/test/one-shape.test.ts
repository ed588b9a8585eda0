/**
 * The proof of "one shape": one scenario (two parallel tool calls with fragmented arguments, then an answer) through
 * client.chat, client.responses, client.messages and client.gemini, each with create and stream, against @ai4ts/testing's server.
 * The same result shape, the same step-tagged event sequence, and the exact second request body of each protocol.
 */
import { LOOP_FIELDS } from '@ai4ts/core/internal';
import { type MockModel, type MockTurn, startMockModel } from '@ai4ts/testing';
import {
  Ai4ts,
  type ChatStream,
  defineTool,
  type GeminiStream,
  type MessagesStream,
  type ResponsesStream,
  type ToolLoopEvent,
} from 'ai4ts';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';

const CELSIUS: Record<string, number> = { Paris: 18, Zürich: 21 };
const ANSWER = 'Zürich is warmer: 21 °C against 18 °C in Paris.';

const script: MockTurn[] = [
  {
    reasoning: 'Two independent lookups, so two calls at once.',
    toolCalls: [
      { name: 'get_weather', arguments: { city: 'Paris' } },
      { name: 'get_weather', arguments: { city: 'Zürich' } },
    ],
  },
  { content: ANSWER },
];

const getWeather = defineTool({
  name: 'get_weather',
  description: 'Current temperature of a city',
  parameters: z.object({ city: z.string() }),
  execute: ({ city }) => ({ city, celsius: CELSIUS[city] }),
});

const WIRE_TOOL_PARAMETERS = {
  type: 'object',
  properties: { city: { type: 'string' } },
  required: ['city'],
};

const QUESTION = 'Is it warmer in Paris or in Zürich?';

let model: MockModel | undefined;
afterEach(async () => {
  await model?.close();
  model = undefined;
});

/** A client of the scripted model; Gemini's is the `gemini` provider at its `/v1beta` base. */
async function client(protocol?: string): Promise<Ai4ts> {
  model = await startMockModel({ script, seed: 7 });
  if (protocol === 'gemini') return new Ai4ts({ provider: 'gemini', baseURL: model.geminiBaseURL, apiKey: 'test-key', maxRetries: 0 });
  return new Ai4ts({ provider: 'openai-compatible', baseURL: model.baseURL, apiKey: 'test-key', maxRetries: 0 });
}

/** A Gemini 3 model: the scripted server then refuses a function-call turn sent back without its signature. */
const GEMINI_MODEL = 'gemini-3-mock';
const GEMINI_ASK = {
  model: GEMINI_MODEL,
  contents: [{ role: 'user' as const, parts: [{ text: QUESTION }] }],
  tools: [getWeather],
  generationConfig: { thinkingConfig: { includeThoughts: true } },
};

/** Each protocol's scenario: how to ask, with create or stream, and the second request body it must send. */
const protocols = {
  chat: {
    create: (c: Ai4ts) =>
      c.chat.create({ model: 'mock-model', messages: [{ role: 'user', content: QUESTION }], tools: [getWeather] }),
    stream: (c: Ai4ts) =>
      c.chat.stream({ model: 'mock-model', messages: [{ role: 'user', content: QUESTION }], tools: [getWeather] }),
    secondBody: (ids: string[]) => ({
      model: 'mock-model',
      messages: [
        { role: 'user', content: QUESTION },
        {
          role: 'assistant',
          content: null,
          reasoning_content: script[0]?.reasoning,
          tool_calls: [
            { id: ids[0], type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            { id: ids[1], type: 'function', function: { name: 'get_weather', arguments: '{"city":"Z\\u00fcrich"}' } },
          ],
        },
        { role: 'tool', tool_call_id: ids[0], content: '{"city":"Paris","celsius":18}' },
        { role: 'tool', tool_call_id: ids[1], content: '{"city":"Zürich","celsius":21}' },
      ],
      tools: [
        {
          type: 'function',
          function: { name: 'get_weather', description: 'Current temperature of a city', parameters: WIRE_TOOL_PARAMETERS },
        },
      ],
      stream: true,
      stream_options: { include_usage: true },
    }),
  },
  responses: {
    create: (c: Ai4ts) => c.responses.create({ model: 'mock-model', input: QUESTION, tools: [getWeather] }),
    stream: (c: Ai4ts) => c.responses.stream({ model: 'mock-model', input: QUESTION, tools: [getWeather] }),
    secondBody: (ids: string[], firstId: string) => ({
      model: 'mock-model',
      // `store` is not false: the step continues the stored response and sends only the tool outputs.
      previous_response_id: firstId,
      input: [
        { type: 'function_call_output', call_id: ids[0], output: '{"city":"Paris","celsius":18}' },
        { type: 'function_call_output', call_id: ids[1], output: '{"city":"Zürich","celsius":21}' },
      ],
      tools: [
        {
          type: 'function',
          name: 'get_weather',
          description: 'Current temperature of a city',
          parameters: WIRE_TOOL_PARAMETERS,
          strict: false,
        },
      ],
      stream: true,
    }),
  },
  messages: {
    create: (c: Ai4ts) =>
      c.messages.create({
        model: 'mock-model',
        max_tokens: 1024,
        messages: [{ role: 'user', content: QUESTION }],
        tools: [getWeather],
      }),
    stream: (c: Ai4ts) =>
      c.messages.stream({
        model: 'mock-model',
        max_tokens: 1024,
        messages: [{ role: 'user', content: QUESTION }],
        tools: [getWeather],
      }),
    secondBody: (ids: string[]) => ({
      model: 'mock-model',
      max_tokens: 1024,
      messages: [
        { role: 'user', content: QUESTION },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: script[0]?.reasoning, signature: expect.any(String) },
            { type: 'tool_use', id: ids[0], name: 'get_weather', input: { city: 'Paris' } },
            { type: 'tool_use', id: ids[1], name: 'get_weather', input: { city: 'Zürich' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: ids[0], content: '{"city":"Paris","celsius":18}' },
            { type: 'tool_result', tool_use_id: ids[1], content: '{"city":"Zürich","celsius":21}' },
          ],
        },
      ],
      tools: [{ name: 'get_weather', description: 'Current temperature of a city', input_schema: WIRE_TOOL_PARAMETERS }],
      stream: true,
    }),
  },
  gemini: {
    create: (c: Ai4ts) => c.gemini.create(GEMINI_ASK),
    stream: (c: Ai4ts) => c.gemini.stream(GEMINI_ASK),
    // The model is in the URL; the model turn goes back as received, its thought signature on the first call.
    secondBody: () => ({
      contents: [
        { role: 'user', parts: [{ text: QUESTION }] },
        {
          role: 'model',
          parts: [
            { text: script[0]?.reasoning, thought: true },
            { functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: expect.any(String) },
            { functionCall: { name: 'get_weather', args: { city: 'Zürich' } } },
          ],
        },
        {
          role: 'user',
          parts: [
            { functionResponse: { name: 'get_weather', response: { output: '{"city":"Paris","celsius":18}' } } },
            { functionResponse: { name: 'get_weather', response: { output: '{"city":"Zürich","celsius":21}' } } },
          ],
        },
      ],
      tools: [
        {
          functionDeclarations: [
            { name: 'get_weather', description: 'Current temperature of a city', parametersJsonSchema: WIRE_TOOL_PARAMETERS },
          ],
        },
      ],
      generationConfig: { thinkingConfig: { includeThoughts: true } },
    }),
  },
} as const;

/** What a result of any protocol must look like; the protocol's own completion stays in `completion`. */
function expectScenarioResult(result: {
  text: string;
  finishReason: string;
  steps: { toolCalls: { name: string; arguments: string }[]; toolResults: { output: unknown; isError: boolean }[] }[];
  usage: { total_tokens: number } | undefined;
  messages: unknown[];
}) {
  expect(result.text).toBe(ANSWER);
  expect(result.finishReason).toBe('stop');
  expect(result.steps).toHaveLength(2);
  expect(result.steps[0]?.toolCalls.map((call) => [call.name, JSON.parse(call.arguments)])).toEqual([
    ['get_weather', { city: 'Paris' }],
    ['get_weather', { city: 'Zürich' }],
  ]);
  expect(result.steps[0]?.toolResults).toEqual([
    expect.objectContaining({ output: { city: 'Paris', celsius: 18 }, isError: false }),
    expect.objectContaining({ output: { city: 'Zürich', celsius: 21 }, isError: false }),
  ]);
  expect(result.steps[1]?.toolCalls).toEqual([]);
  expect(result.usage?.total_tokens).toBeGreaterThan(0);
  expect(result.messages.length).toBeGreaterThan(2);
}

/**
 * The loop's event sequence with the protocol left out: deltas collapsed to one entry per run of the same type
 * and step, tool-call events keyed by their index (Chat interleaves parallel calls, the others do not).
 */
function shapeOf(events: readonly ToolLoopEvent[]): string[] {
  const out: string[] = [];
  for (const event of events) {
    let key: string;
    if (event.type === 'tool_call.delta' || event.type === 'usage') continue;
    if (event.type === 'tool_call.start' || event.type === 'tool_call.done') key = `${event.step}:${event.type}#${event.index}`;
    else if (event.type === 'tool.result') key = `${event.step}:tool.result:${JSON.stringify(event.output)}`;
    else key = `${event.step}:${event.type}`;
    if (out.at(-1) !== key) out.push(key);
  }
  return out.sort((a, b) => Number.parseInt(a, 10) - Number.parseInt(b, 10) || order(a) - order(b) || a.localeCompare(b));
}

/** Within a step: start, reasoning, content, the calls, their results, the step's end, the loop's end. */
function order(key: string): number {
  const type = key.split(':')[1] ?? '';
  return ['step.start', 'reasoning', 'content', 'tool_call.start#0', 'tool_call.start#1', 'tool_call.done#0', 'tool_call.done#1', 'tool.result', 'step.finish', 'finish'].findIndex(
    (name) => type.startsWith(name),
  );
}

describe('one scenario through the four protocols', () => {
  const shapes = new Map<string, string[]>();

  for (const [name, protocol] of Object.entries(protocols)) {
    it(`${name}: create runs the loop to the same result, and the second request body is exact`, async () => {
      const c = await client(name);
      const result = await protocol.create(c);
      expectScenarioResult(result);
      const ids = (result.steps[0]?.toolCalls ?? []).map((call) => call.id);
      const first = result.steps[0]?.completion.id;
      const firstId = typeof first === 'string' ? first : '';
      expect(model?.requests).toHaveLength(2);
      expect(model?.requests[1]?.body).toEqual(protocol.secondBody(ids, firstId));
      for (const request of model?.requests ?? []) {
        for (const field of LOOP_FIELDS) expect(request.body).not.toHaveProperty(field);
      }
    });

    it(`${name}: stream yields the same step-tagged events and the same result`, async () => {
      const c = await client(name);
      const stream = protocol.stream(c);
      const events: ToolLoopEvent[] = [];
      for await (const event of stream) events.push(event);
      const result = await stream.final();
      expectScenarioResult(result);
      expect(events.at(-1)).toMatchObject({ type: 'finish', step: 2, finishReason: 'stop' });
      const content = events.filter((event) => event.type === 'content');
      expect(content.at(-1)).toMatchObject({ step: 2, snapshot: ANSWER });
      shapes.set(name, shapeOf(events));
    });
  }

  it('the four event sequences have one shape', () => {
    expect(shapes.size).toBe(4);
    const [chat, responses, messages, gemini] = ['chat', 'responses', 'messages', 'gemini'].map((name) => shapes.get(name));
    expect(chat).toEqual([
      '1:step.start',
      '1:reasoning',
      '1:tool_call.start#0',
      '1:tool_call.start#1',
      '1:tool_call.done#0',
      '1:tool_call.done#1',
      '1:tool.result:{"city":"Paris","celsius":18}',
      '1:tool.result:{"city":"Zürich","celsius":21}',
      '1:step.finish',
      '2:step.start',
      '2:content',
      '2:step.finish',
      '2:finish',
    ]);
    expect(responses).toEqual(chat);
    expect(messages).toEqual(chat);
    expect(gemini).toEqual(chat);
  });
});

describe('one handle type for every protocol', () => {
  // A protocol chosen at run time gives a union of handles: `.on` compiles on it as `for await` does (TS2349 before).
  it('.on(content) on a ChatStream | ResponsesStream | MessagesStream | GeminiStream picked at run time', async () => {
    model = await startMockModel({ script: Array.from({ length: 4 }, () => ({ content: 'one shape' })) });
    const c = new Ai4ts({ provider: 'openai-compatible', baseURL: model.baseURL, apiKey: 'test-key', maxRetries: 0 });
    const google = new Ai4ts({ provider: 'gemini', baseURL: model.geminiBaseURL, apiKey: 'test-key', maxRetries: 0 });
    const streams = {
      chat: () => c.chat.stream({ model: 'mock-model', messages: [{ role: 'user', content: 'Hi' }] }),
      responses: () => c.responses.stream({ model: 'mock-model', input: 'Hi' }),
      messages: () => c.messages.stream({ model: 'mock-model', max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] }),
      gemini: () => google.gemini.stream({ model: 'mock-model', contents: [{ role: 'user', parts: [{ text: 'Hi' }] }] }),
    };
    for (const name of ['chat', 'responses', 'messages', 'gemini'] as const) {
      const stream: ChatStream | ResponsesStream | MessagesStream | GeminiStream = streams[name]();
      const deltas: string[] = [];
      const chained = stream.on('content', (event) => deltas.push(event.delta)).on('finish', (event) => deltas.push(`|${event.finishReason}`));
      expect(chained).toBe(stream);
      await stream.final();
      expect(deltas.join(''), name).toBe('one shape|stop');
    }
  });
});

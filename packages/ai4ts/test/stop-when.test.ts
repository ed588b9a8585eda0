/**
 * `stopWhen` through the front door, on each protocol, over HTTP against @ai4ts/testing's scripted model: every
 * built-in condition, a function of the state, a list, and `maxSteps` as the shorthand it stays. The script would run
 * three steps (a lookup, a `submit` call, an answer); each condition must stop it after the second, with the
 * second step's calls unexecuted and its name in `stopCondition`.
 */
import { type MockModel, type MockTurn, startMockModel } from '@ai4ts/testing';
import {
  Ai4ts,
  defineTool,
  hasToolCall,
  type StopConditionState,
  type StopWhen,
  stepCountIs,
  textIncludes,
  type ToolLoopEvent,
  usageExceeds,
} from 'ai4ts';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';

const usage = { prompt_tokens: 50, completion_tokens: 30, total_tokens: 80 };
const script: MockTurn[] = [
  { content: 'Looking it up.', toolCalls: [{ name: 'lookup', arguments: { query: 'answer' } }], usage },
  { content: 'DONE: submitting.', toolCalls: [{ name: 'submit', arguments: { answer: '42' } }], usage },
  { content: 'The answer is 42.', usage },
];

let model: MockModel | undefined;
afterEach(async () => {
  await model?.close();
  model = undefined;
});

/** A client of a fresh scripted model (Gemini's at its `/v1beta` base); 1000 per million tokens makes each step cost 0.08. */
async function client(protocol: string): Promise<Ai4ts> {
  model = await startMockModel({ script, seed: 3 });
  return new Ai4ts({
    ...(protocol === 'gemini'
      ? ({ provider: 'gemini', baseURL: model.geminiBaseURL } as const)
      : ({ provider: 'openai-compatible', baseURL: model.baseURL } as const)),
    apiKey: 'test-key',
    maxRetries: 0,
    prices: { 'mock-model': { input: 1000, output: 1000 } },
  });
}

function tools(ran: string[]) {
  return [
    defineTool({
      name: 'lookup',
      parameters: z.object({ query: z.string() }),
      execute: ({ query }) => {
        ran.push(`lookup:${query}`);
        return 'It is 42.';
      },
    }),
    defineTool({
      name: 'submit',
      parameters: z.object({ answer: z.string() }),
      execute: ({ answer }) => {
        ran.push(`submit:${answer}`);
        return 'submitted';
      },
    }),
  ];
}

type Settings = { stopWhen?: StopWhen; maxSteps?: number };
const QUESTION = 'What is the answer?';

const protocols = {
  chat: {
    create: (c: Ai4ts, ran: string[], settings: Settings) =>
      c.chat.create({ model: 'mock-model', messages: [{ role: 'user', content: QUESTION }], tools: tools(ran), ...settings }),
    stream: (c: Ai4ts, ran: string[], settings: Settings) =>
      c.chat.stream({ model: 'mock-model', messages: [{ role: 'user', content: QUESTION }], tools: tools(ran), ...settings }),
  },
  responses: {
    create: (c: Ai4ts, ran: string[], settings: Settings) =>
      c.responses.create({ model: 'mock-model', input: QUESTION, tools: tools(ran), ...settings }),
    stream: (c: Ai4ts, ran: string[], settings: Settings) =>
      c.responses.stream({ model: 'mock-model', input: QUESTION, tools: tools(ran), ...settings }),
  },
  messages: {
    create: (c: Ai4ts, ran: string[], settings: Settings) =>
      c.messages.create({
        model: 'mock-model',
        max_tokens: 256,
        messages: [{ role: 'user', content: QUESTION }],
        tools: tools(ran),
        ...settings,
      }),
    stream: (c: Ai4ts, ran: string[], settings: Settings) =>
      c.messages.stream({
        model: 'mock-model',
        max_tokens: 256,
        messages: [{ role: 'user', content: QUESTION }],
        tools: tools(ran),
        ...settings,
      }),
  },
  gemini: {
    create: (c: Ai4ts, ran: string[], settings: Settings) =>
      c.gemini.create({ model: 'mock-model', contents: [{ role: 'user', parts: [{ text: QUESTION }] }], tools: tools(ran), ...settings }),
    stream: (c: Ai4ts, ran: string[], settings: Settings) =>
      c.gemini.stream({ model: 'mock-model', contents: [{ role: 'user', parts: [{ text: QUESTION }] }], tools: tools(ran), ...settings }),
  },
} as const;

/** A condition of the caller's own, named by its function's name. */
function submittedAfterLookup(state: StopConditionState): boolean {
  return state.steps.some((step) => step.toolCalls.some((call) => call.name === 'lookup')) && state.toolCalls.length > 0 && state.step > 1;
}

/** Each condition and the name the result must report. Each holds first after step 2's model turn. */
const conditions: [string, StopWhen, string][] = [
  ['stepCountIs', stepCountIs(2), 'stepCountIs(2)'],
  ['hasToolCall', hasToolCall('submit'), 'hasToolCall(submit)'],
  ['usageExceeds tokens', usageExceeds({ tokens: 150 }), 'usageExceeds(tokens: 150)'],
  ['usageExceeds cost', usageExceeds({ cost: 0.1 }), 'usageExceeds(cost: 0.1)'],
  ['textIncludes', textIncludes('DONE'), 'textIncludes("DONE")'],
  ['a function', submittedAfterLookup, 'submittedAfterLookup'],
  ['a list (any stops)', [hasToolCall('never_called'), textIncludes('DONE')], 'textIncludes("DONE")'],
  ['an async function', async (state) => state.step === 2, 'anonymous'],
];

describe.each(Object.entries(protocols))('stopWhen on %s', (protocolName, protocol) => {
  it('without a condition the script runs its three steps (the control)', async () => {
    const ran: string[] = [];
    const result = await protocol.create(await client(protocolName), ran, {});
    expect(result.status).toBe('done');
    expect(result.finishReason).toBe('stop');
    expect(result.stopCondition).toBeUndefined();
    expect(result.steps).toHaveLength(3);
    expect(ran).toEqual(['lookup:answer', 'submit:42']);
  });

  it.each(conditions)('%s stops after step 2, its calls unexecuted, and is named', async (_label, stopWhen, name) => {
    const ran: string[] = [];
    const result = await protocol.create(await client(protocolName), ran, { stopWhen });
    expect(result.status).toBe('done');
    expect(result.finishReason).toBe('stop_condition');
    expect(result.stopCondition).toBe(name);
    expect(result.steps).toHaveLength(2);
    expect(result.text).toBe('DONE: submitting.');
    expect(result.steps[1]?.toolCalls.map((call) => [call.name, JSON.parse(call.arguments)])).toEqual([
      ['submit', { answer: '42' }],
    ]);
    expect(result.steps[1]?.toolResults).toEqual([]);
    expect(ran).toEqual(['lookup:answer']);
    expect(model?.requests).toHaveLength(2);
    expect(result.usage?.total_tokens).toBe(160);
  });

  it('maxSteps stays the shorthand, with its own finish reason', async () => {
    const ran: string[] = [];
    const result = await protocol.create(await client(protocolName), ran, { maxSteps: 2 });
    expect(result.finishReason).toBe('max_steps');
    expect(result.stopCondition).toBeUndefined();
    expect(result.steps).toHaveLength(2);
    expect(ran).toEqual(['lookup:answer']);
  });

  it('a condition does not override a final answer', async () => {
    const ran: string[] = [];
    const result = await protocol.create(await client(protocolName), ran, { stopWhen: textIncludes('42.') });
    expect(result.finishReason).toBe('stop');
    expect(result.stopCondition).toBeUndefined();
    expect(result.steps).toHaveLength(3);
  });

  it('stream(): the finish event and the result name the condition', async () => {
    const ran: string[] = [];
    const stream = protocol.stream(await client(protocolName), ran, { stopWhen: [stepCountIs(5), hasToolCall('submit')] });
    const events: ToolLoopEvent[] = [];
    for await (const event of stream) events.push(event);
    const result = await stream.final();
    expect(events.at(-1)).toEqual({
      type: 'finish',
      step: 2,
      finishReason: 'stop_condition',
      stopCondition: 'hasToolCall(submit)',
      usage: expect.objectContaining({ total_tokens: 160 }),
    });
    expect(result.stopCondition).toBe('hasToolCall(submit)');
    expect(events.filter((event) => event.type === 'tool.result').map((event) => event.step)).toEqual([1]);
    expect(ran).toEqual(['lookup:answer']);
  });
});

describe('stop condition values', () => {
  it('refuse impossible limits at once', () => {
    expect(() => stepCountIs(0)).toThrow(RangeError);
    expect(() => usageExceeds({})).toThrow(TypeError);
  });
});

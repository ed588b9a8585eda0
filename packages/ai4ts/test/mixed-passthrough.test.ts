/**
 * Mixed passthrough on each protocol, over HTTP against @ai4ts/testing's scripted model: a step calls one SDK tool
 * and one tool the host runs (`passThrough: true`). The SDK's runs, the loop suspends with the host's call, and
 * `resume` with its result sends both results back in call order. Results that miss or add a call are refused.
 */
import { type MockModel, type MockTurn, startMockModel } from '@ai4ts/testing';
import { Ai4ts, defineTool, LoopStateError, stepCountIs, type ToolLoopEvent } from 'ai4ts';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { geminiToolResults } from './fixtures/gemini-tool-results.js';

const script: MockTurn[] = [
  {
    toolCalls: [
      { name: 'find_button', arguments: { label: 'Pay' } },
      { name: 'click', arguments: { selector: '#pay' } },
    ],
  },
  { content: 'Paid.' },
];
const QUESTION = 'Press the pay button.';
/** Gemini's calls carry ids, as the API may give them: each must come back on its `functionResponse`. */
const geminiScript: MockTurn[] = [
  {
    toolCalls: [
      { id: 'fc-find-1', name: 'find_button', arguments: { label: 'Pay' } },
      { id: 'fc-click-2', name: 'click', arguments: { selector: '#pay' } },
    ],
  },
  { content: 'Paid.' },
];
/** A Gemini 3 model: the scripted server refuses a function-call turn whose thought signature did not survive. */
const GEMINI_MODEL = 'gemini-3-mock';

let model: MockModel | undefined;
afterEach(async () => {
  await model?.close();
  model = undefined;
});

/** A client of a fresh scripted model; Gemini's is the `gemini` provider at its `/v1beta` base. */
async function client(protocol = 'chat'): Promise<Ai4ts> {
  model = await startMockModel({ script: protocol === 'gemini' ? geminiScript : script, seed: 9 });
  if (protocol === 'gemini') return new Ai4ts({ provider: 'gemini', baseURL: model.geminiBaseURL, apiKey: 'test-key', maxRetries: 0 });
  return new Ai4ts({ provider: 'openai-compatible', baseURL: model.baseURL, apiKey: 'test-key', maxRetries: 0 });
}

function tools(ran: string[]) {
  return [
    defineTool({
      name: 'find_button',
      parameters: z.object({ label: z.string() }),
      execute: ({ label }) => {
        ran.push(`find_button:${label}`);
        return { selector: '#pay' };
      },
    }),
    // The browser clicks: the host runs this tool.
    defineTool({ name: 'click', parameters: z.object({ selector: z.string() }), passThrough: true }),
  ];
}

/** The tool results a request body sends back, as [call id, content], in order. */
const toolResults = {
  chat: (body: unknown): [string, unknown][] =>
    z
      .object({ messages: z.array(z.looseObject({ role: z.string(), tool_call_id: z.string().optional(), content: z.unknown().optional() })) })
      .parse(body)
      .messages.filter((m) => m.role === 'tool')
      .map((m) => [m.tool_call_id ?? '', m.content]),
  responses: (body: unknown): [string, unknown][] =>
    z
      .object({ input: z.array(z.looseObject({ type: z.string().optional(), call_id: z.string().optional(), output: z.unknown().optional() })) })
      .parse(body)
      .input.filter((i) => i.type === 'function_call_output')
      .map((i) => [i.call_id ?? '', i.output]),
  messages: (body: unknown): [string, unknown][] =>
    z
      .object({ messages: z.array(z.looseObject({ content: z.unknown().optional() })) })
      .parse(body)
      .messages.flatMap((m) => z.array(z.looseObject({ type: z.string() })).catch([]).parse(m.content))
      .filter((b) => b.type === 'tool_result')
      .map((b) => [String(b.tool_use_id), b.content]),
  gemini: geminiToolResults,
};

const protocols = {
  chat: async (c: Ai4ts, ran: string[]) => {
    const result = await c.chat.create({ model: 'mock-model', messages: [{ role: 'user', content: QUESTION }], tools: tools(ran) });
    return { result, resume: (toolResults: Record<string, unknown>) => c.chat.resume(result.state ?? fail(), { toolResults, tools: tools(ran) }) };
  },
  responses: async (c: Ai4ts, ran: string[]) => {
    const result = await c.responses.create({ model: 'mock-model', input: QUESTION, tools: tools(ran) });
    return {
      result,
      resume: (toolResults: Record<string, unknown>) => c.responses.resume(result.state ?? fail(), { toolResults, tools: tools(ran) }),
    };
  },
  messages: async (c: Ai4ts, ran: string[]) => {
    const result = await c.messages.create({
      model: 'mock-model',
      max_tokens: 256,
      messages: [{ role: 'user', content: QUESTION }],
      tools: tools(ran),
    });
    return {
      result,
      resume: (toolResults: Record<string, unknown>) => c.messages.resume(result.state ?? fail(), { toolResults, tools: tools(ran) }),
    };
  },
  gemini: async (c: Ai4ts, ran: string[]) => {
    const result = await c.gemini.create({ model: GEMINI_MODEL, contents: [{ role: 'user', parts: [{ text: QUESTION }] }], tools: tools(ran) });
    // Through JSON, as a host stores the state.
    const state = JSON.parse(JSON.stringify(result.state ?? fail()));
    return { result, resume: (toolResults: Record<string, unknown>) => c.gemini.resume(state, { toolResults, tools: tools(ran) }) };
  },
};

function fail(): never {
  throw new Error('expected a suspended loop');
}

describe.each(['chat', 'responses', 'messages', 'gemini'] as const)('mixed passthrough on %s', (name) => {
  it("runs the SDK's tool, hands the host's back, and resumes with its result", async () => {
    const ran: string[] = [];
    const { result, resume } = await protocols[name](await client(name), ran);
    expect(result.status).toBe('awaiting_tool_results');
    expect(result.finishReason).toBe('tool_calls');
    expect(ran).toEqual(['find_button:Pay']);
    const ids = result.steps[0]?.toolCalls.map((call) => call.id) ?? [];
    expect(result.pending).toEqual([{ id: ids[1], name: 'click', args: { selector: '#pay' }, awaiting: 'tool_result' }]);
    expect(result.steps[0]?.toolResults.map((r) => r.toolName)).toEqual(['find_button']);

    const resumed = await resume({ [ids[1] ?? '']: { clicked: true } });

    expect(resumed).toMatchObject({ status: 'done', text: 'Paid.', finishReason: 'stop' });
    expect(resumed.steps.map((step) => step.step)).toEqual([2]);
    expect(model?.requests).toHaveLength(2);
    expect(toolResults[name](model?.requests[1]?.body)).toEqual([
      [ids[0], '{"selector":"#pay"}'],
      [ids[1], '{"clicked":true}'],
    ]);
  });

  it('refuses results that miss the pending call or answer another', async () => {
    const { result, resume } = await protocols[name](await client(name), []);
    const id = result.pending?.[0]?.id ?? '';
    for (const given of [{}, { [id]: 'ok', call_unknown: 'ok' }]) {
      const error = await resume(given).catch((thrown: unknown) => thrown);
      expect(error).toBeInstanceOf(LoopStateError);
      expect(error).toMatchObject({ problem: 'decisions' });
    }
    expect(model?.requests).toHaveLength(1);
  });
});

describe('mixed passthrough through stream()', () => {
  it('ends the stream suspended, and streamResume reports the host result first', async () => {
    const c = await client();
    const ran: string[] = [];
    const stream = c.chat.stream({ model: 'mock-model', messages: [{ role: 'user', content: QUESTION }], tools: tools(ran) });
    const events: ToolLoopEvent[] = [];
    for await (const event of stream) events.push(event);
    const result = await stream.final();
    expect(events.some((event) => event.type === 'approval.requested')).toBe(false);
    expect(events.at(-1)).toMatchObject({ type: 'finish', step: 1, finishReason: 'tool_calls', status: 'awaiting_tool_results' });
    const id = result.pending?.[0]?.id ?? '';

    const resumed = c.chat.streamResume(result.state ?? fail(), { toolResults: { [id]: 'clicked' }, tools: tools(ran) });
    const after: ToolLoopEvent[] = [];
    for await (const event of resumed) after.push(event);
    expect(after[0]).toMatchObject({ type: 'tool.result', step: 1, id, name: 'click', output: 'clicked', isError: false });
    expect(after.at(-1)).toMatchObject({ type: 'finish', step: 2, finishReason: 'stop' });
    expect((await resumed.final()).text).toBe('Paid.');
    expect(ran).toEqual(['find_button:Pay']);
  });

  it('a passThrough tool may not have execute', () => {
    expect(() =>
      defineTool({ name: 'click', parameters: z.object({}), passThrough: true, execute: () => 'clicked' }),
    ).toThrow(TypeError);
  });
});

describe('a step that waits on a person and on the host', () => {
  it('is awaiting_approval, takes both answers, and a resumed loop goes on counting its steps', async () => {
    model = await startMockModel({
      script: [
        {
          toolCalls: [
            { name: 'click', arguments: { selector: '#pay' } },
            { name: 'confirm_payment', arguments: { amount: 20 } },
          ],
        },
        { toolCalls: [{ name: 'find_button', arguments: { label: 'Receipt' } }] },
        { content: 'Receipt found.' },
      ],
    });
    const c = new Ai4ts({ provider: 'openai-compatible', baseURL: model.baseURL, apiKey: 'test-key', maxRetries: 0 });
    const ran: string[] = [];
    const confirm = defineTool({
      name: 'confirm_payment',
      parameters: z.object({ amount: z.number() }),
      needsApproval: true,
      execute: ({ amount }) => {
        ran.push(`confirm:${amount}`);
        return 'confirmed';
      },
    });
    const all = [...tools(ran), confirm];
    const result = await c.chat.create({ model: 'mock-model', messages: [{ role: 'user', content: QUESTION }], tools: all });
    expect(result.status).toBe('awaiting_approval');
    const [click, payment] = result.pending ?? [];
    expect([click?.awaiting, payment?.awaiting]).toEqual(['tool_result', 'approval']);

    const resumed = await c.chat.resume(result.state ?? fail(), {
      approvals: { [payment?.id ?? '']: true },
      toolResults: { [click?.id ?? '']: 'clicked' },
      tools: all,
      stopWhen: stepCountIs(2),
    });

    // Step 1 was before the suspension: step 2 is the second, so stepCountIs(2) stops after it.
    expect(resumed).toMatchObject({ status: 'done', finishReason: 'stop_condition', stopCondition: 'stepCountIs(2)' });
    expect(resumed.steps.map((step) => step.step)).toEqual([2]);
    expect(ran).toEqual(['confirm:20']);
    expect(toolResults.chat(model.requests[1]?.body).map(([, content]) => content)).toEqual(['clicked', 'confirmed']);
  });
});

/** The Messages tool loop against @ai4ts/testing's scripted model on 127.0.0.1. */
import { AbortError, Ai4tsError, ApiError, defineTool, Transport } from '@ai4ts/core';
import { toAnthropicTool } from '../src/index.js';
import { type MockModel, type MockScript, type MockTurn, startMockModel } from '@ai4ts/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { sseText } from '@ai4ts/test-kit';
import * as z from 'zod';
import {
  type MessagesToolLoopEvent,
  type MessagesLoopRequest,
  runMessagesToolLoop,
  streamMessagesToolLoop,
} from '../src/index.js';
import { blockStart, blockStop, delta, messageDelta, messageStart, messageStop } from './fixtures.js';

let model: MockModel | undefined;
afterEach(async () => {
  await model?.close();
  model = undefined;
});

/** Starts the scripted model; `fetch` replaces the transport's, for an answer the mock cannot write. */
async function start(script: MockScript, fetch?: typeof globalThis.fetch): Promise<Transport> {
  model = await startMockModel({ script });
  return new Transport({
    provider: 'anthropic',
    apiKey: 'sk-ant-local',
    baseURL: model.baseURL,
    maxRetries: 0,
    ...(fetch && { fetch }),
  });
}

/** The JSON bodies the model received, in order. */
function bodies(): unknown[] {
  return (model?.requests ?? []).map((request) => request.body);
}

/** A get_weather tool that records the cities it ran for. */
function weatherTool() {
  const ran: string[] = [];
  const tool = defineTool({
    name: 'get_weather',
    description: 'Current weather of a city',
    parameters: z.object({ city: z.string() }),
    execute: ({ city }) => {
      ran.push(city);
      return { city, celsius: city === 'Paris' ? 18 : 24 };
    },
  });
  return { tool, ran };
}

const request = (tools: MessagesLoopRequest['tools']): MessagesLoopRequest => ({
  model: 'claude-sonnet-4-5',
  max_tokens: 1024,
  messages: [{ role: 'user', content: 'Weather in Paris and Rome?' }],
  tools,
});

/** Step 1: thinking with its signature, text and two parallel tool uses (arguments fragmented by the mock). */
const twoCalls: MockTurn = {
  reasoning: 'Two cities, two calls.',
  signature: 'EqQBsig',
  content: 'Checking both.',
  toolCalls: [
    { id: 'toolu_A', name: 'get_weather', arguments: '{"city": "Paris"}' },
    { id: 'toolu_B', name: 'get_weather', arguments: '{"city": "Rome"}' },
  ],
  usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 },
};

const answer = (content: string): MockTurn => ({
  content,
  usage: { prompt_tokens: 150, completion_tokens: 7, total_tokens: 157 },
});

describe('runMessagesToolLoop', () => {
  it('runs two parallel calls and sends the exact second request', async () => {
    const transport = await start([twoCalls, answer('Paris 18, Rome 24.')]);
    const { tool, ran } = weatherTool();
    const original = request([tool]);
    const result = await runMessagesToolLoop(transport, original);

    expect(result.text).toBe('Paris 18, Rome 24.');
    expect(result.finishReason).toBe('stop');
    expect(ran.sort()).toEqual(['Paris', 'Rome']);
    expect(bodies()).toHaveLength(2);
    expect(original.messages).toHaveLength(1);
    const assistant = {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'Two cities, two calls.', signature: 'EqQBsig' },
        { type: 'text', text: 'Checking both.' },
        { type: 'tool_use', id: 'toolu_A', name: 'get_weather', input: { city: 'Paris' } },
        { type: 'tool_use', id: 'toolu_B', name: 'get_weather', input: { city: 'Rome' } },
      ],
    };
    const results = {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_A', content: '{"city":"Paris","celsius":18}' },
        { type: 'tool_result', tool_use_id: 'toolu_B', content: '{"city":"Rome","celsius":24}' },
      ],
    };
    expect(bodies()[1]).toEqual({
      model: 'claude-sonnet-4-5',
      max_tokens: 1024,
      messages: [{ role: 'user', content: 'Weather in Paris and Rome?' }, assistant, results],
      tools: [toAnthropicTool(tool)],
      stream: true,
    });
    expect(result.messages).toEqual([
      original.messages[0],
      assistant,
      results,
      { role: 'assistant', content: [{ type: 'text', text: 'Paris 18, Rome 24.' }] },
    ]);
    expect(result.usage).toMatchObject({ prompt_tokens: 250, completion_tokens: 27 });
  });

  it('answers invalid JSON and schema-invalid input with error results and never runs them', async () => {
    const transport = await start([
      {
        toolCalls: [
          { id: 'toolu_bad_json', name: 'get_weather', arguments: '{"city": "Par' },
          { id: 'toolu_bad_type', name: 'get_weather', arguments: '{"city": 5}' },
        ],
      },
      answer('Sorry.'),
    ]);
    const { tool, ran } = weatherTool();
    const result = await runMessagesToolLoop(transport, request([tool]));

    expect(ran).toEqual([]);
    expect(result.steps[0]?.toolResults.map((r) => r.isError)).toEqual([true, true]);
    const second = bodies()[1] as { messages: Array<{ role: string; content: Array<Record<string, unknown>> }> };
    const sentBack = second.messages[1]?.content ?? [];
    expect(sentBack[0]).toEqual({ type: 'tool_use', id: 'toolu_bad_json', name: 'get_weather', input: {} });
    const toolResults = second.messages[2];
    expect(toolResults?.role).toBe('user');
    expect(toolResults?.content.map((block) => [block.tool_use_id, block.is_error])).toEqual([
      ['toolu_bad_json', true],
      ['toolu_bad_type', true],
    ]);
    expect(JSON.parse(String(toolResults?.content[0]?.content)).error).toContain('Invalid JSON in the arguments of tool "get_weather"');
    expect(JSON.parse(String(toolResults?.content[1]?.content)).error).toContain('Invalid arguments for tool "get_weather"');
  });

  it('an HTTP error at a later step rejects with its typed ApiError, after the first step ran its tools', async () => {
    const transport = await start([twoCalls, { httpError: { status: 529 } }]);
    const { tool, ran } = weatherTool();
    const error = await runMessagesToolLoop(transport, request([tool])).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 529, type: 'overloaded_error' });
    expect((error as Error).message).toContain('Scripted HTTP 529');
    expect(ran.sort()).toEqual(['Paris', 'Rome']);
    expect(bodies()).toHaveLength(2);
  });

  it('an in-stream error rejects with the ApiError of its type', async () => {
    const transport = await start([{ content: 'It is ', streamError: { message: 'Overloaded', type: 'overloaded_error' } }]);
    const { tool, ran } = weatherTool();
    const error = await runMessagesToolLoop(transport, request([tool])).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ type: 'overloaded_error', code: 'overloaded_error', message: expect.stringContaining('Overloaded') });
    expect(ran).toEqual([]);
  });

  it('stops at maxSteps with the last calls unexecuted', async () => {
    const transport = await start([twoCalls, twoCalls, twoCalls]);
    const { tool, ran } = weatherTool();
    const result = await runMessagesToolLoop(transport, { ...request([tool]), maxSteps: 2 });

    expect(bodies()).toHaveLength(2);
    expect(result.finishReason).toBe('max_steps');
    expect(ran).toHaveLength(2);
    expect(result.steps[1]?.toolCalls).toHaveLength(2);
    expect(result.steps[1]?.toolResults).toEqual([]);
  });

  it('passthrough returns the calls untouched without running them', async () => {
    const transport = await start([twoCalls]);
    const { tool, ran } = weatherTool();
    const result = await runMessagesToolLoop(transport, { ...request([tool]), passThroughToolCalls: true });

    expect(bodies()).toHaveLength(1);
    expect(ran).toEqual([]);
    expect(result.finishReason).toBe('tool_calls');
    expect(result.steps[0]?.toolCalls).toEqual([
      { id: 'toolu_A', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { id: 'toolu_B', name: 'get_weather', arguments: '{"city":"Rome"}' },
    ]);
  });
});

describe('the loop request on the wire', () => {
  it('sends no loop field and no empty tools, in the first and the follow-up request', async () => {
    const transport = await start([twoCalls, answer('Done.')]);
    const { tool } = weatherTool();
    const steps: number[] = [];
    const looped: MessagesLoopRequest = {
      ...request([tool]),
      maxSteps: 3,
      concurrency: 1,
      passThroughToolCalls: false,
      onStepFinish: (step) => {
        steps.push(step.step);
      },
      onToolCall: () => 'allow',
      prepareStep: () => undefined,
    };
    await runMessagesToolLoop(transport, looped);

    expect(steps).toEqual([1, 2]);
    expect(bodies()[0]).toEqual({
      model: 'claude-sonnet-4-5',
      max_tokens: 1024,
      messages: [{ role: 'user', content: 'Weather in Paris and Rome?' }],
      tools: [toAnthropicTool(tool)],
      stream: true,
    });
    for (const body of bodies()) {
      expect(Object.keys(body as object).sort()).toEqual(['max_tokens', 'messages', 'model', 'stream', 'tools']);
    }
  });

  it('a loop field alone runs the loop; an empty tools array is not sent', async () => {
    const transport = await start([answer('Hi.')]);
    const result = await runMessagesToolLoop(transport, { ...request([]), maxSteps: 1 });
    expect(result.text).toBe('Hi.');
    expect(bodies()[0]).toEqual({
      model: 'claude-sonnet-4-5',
      max_tokens: 1024,
      messages: [{ role: 'user', content: 'Weather in Paris and Rome?' }],
      stream: true,
    });
  });

  it('the per-request options apply to every step', async () => {
    const transport = await start([twoCalls, answer('Done.')]);
    const { tool } = weatherTool();
    await runMessagesToolLoop(transport, request([tool]), {
      headers: { 'anthropic-beta': 'interleaved-thinking-2025-05-14' },
      extraBody: { top_k: 3 },
      idleTimeout: 5000,
    });
    expect(model?.requests.map((r) => r.headers['anthropic-beta'])).toEqual([
      'interleaved-thinking-2025-05-14',
      'interleaved-thinking-2025-05-14',
    ]);
    expect(bodies().map((body) => (body as { top_k?: number }).top_k)).toEqual([3, 3]);
  });

  it("the options' signal aborts the loop with an AbortError", async () => {
    const transport = await start([twoCalls, answer('Done.')]);
    const controller = new AbortController();
    const tool = defineTool({
      name: 'get_weather',
      parameters: z.object({ city: z.string() }),
      execute: () => {
        controller.abort();
        return 'sunny';
      },
    });
    const error = await runMessagesToolLoop(transport, request([tool]), { signal: controller.signal }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(AbortError);
  });

  it('an invalid request rejects with an Ai4tsError before anything is sent', async () => {
    const transport = await start([answer('never')]);
    const { tool } = weatherTool();
    const error = await runMessagesToolLoop(transport, { ...request([tool]), max_tokens: 0 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Ai4tsError);
    expect((error as Error).message).toMatch(/max_tokens/);
    expect(bodies()).toEqual([]);
  });
});

describe('the assistant turn goes back as received', () => {
  it('keeps thinking with its signature, unknown blocks and every unknown field of a block', async () => {
    const withExtras = [
      messageStart({ input_tokens: 100, output_tokens: 1 }),
      blockStart(0, { type: 'thinking', thinking: '', signature: '', vendor_note: { depth: 2 } }),
      delta(0, { type: 'thinking_delta', thinking: 'Paris first.' }),
      delta(0, { type: 'signature_delta', signature: 'EuYBCkQYAiJA' }),
      blockStop(0),
      blockStart(1, { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va' }),
      blockStop(1),
      blockStart(2, { type: 'mcp_tool_use', id: 'mcptoolu_1', name: 'lookup', server_name: 'atlas', input: { q: 'Paris' } }),
      blockStop(2),
      blockStart(3, { type: 'text', text: '', citations: null }),
      delta(3, { type: 'text_delta', text: 'Checking.' }),
      blockStop(3),
      blockStart(4, { type: 'tool_use', id: 'toolu_A', name: 'get_weather', input: {}, caller: { type: 'direct' } }),
      delta(4, { type: 'input_json_delta', partial_json: '{"city": "Paris"}' }),
      blockStop(4),
      messageDelta('tool_use', { output_tokens: 20 }),
      messageStop,
    ];
    // The mock writes no such blocks: the first answer's body is swapped for these bytes (the request still reaches it,
    // and its script gives the same seals, which the mock, as the API, takes back only when it gave them).
    let calls = 0;
    const swapFirst: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      if (++calls > 1) return response;
      await response.body?.cancel();
      return new Response(sseText(withExtras, { named: true }), { headers: { 'content-type': 'text/event-stream' } });
    };
    const issued = { reasoning: 'Paris first.', signature: 'EuYBCkQYAiJA', redactedThinking: 'EmwKAhgBEgy3va', content: 'replaced' };
    const transport = await start([issued, answer('Paris 18.')], swapFirst);
    const { tool } = weatherTool();
    await runMessagesToolLoop(transport, request([tool]));

    const second = bodies()[1] as { messages: unknown[] };
    expect(second.messages[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'Paris first.', signature: 'EuYBCkQYAiJA', vendor_note: { depth: 2 } },
        { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va' },
        { type: 'mcp_tool_use', id: 'mcptoolu_1', name: 'lookup', server_name: 'atlas', input: { q: 'Paris' } },
        { type: 'text', text: 'Checking.', citations: null },
        { type: 'tool_use', id: 'toolu_A', name: 'get_weather', input: { city: 'Paris' }, caller: { type: 'direct' } },
      ],
    });
    expect(second.messages[2]).toEqual({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 'toolu_A', content: '{"city":"Paris","celsius":18}' }],
    });
  });
});

describe('streamMessagesToolLoop', () => {
  it('yields step-tagged events across steps and sums usage', async () => {
    const transport = await start([twoCalls, answer('Paris 18, Rome 24.')]);
    const { tool } = weatherTool();
    const stream = streamMessagesToolLoop(transport, request([tool]));
    const events: MessagesToolLoopEvent[] = [];
    for await (const event of stream) events.push(event);
    const result = await stream.final();

    const types = events.map((event) => `${event.step}:${event.type}`);
    expect(types[0]).toBe('1:step.start');
    expect(types).toContain('1:reasoning');
    expect(types).toContain('1:tool_call.done');
    expect(types.filter((t) => t === '1:tool.result')).toHaveLength(2);
    expect(types.indexOf('1:step.finish')).toBeLessThan(types.indexOf('2:step.start'));
    expect(types.at(-1)).toBe('2:finish');
    const text = events
      .filter((event) => event.type === 'content' && event.step === 2)
      .map((event) => (event as { delta: string }).delta)
      .join('');
    expect(text).toBe('Paris 18, Rome 24.');
    const finish = events.at(-1);
    expect(finish).toMatchObject({ type: 'finish', finishReason: 'stop', usage: { prompt_tokens: 250, completion_tokens: 27 } });
    expect(result.usage).toEqual(finish?.type === 'finish' ? finish.usage : undefined);
  });
});

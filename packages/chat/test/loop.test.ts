import { type ChatLoopRequest, type ChatToolLoopEvent, runChatToolLoop, streamChatToolLoop } from '@ai4ts/chat';
import { AbortError, Ai4tsError, defineTool, type ToolLoopPartial, Transport, type ValidToolCall } from '@ai4ts/core';
import { type MockModel, type MockScript, startMockModel } from '@ai4ts/testing';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';

let model: MockModel | undefined;
afterEach(async () => {
  await model?.close();
  model = undefined;
});

async function start(script: MockScript): Promise<Transport> {
  model = await startMockModel({ script });
  return new Transport({ baseURL: model.baseURL, apiKey: 'test', maxRetries: 0 });
}

function bodies(): Record<string, unknown>[] {
  return (model?.requests ?? []).filter((r) => r.path.endsWith('/chat/completions')).map((r) => r.body as Record<string, unknown>);
}

const question = { role: 'user', content: 'Weather in Paris and Rome?' } as const;

function weatherTool(ran: string[]) {
  return defineTool({
    name: 'get_weather',
    description: 'Current weather of a city',
    parameters: z.object({ city: z.string() }),
    execute: async ({ city }) => {
      ran.push(city);
      return { city, temperature: city.length };
    },
  });
}

describe('runChatToolLoop', () => {
  it('runs parallel calls and sends the assistant turn and tool results back exactly', async () => {
    const transport = await start([
      {
        reasoning: 'Two cities, two lookups.',
        toolCalls: [
          { id: 'call_a', name: 'get_weather', arguments: '{"city": "Paris"}' },
          { id: 'call_b', name: 'get_weather', arguments: '{"city":"Rome"}' },
        ],
      },
      { content: 'Paris 5, Rome 4.' },
    ]);
    const ran: string[] = [];
    const tool = weatherTool(ran);
    const request: ChatLoopRequest = { model: 'mock-model', messages: [question], tools: [tool], maxSteps: 5 };
    const before = structuredClone({ ...request, tools: undefined });

    const result = await runChatToolLoop(transport, request);

    expect(ran.sort()).toEqual(['Paris', 'Rome']);
    expect(result.text).toBe('Paris 5, Rome 4.');
    expect(result.finishReason).toBe('stop');
    expect(result.steps.map((s) => s.step)).toEqual([1, 2]);
    const assistant = {
      role: 'assistant',
      content: null,
      reasoning_content: 'Two cities, two lookups.',
      tool_calls: [
        { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Paris"}' } },
        { id: 'call_b', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } },
      ],
    };
    const tools = [{ role: 'tool', tool_call_id: 'call_a', content: '{"city":"Paris","temperature":5}' }, { role: 'tool', tool_call_id: 'call_b', content: '{"city":"Rome","temperature":4}' }];
    const [first, second] = bodies();
    expect(first?.maxSteps).toBeUndefined();
    expect(second).toEqual({
      model: 'mock-model',
      messages: [question, assistant, ...tools],
      tools: [{ type: 'function', function: { name: 'get_weather', description: 'Current weather of a city', parameters: tool.jsonSchema } }],
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(result.messages).toEqual([question, assistant, ...tools, { role: 'assistant', content: 'Paris 5, Rome 4.' }]);
    const u1 = result.steps[0]?.usage;
    const u2 = result.steps[1]?.usage;
    expect(result.usage?.total_tokens).toBe((u1?.total_tokens ?? 0) + (u2?.total_tokens ?? 0));
    expect({ ...request, tools: undefined }).toEqual(before);
  });

  it('sends invalid JSON arguments back as an error tool message without running the tool', async () => {
    const transport = await start([
      { toolCalls: [{ id: 'call_bad', name: 'get_weather', arguments: '{"city": "Par' }] },
      { content: 'Sorry.' },
    ]);
    const ran: string[] = [];
    const result = await runChatToolLoop(transport, { model: 'mock-model', messages: [question], tools: [weatherTool(ran)] });

    expect(ran).toEqual([]);
    expect(result.steps[0]?.toolResults[0]?.isError).toBe(true);
    const sent = bodies()[1]?.messages as { role: string; tool_call_id?: string; content: string }[];
    const toolMessage = sent.at(-1);
    expect(toolMessage?.role).toBe('tool');
    expect(toolMessage?.tool_call_id).toBe('call_bad');
    expect(JSON.parse(toolMessage?.content ?? '')).toEqual({ error: expect.stringMatching(/JSON/i) });
  });

  it('answers schema-invalid, unknown, throwing, timed-out and denied calls with error tool messages', async () => {
    const transport = await start([
      {
        toolCalls: [
          { id: 'call_schema', name: 'get_weather', arguments: '{"city": 42}' },
          { id: 'call_unknown', name: 'get_stock', arguments: '{}' },
          { id: 'call_throw', name: 'explode', arguments: '{}' },
          { id: 'call_slow', name: 'slow', arguments: '{}' },
          { id: 'call_denied', name: 'get_weather', arguments: '{"city":"Oslo"}' },
          { id: 'call_ok', name: 'get_weather', arguments: '{"city":"Rome"}' },
        ],
      },
      { content: 'Done.' },
    ]);
    const ran: string[] = [];
    let slowSignal: AbortSignal | undefined;
    const explode = defineTool({
      name: 'explode',
      parameters: z.object({}),
      execute: () => {
        throw new Error('boom in the tool');
      },
    });
    const slow = defineTool({
      name: 'slow',
      parameters: z.object({}),
      timeout: 20,
      execute: (_args, { signal }) => {
        slowSignal = signal;
        return new Promise((resolve) => signal.addEventListener('abort', () => resolve('too late')));
      },
    });

    const result = await runChatToolLoop(transport, {
      model: 'mock-model',
      messages: [question],
      tools: [weatherTool(ran), explode, slow],
      onToolCall: (call: ValidToolCall) => (call.id === 'call_denied' ? { deny: 'not allowed here' } : 'allow'),
    });

    expect(ran).toEqual(['Rome']);
    expect(slowSignal?.aborted).toBe(true);
    expect(result.text).toBe('Done.');
    const sent = bodies()[1]?.messages as { role: string; tool_call_id?: string; content: string }[];
    const toolMessages = sent.filter((m) => m.role === 'tool');
    expect(toolMessages.map((m) => m.tool_call_id)).toEqual([
      'call_schema',
      'call_unknown',
      'call_throw',
      'call_slow',
      'call_denied',
      'call_ok',
    ]);
    const errors = toolMessages.slice(0, 5).map((m) => (JSON.parse(m.content) as { error: string }).error);
    expect(errors[0]).toMatch(/city/);
    expect(errors[1]).toMatch(/get_stock/);
    expect(errors[2]).toMatch(/boom in the tool/);
    expect(errors[3]).toMatch(/time/i);
    expect(errors[4]).toMatch(/not allowed here/);
    expect(JSON.parse(toolMessages[5]?.content ?? '')).toEqual({ city: 'Rome', temperature: 4 });
    expect(result.steps[0]?.toolResults.map((r) => r.isError)).toEqual([true, true, true, true, true, false]);
  });

  it('stops after maxSteps requests and returns the last calls unexecuted', async () => {
    const call = { name: 'get_weather', arguments: { city: 'Oslo' } };
    const transport = await start(() => ({ toolCalls: [call] }));
    const ran: string[] = [];
    const result = await runChatToolLoop(transport, {
      model: 'mock-model',
      messages: [question],
      tools: [weatherTool(ran)],
      maxSteps: 3,
    });

    expect(bodies()).toHaveLength(3);
    expect(ran).toEqual(['Oslo', 'Oslo']);
    expect(result.finishReason).toBe('max_steps');
    expect(result.steps[2]?.toolCalls.map((c) => c.name)).toEqual(['get_weather']);
    expect(result.steps[2]?.toolResults).toEqual([]);
  });

  it('passes tool calls through untouched and the host continues with the messages', async () => {
    const transport = await start([
      { toolCalls: [{ id: 'call_p', name: 'get_weather', arguments: '{ "city" : "Lima" }' }] },
      { content: 'Lima is warm.' },
    ]);
    const ran: string[] = [];
    const tools = [weatherTool(ran)];
    const first = await runChatToolLoop(transport, {
      model: 'mock-model',
      messages: [question],
      tools,
      passThroughToolCalls: true,
    });

    expect(ran).toEqual([]);
    expect(first.finishReason).toBe('tool_calls');
    expect(first.steps[0]?.toolCalls).toEqual([{ id: 'call_p', name: 'get_weather', arguments: '{ "city" : "Lima" }' }]);
    expect(bodies()).toHaveLength(1);

    const next = await runChatToolLoop(transport, {
      model: 'mock-model',
      messages: [...first.messages, { role: 'tool', tool_call_id: 'call_p', content: '31 °C' }],
      tools,
    });
    expect(next.text).toBe('Lima is warm.');
    const sent = bodies()[1]?.messages as unknown[];
    expect(sent.at(-2)).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'call_p', type: 'function', function: { name: 'get_weather', arguments: '{ "city" : "Lima" }' } }],
    });
    expect(sent.at(-1)).toEqual({ role: 'tool', tool_call_id: 'call_p', content: '31 °C' });
  });
});

describe('streamChatToolLoop, abort and failures', () => {
  it('yields step-tagged events across steps in order', async () => {
    const transport = await start([
      { reasoning: 'Look it up.', toolCalls: [{ id: 'call_s', name: 'get_weather', arguments: { city: 'Bern' } }] },
      { content: 'Bern is mild.' },
    ]);
    const stream = streamChatToolLoop(transport, { model: 'mock-model', messages: [question], tools: [weatherTool([])] });
    const events: ChatToolLoopEvent[] = [];
    for await (const event of stream) events.push(event);

    const outline = events
      .filter((e) => e.type !== 'tool_call.delta' && e.type !== 'usage')
      .map((e) => `${e.step}:${e.type}`);
    const dedupe = outline.filter((entry, i) => entry !== outline[i - 1]);
    expect(dedupe).toEqual([
      '1:step.start',
      '1:reasoning',
      '1:tool_call.start',
      '1:tool_call.done',
      '1:tool.result',
      '1:step.finish',
      '2:step.start',
      '2:content',
      '2:step.finish',
      '2:finish',
    ]);
    const text = events.flatMap((e) => (e.type === 'content' ? [e.delta] : [])).join('');
    expect(text).toBe('Bern is mild.');
    const result = await stream.final();
    expect(result.text).toBe('Bern is mild.');
    expect(events.at(-1)).toMatchObject({ type: 'finish', finishReason: 'stop', usage: result.usage });
  });

  it('aborts a running tool and rejects with an AbortError', async () => {
    const transport = await start([{ toolCalls: [{ id: 'call_w', name: 'wait', arguments: '{}' }] }]);
    let toolSignal: AbortSignal | undefined;
    let started!: () => void;
    const running = new Promise<void>((resolve) => {
      started = resolve;
    });
    const wait = defineTool({
      name: 'wait',
      parameters: z.object({}),
      execute: (_args, { signal }) =>
        new Promise((_resolve, reject) => {
          toolSignal = signal;
          signal.addEventListener('abort', () => reject(signal.reason));
          started();
        }),
    });
    const stream = streamChatToolLoop(transport, { model: 'mock-model', messages: [question], tools: [wait] });
    await running;
    stream.abort();

    await expect(stream.final()).rejects.toBeInstanceOf(AbortError);
    expect(toolSignal?.aborted).toBe(true);
    expect(bodies()).toHaveLength(1);
  });

  it('keeps the finished steps in the partial when a later step fails mid-stream', async () => {
    const transport = await start([
      { toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: '{"city":"Oslo"}' }] },
      { content: 'It is cold in Os', streamError: { message: 'overloaded', type: 'server_error' } },
    ]);
    const error = await runChatToolLoop(transport, {
      model: 'mock-model',
      messages: [question],
      tools: [weatherTool([])],
    }).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(Ai4tsError);
    const partial = (error as Ai4tsError).partial as ToolLoopPartial;
    expect(partial.steps).toHaveLength(1);
    expect(partial.text).toBe('It is cold in Os');
    expect(partial.messages.at(-1)).toEqual({
      role: 'tool',
      tool_call_id: 'call_1',
      content: '{"city":"Oslo","temperature":4}',
    });
  });
});

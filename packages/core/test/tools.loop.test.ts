import {
  AbortError,
  ApiError,
  defineTool,
  runToolLoop,
  streamToolLoop,
  type ToolLoopEvent,
  type ToolLoopPartial,
} from '@ai4ts/core';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { deepFreeze, deferred, type FakeRequest, type FakeTurn, fakeModel, usage } from './tools.fake-adapter.js';

const weather = defineTool({
  name: 'get_weather',
  description: 'Current temperature of a city',
  parameters: z.object({ city: z.string(), unit: z.enum(['c', 'f']).default('c') }),
  execute: async ({ city, unit }) => ({ city, temperature: city.length, unit }),
});

const question = (): FakeRequest => ({
  model: 'fake',
  messages: [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'Weather in Paris and Oslo?' },
  ],
});

/** Calls get_weather for both cities on the first request, answers on the second. */
function weatherTurns(_request: FakeRequest, step: number): FakeTurn {
  if (step === 1)
    return {
      content: 'Checking.',
      calls: [
        ['call_1', 'get_weather', '{"city":"Paris"}'],
        ['call_2', 'get_weather', '{ "city" : "Oslo", "unit":"f" }'],
      ],
      usage: usage(10, 5, 2),
    };
  return { content: 'Paris 5, Oslo 4.', usage: usage(30, 7, 1) };
}

describe('runToolLoop', () => {
  it('runs a two-step loop: the second request carries the assistant turn as produced and results in call order', async () => {
    const gate = deferred();
    const order: string[] = [];
    const slowFirst = defineTool({
      name: 'get_weather',
      parameters: z.object({ city: z.string() }),
      execute: async ({ city }) => {
        if (city === 'Paris') await gate.promise;
        else gate.resolve();
        order.push(city);
        return city === 'Paris' ? 'sunny' : { city, temperature: -2 };
      },
    });
    const { adapter, requests } = fakeModel(weatherTurns);
    const request = question();
    const result = await runToolLoop(adapter, request, { tools: [slowFirst] });

    expect(order).toEqual(['Oslo', 'Paris']);
    expect(requests).toHaveLength(2);
    expect(requests[1]).toEqual({
      model: 'fake',
      messages: [
        ...request.messages,
        {
          role: 'assistant',
          content: 'Checking.',
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            {
              id: 'call_2',
              type: 'function',
              function: { name: 'get_weather', arguments: '{ "city" : "Oslo", "unit":"f" }' },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
        { role: 'tool', tool_call_id: 'call_2', content: '{"city":"Oslo","temperature":-2}' },
      ],
    });
    expect(result.finishReason).toBe('stop');
    expect(result.text).toBe('Paris 5, Oslo 4.');
    expect(result.completion.message.content).toBe('Paris 5, Oslo 4.');
    expect(result.messages).toEqual([
      ...(requests[1]?.messages ?? []),
      { role: 'assistant', content: 'Paris 5, Oslo 4.' },
    ]);
    expect(result.steps.map((s) => [s.step, s.finishReason, s.toolCalls.length, s.toolResults.length])).toEqual([
      [1, 'tool_calls', 2, 2],
      [2, 'stop', 0, 0],
    ]);
    expect(result.steps[0]?.request).toEqual(request);
    expect(result.steps[1]?.request).toEqual(requests[1]);
    expect(result.steps[0]?.toolResults.map((r) => r.toolCallId)).toEqual(['call_1', 'call_2']);
    expect(result.usage).toEqual({
      prompt_tokens: 40,
      completion_tokens: 12,
      total_tokens: 52,
      completion_tokens_details: { reasoning_tokens: 3 },
    });
  });

  it('never mutates the caller’s request, even across steps and prepareStep', async () => {
    const { adapter } = fakeModel(weatherTurns);
    const request = deepFreeze(question());
    const result = await runToolLoop(adapter, request, {
      tools: [weather],
      prepareStep: ({ request }) => ({ ...request, temperature: 0 }),
    });
    expect(result.finishReason).toBe('stop');
    expect(request).toEqual(question());
  });

  it('sends invalid JSON, schema-invalid arguments and unknown tools back as errors without executing', async () => {
    let executed = 0;
    const counted = defineTool({
      name: 'get_weather',
      parameters: z.object({ city: z.string() }),
      execute: () => {
        executed++;
        return 'ok';
      },
    });
    const { adapter, requests } = fakeModel((_r, step) =>
      step === 1
        ? {
            calls: [
              ['a', 'get_weather', '{"city": "Par'],
              ['b', 'get_weather', '{"town": "Paris"}'],
              ['c', 'get_time', '{}'],
            ],
          }
        : { content: 'Sorry.' },
    );
    const result = await runToolLoop(adapter, question(), { tools: [counted] });
    expect(executed).toBe(0);
    const toolMessages = requests[1]?.messages.filter((m) => m.role === 'tool') ?? [];
    expect(toolMessages.map((m) => [m.tool_call_id, JSON.parse(m.content).error])).toEqual([
      ['a', expect.stringMatching(/^Invalid JSON in the arguments of tool "get_weather": /)],
      ['b', expect.stringMatching(/^Invalid arguments for tool "get_weather": city: /)],
      ['c', 'Unknown tool "get_time"; available tools: get_weather'],
    ]);
    expect(result.steps[0]?.toolResults.every((r) => r.isError)).toBe(true);
    expect(result.text).toBe('Sorry.');
  });

  it('turns a throwing and a timed-out tool into error messages and goes on', async () => {
    const throwing = defineTool({
      name: 'boom',
      parameters: z.object({}),
      execute: () => Promise.reject(new Error('kaput')),
    });
    const hanging = defineTool({
      name: 'hang',
      parameters: z.object({}),
      timeout: 10,
      execute: () => new Promise(() => {}),
    });
    const { adapter, requests } = fakeModel((_r, step) =>
      step === 1
        ? {
            calls: [
              ['a', 'boom', '{}'],
              ['b', 'hang', ''],
            ],
          }
        : { content: 'Both failed.' },
    );
    const result = await runToolLoop(adapter, question(), { tools: [throwing, hanging] });
    expect(requests[1]?.messages.slice(-2)).toEqual([
      { role: 'tool', tool_call_id: 'a', content: '{"error":"Tool \\"boom\\" failed: kaput"}' },
      { role: 'tool', tool_call_id: 'b', content: '{"error":"Tool \\"hang\\" timed out after 10 ms"}' },
    ]);
    expect(result.steps[0]?.toolResults.map((r) => r.error?.name)).toEqual(['ToolError', 'TimeoutError']);
    expect(result.finishReason).toBe('stop');
  });

  it('makes exactly maxSteps requests and returns the last calls unexecuted with max_steps', async () => {
    let runs = 0;
    const counting = defineTool({
      name: 'get_weather',
      parameters: z.object({ city: z.string() }),
      execute: () => ++runs,
    });
    const { adapter, requests } = fakeModel((_r, step) => ({
      calls: [[`call_${step}`, 'get_weather', '{"city":"Rome"}']],
    }));
    const result = await runToolLoop(adapter, question(), { tools: [counting], maxSteps: 3 });
    expect(requests).toHaveLength(3);
    expect(runs).toBe(2);
    expect(result.finishReason).toBe('max_steps');
    expect(result.steps).toHaveLength(3);
    expect(result.steps[2]?.toolCalls).toEqual([{ id: 'call_3', name: 'get_weather', arguments: '{"city":"Rome"}' }]);
    expect(result.steps[2]?.toolResults).toEqual([]);
    expect(result.messages.at(-1)).toMatchObject({ role: 'assistant', tool_calls: [{ id: 'call_3' }] });

    const once = fakeModel(() => ({ calls: [['x', 'get_weather', '{"city":"Rome"}']] }));
    expect((await runToolLoop(once.adapter, question(), { tools: [counting], maxSteps: 1 })).finishReason).toBe(
      'max_steps',
    );
    expect(once.requests).toHaveLength(1);
    await expect(runToolLoop(once.adapter, question(), { maxSteps: 0 })).rejects.toThrow(RangeError);
  });

  it('passes tool calls through untouched, and the host can continue with the returned messages', async () => {
    const { adapter, requests } = fakeModel(weatherTurns);
    const first = await runToolLoop(adapter, question(), { tools: [weather], passThroughToolCalls: true });
    expect(requests).toHaveLength(1);
    expect(first.finishReason).toBe('tool_calls');
    expect(first.steps[0]?.toolResults).toEqual([]);
    expect(first.steps[0]?.toolCalls).toEqual([
      { id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { id: 'call_2', name: 'get_weather', arguments: '{ "city" : "Oslo", "unit":"f" }' },
    ]);
    expect(first.messages).toHaveLength(3);

    // The host runs the tools itself and sends the transcript back.
    const hostResults = first.steps[0]?.toolCalls.map((call) => ({
      role: 'tool' as const,
      tool_call_id: call.id,
      content: `host ran ${call.name}`,
    }));
    const second = await runToolLoop(adapter, { ...question(), messages: [...first.messages, ...(hostResults ?? [])] });
    expect(second.text).toBe('Paris 5, Oslo 4.');
    expect(requests[1]?.messages.slice(2)).toEqual([...first.messages.slice(2), ...(hostResults ?? [])]);
  });

  it('passes a step through when it calls a tool without execute', async () => {
    const remote = defineTool({ name: 'get_weather', parameters: z.object({ city: z.string() }) });
    const { adapter, requests } = fakeModel(weatherTurns);
    const result = await runToolLoop(adapter, question(), { tools: [remote] });
    expect(requests).toHaveLength(1);
    expect(result.finishReason).toBe('tool_calls');
    expect(result.steps[0]?.toolCalls).toHaveLength(2);
  });

  it('does not resend when finish_reason is tool_calls without calls, and never runs calls of a cut-off turn', async () => {
    const empty = fakeModel(() => ({ content: 'hm', finish: 'tool_calls' }));
    const result = await runToolLoop(empty.adapter, question(), { tools: [weather] });
    expect(empty.requests).toHaveLength(1);
    expect(result.finishReason).toBe('tool_calls');

    let runs = 0;
    const counting = defineTool({ name: 'get_weather', parameters: z.object({}).loose(), execute: () => ++runs });
    const cut = fakeModel(() => ({ calls: [['a', 'get_weather', '{"city":"Pa']], finish: 'length' }));
    const truncated = await runToolLoop(cut.adapter, question(), { tools: [counting] });
    expect(runs).toBe(0);
    expect(cut.requests).toHaveLength(1);
    expect(truncated.finishReason).toBe('length');
    expect(truncated.steps[0]?.toolResults).toEqual([]);
  });

  it('runs tool calls that arrive with another finish reason', async () => {
    const { adapter, requests } = fakeModel((request, step) =>
      step === 1 ? { ...weatherTurns(request, 1), finish: 'stop' } : weatherTurns(request, 2),
    );
    const result = await runToolLoop(adapter, question(), { tools: [weather] });
    expect(requests).toHaveLength(2);
    expect(result.steps[0]?.toolResults).toHaveLength(2);
  });

  it('denies calls through onToolCall with a refusal message; onStepFinish sees every step', async () => {
    const { adapter, requests } = fakeModel(weatherTurns);
    const finished: number[] = [];
    const result = await runToolLoop(adapter, question(), {
      tools: [weather],
      onToolCall: (call) => (call.args as { city: string }).city === 'Oslo' ? { deny: 'not allowed' } : 'allow',
      onStepFinish: (step) => {
        finished.push(step.step);
      },
    });
    expect(finished).toEqual([1, 2]);
    expect(requests[1]?.messages.slice(-2)).toEqual([
      { role: 'tool', tool_call_id: 'call_1', content: '{"city":"Paris","temperature":5,"unit":"c"}' },
      {
        role: 'tool',
        tool_call_id: 'call_2',
        content: '{"error":"The call to tool \\"get_weather\\" was denied: not allowed"}',
      },
    ]);
    expect(result.steps[0]?.toolResults.map((r) => r.isError)).toEqual([false, true]);
  });

  it('lets prepareStep change the request of each step', async () => {
    const { adapter, requests } = fakeModel(weatherTurns);
    const seen: number[] = [];
    await runToolLoop(adapter, question(), {
      tools: [weather],
      prepareStep: ({ step, request, steps }) => {
        seen.push(steps.length);
        return step === 2 ? { ...request, temperature: 0.5 } : undefined;
      },
    });
    expect(seen).toEqual([0, 1]);
    expect(requests[0]?.temperature).toBeUndefined();
    expect(requests[1]?.temperature).toBe(0.5);
    expect(requests[1]?.messages).toHaveLength(5);
  });

  it('gives execute the step, the call id and the step’s transcript; runs sequentially without parallel_tool_calls', async () => {
    let running = 0;
    let peak = 0;
    const contexts: unknown[] = [];
    const probe = defineTool({
      name: 'get_weather',
      parameters: z.object({ city: z.string() }),
      execute: async (_args, context) => {
        contexts.push([context.toolCallId, context.step, context.messages.length]);
        peak = Math.max(peak, ++running);
        await new Promise((resolve) => setImmediate(resolve));
        running--;
        return 'ok';
      },
    });
    const { adapter } = fakeModel(weatherTurns);
    await runToolLoop(adapter, { ...question(), parallel_tool_calls: false }, { tools: [probe] });
    expect(peak).toBe(1);
    expect(contexts).toEqual([
      ['call_1', 1, 2],
      ['call_2', 1, 2],
    ]);
    peak = 0;
    await runToolLoop(fakeModel(weatherTurns).adapter, question(), { tools: [probe] });
    expect(peak).toBe(2);
  });

  it('reads a strict model’s nulls for omitted optionals as absent', async () => {
    const seen: unknown[] = [];
    const strict = defineTool({
      name: 'search',
      strict: true,
      parameters: z.object({ query: z.string(), limit: z.number().default(5), lang: z.string().optional() }),
      execute: (args) => {
        seen.push(args);
        return 'found';
      },
    });
    const { adapter } = fakeModel((_r, step) =>
      step === 1 ? { calls: [['s', 'search', '{"query":"zod","limit":null,"lang":null}']] } : { content: 'done' },
    );
    const result = await runToolLoop(adapter, question(), { tools: [strict] });
    expect(seen).toEqual([{ query: 'zod', limit: 5 }]);
    expect(result.steps[0]?.toolResults[0]?.isError).toBe(false);
  });

  it('rejects with AbortError when aborted during a tool run; the tool sees its signal abort', async () => {
    const started = deferred();
    const toolAborted = deferred<unknown>();
    const waiting = defineTool({
      name: 'get_weather',
      parameters: z.object({ city: z.string() }),
      execute: (_args, { signal }) => {
        signal.addEventListener('abort', () => toolAborted.resolve(signal.reason));
        started.resolve();
        return new Promise(() => {});
      },
    });
    const controller = new AbortController();
    const { adapter, requests } = fakeModel(weatherTurns);
    const run = runToolLoop(adapter, question(), { tools: [waiting], signal: controller.signal });
    await started.promise;
    controller.abort(new Error('user pressed stop'));
    const error = await run.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AbortError);
    expect((error as AbortError).cause).toEqual(new Error('user pressed stop'));
    expect(await toolAborted.promise).toEqual(new Error('user pressed stop'));
    expect(requests).toHaveLength(1);
    const partial = (error as AbortError<ToolLoopPartial>).partial;
    expect(partial?.completion).toMatchObject({ finish_reason: 'tool_calls' });
    expect(partial?.steps).toEqual([]);
    expect(partial?.messages).toHaveLength(3);
  });

  it('rejects with AbortError when aborted during a model request', async () => {
    const controller = new AbortController();
    const never = new Promise(() => {});
    const { adapter } = fakeModel(() => ({ content: 'x', wait: never }));
    const run = runToolLoop(adapter, question(), { signal: controller.signal });
    controller.abort();
    await expect(run).rejects.toBeInstanceOf(AbortError);
  });

  it('keeps the finished steps on the partial of an error from a later step', async () => {
    const { adapter } = fakeModel(weatherTurns);
    const failing = {
      ...adapter,
      send: async (request: FakeRequest, context: Parameters<typeof adapter.send>[1]) => {
        if (context.step === 2)
          throw new ApiError('boom', {
            status: 500,
            partial: { message: { role: 'assistant', content: 'Paris' }, finish_reason: 'stop' },
          });
        return adapter.send(request, context);
      },
    };
    const error = (await runToolLoop(failing, question(), { tools: [weather] }).catch((e: unknown) => e)) as ApiError<
      ToolLoopPartial
    >;
    expect(error).toBeInstanceOf(ApiError);
    expect(error.partial?.steps).toHaveLength(1);
    expect(error.partial?.text).toBe('Paris');
    expect(error.partial?.messages).toHaveLength(5);
    expect(error.partial?.usage).toEqual(usage(10, 5, 2));
  });
});

describe('streamToolLoop', () => {
  it('streams every step’s events tagged with their step number, in order', async () => {
    const { adapter } = fakeModel(weatherTurns);
    const stream = streamToolLoop(adapter, question(), { tools: [weather] });
    const events: ToolLoopEvent[] = [];
    for await (const event of stream) events.push(event);
    const summary = events.map((e) => `${e.step}:${e.type}${'id' in e ? `:${e.id}` : ''}`);
    expect(summary).toEqual([
      '1:step.start',
      '1:content',
      '1:content',
      '1:content',
      '1:tool_call.start:call_1',
      '1:tool_call.delta:call_1',
      '1:tool_call.done:call_1',
      '1:tool_call.start:call_2',
      '1:tool_call.delta:call_2',
      '1:tool_call.done:call_2',
      '1:usage',
      '1:tool.result:call_1',
      '1:tool.result:call_2',
      '1:step.finish',
      '2:step.start',
      ...Array.from({ length: 4 }, () => '2:content'),
      '2:usage',
      '2:step.finish',
      '2:finish',
    ]);
    const final = await stream.final();
    expect(events.at(-1)).toEqual({ type: 'finish', step: 2, finishReason: 'stop', usage: final.usage });
    const toolResult = events.find((e) => e.type === 'tool.result');
    expect(toolResult).toMatchObject({
      id: 'call_1',
      name: 'get_weather',
      output: { city: 'Paris', temperature: 5, unit: 'c' },
      isError: false,
    });
    const stepFinish = events.find((e) => e.type === 'step.finish');
    expect(stepFinish).toMatchObject({ step: 1, finishReason: 'tool_calls', toolResults: final.steps[0]?.toolResults });
    expect(final.text).toBe('Paris 5, Oslo 4.');
  });

  it('runs without being iterated: final() alone is enough', async () => {
    const { adapter, requests } = fakeModel(weatherTurns);
    const stream = streamToolLoop(adapter, question(), { tools: [weather] });
    const result = await stream.final();
    expect(requests).toHaveLength(2);
    expect(result.finishReason).toBe('stop');
  });

  it('throws the loop’s error after the events before it', async () => {
    const { adapter } = fakeModel(weatherTurns);
    const stream = streamToolLoop(adapter, question(), { tools: [weather], maxSteps: 0.5 });
    const events: unknown[] = [];
    await expect(
      (async () => {
        for await (const event of stream) events.push(event);
      })(),
    ).rejects.toThrow(RangeError);
    await expect(stream.final()).rejects.toThrow(RangeError);
    expect(events).toEqual([]);
  });

  it('aborts the loop when the caller aborts, or when the reader stops early', async () => {
    const gate = new Promise(() => {});
    const controller = new AbortController();
    const aborted = streamToolLoop(fakeModel(() => ({ content: 'x', wait: gate })).adapter, question(), {
      signal: controller.signal,
    });
    const iterator = aborted[Symbol.asyncIterator]();
    expect((await iterator.next()).value).toMatchObject({ type: 'step.start', step: 1 });
    controller.abort();
    await expect(iterator.next()).rejects.toBeInstanceOf(AbortError);
    await expect(aborted.final()).rejects.toBeInstanceOf(AbortError);

    const stopped = streamToolLoop(fakeModel(() => ({ content: 'x', wait: gate })).adapter, question());
    stopped.abort(new Error('enough'));
    const error = await stopped.final().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AbortError);
    expect((error as AbortError).cause).toEqual(new Error('enough'));

    const early = streamToolLoop(fakeModel(() => ({ content: 'x', wait: gate })).adapter, question());
    for await (const event of early) {
      expect(event.type).toBe('step.start');
      break;
    }
    await expect(early.final()).rejects.toBeInstanceOf(AbortError);
    // A later loop replays the buffered events, then throws the stream's error.
    const replay = early[Symbol.asyncIterator]();
    expect((await replay.next()).value).toMatchObject({ type: 'step.start', step: 1 });
    await expect(replay.next()).rejects.toBeInstanceOf(AbortError);
  });
});

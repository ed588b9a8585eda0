/**
 * The Responses tool loop against @ai4ts/testing's scripted model; the round trips of vendor fields keep a
 * test kit node:http server, since the scripted model cannot put unknown fields on the items it streams.
 */
import { AbortError, defineTool, Transport } from '@ai4ts/core';
import { toResponsesTool } from '../src/index.js';
import {
  type ResponseInputItem,
  type ResponsesLoopRequest,
  runResponsesToolLoop,
  streamResponsesToolLoop,
} from '@ai4ts/responses';
import { type MockModel, type MockTurn, type MockUsage, startMockModel } from '@ai4ts/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { serve, sseText, type TestServer } from '@ai4ts/test-kit';
import * as z from 'zod';
import { type Json, messageItem, Script } from './fixtures.js';

let model: MockModel | undefined;
let server: TestServer | undefined;
afterEach(async () => {
  await model?.close();
  model = undefined;
  await server?.close();
  server = undefined;
});

/** Starts the scripted model; `bodies()` and `model.requests` show what the loop sent. */
async function start(script: MockTurn[]): Promise<Transport> {
  model = await startMockModel({ script });
  return new Transport({ baseURL: model.baseURL, apiKey: 'sk-test', maxRetries: 0 });
}

/** The JSON body of every request the scripted model received. */
function bodies(): Json[] {
  return (model?.requests ?? []).map((request) => request.body as Json);
}

/** The same usage on every step: 120 in (100 cached), 40 out (12 reasoning). */
const usage: MockUsage = {
  prompt_tokens: 120,
  completion_tokens: 40,
  total_tokens: 160,
  prompt_tokens_details: { cached_tokens: 100 },
  completion_tokens_details: { reasoning_tokens: 12 },
};

/** Two parallel calls: the weather and the time in Paris. */
const parallelCalls: MockTurn = {
  toolCalls: [
    { id: 'call_weather', name: 'get_weather', arguments: '{"city":"Paris","unit":"c"}' },
    { id: 'call_time', name: 'get_time', arguments: '{"tz":"Europe/Paris"}' },
  ],
  usage,
};

const calls: string[] = [];
const getWeather = defineTool({
  name: 'get_weather',
  description: 'Current weather of a city',
  parameters: z.object({ city: z.string(), unit: z.string() }),
  execute: ({ city, unit }) => {
    calls.push(`weather:${city}`);
    return { city, temp: 21, unit };
  },
});
const getTime = defineTool({
  name: 'get_time',
  description: 'Local time',
  parameters: z.object({ tz: z.string() }),
  execute: ({ tz }) => {
    calls.push(`time:${tz}`);
    return `12:00 ${tz}`;
  },
});
const tools = [getWeather, getTime];
/** The tools as the wire carries them (JSON, so `undefined` fields are gone). */
const wireTools = tools.map((tool) => JSON.parse(JSON.stringify(toResponsesTool(tool))));

/**
 * The output items the scripted model streams as its answer to request `step`: request N of a server seeded S is
 * seeded S + N, and the streamed and the unstreamed answer of one seed carry the same items, so a twin server
 * seeded `step` answering its first request shows them, outside the loop under test.
 */
async function outputOf(step: number, turn: MockTurn, request: object): Promise<Json[]> {
  const twin = await startMockModel({ script: [turn], seed: step });
  try {
    const response = await fetch(`${twin.baseURL}/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...request, stream: false }),
    });
    return ((await response.json()) as { output: Json[] }).output;
  } finally {
    await twin.close();
  }
}

describe('runResponsesToolLoop', () => {
  it('runs two parallel calls and continues by previous_response_id with only the new outputs', async () => {
    calls.length = 0;
    const transport = await start([parallelCalls, { content: 'Sunny, noon.', usage }]);
    const request = { model: 'gpt-5', input: 'Weather and time in Paris?', tools };
    const result = await runResponsesToolLoop(transport, request);

    expect(calls.sort()).toEqual(['time:Europe/Paris', 'weather:Paris']);
    expect(bodies()).toHaveLength(2);
    expect(bodies()[1]).toEqual({
      model: 'gpt-5',
      input: [
        { type: 'function_call_output', call_id: 'call_weather', output: '{"city":"Paris","temp":21,"unit":"c"}' },
        { type: 'function_call_output', call_id: 'call_time', output: '12:00 Europe/Paris' },
      ],
      previous_response_id: 'resp_mock_1',
      tools: wireTools,
      stream: true,
    });
    expect(bodies()[0]).toEqual({
      model: 'gpt-5',
      // The transcript's items: a string input is one user message.
      input: [{ type: 'message', role: 'user', content: 'Weather and time in Paris?' }],
      tools: wireTools,
      stream: true,
    });
    expect(request).toEqual({ model: 'gpt-5', input: 'Weather and time in Paris?', tools });
    expect(result.text).toBe('Sunny, noon.');
    expect(result.finishReason).toBe('stop');
    expect(result.steps.map((step) => step.finishReason)).toEqual(['tool_calls', 'stop']);
    expect(result.messages.map((item) => item.type)).toEqual([
      'message',
      'function_call',
      'function_call',
      'function_call_output',
      'function_call_output',
      'message',
    ]);
    // usage summed: two steps of `usage`
    expect(result.usage?.prompt_tokens).toBe(240);
    expect(result.usage?.completion_tokens).toBe(80);
    expect(result.usage?.total_tokens).toBe(320);
  });

  it('with store: false resends the whole input, reasoning items included', async () => {
    const first: MockTurn = {
      reasoning: 'The time in UTC.',
      toolCalls: [{ id: 'call_1', name: 'get_time', arguments: '{"tz":"UTC"}' }],
    };
    const second: MockTurn = { content: 'Noon.' };
    const transport = await start([first, second]);
    const input: ResponseInputItem[] = [{ type: 'message', role: 'user', content: 'Time?' }];
    // With store: false the reasoning goes back encrypted, so the request asks for it.
    const request: ResponsesLoopRequest = { model: 'gpt-5', input, store: false, include: ['reasoning.encrypted_content'], tools };
    const result = await runResponsesToolLoop(transport, request);

    const [reasoning, call] = await outputOf(1, first, { ...request, tools: wireTools });
    expect(reasoning).toMatchObject({ type: 'reasoning', encrypted_content: expect.any(String) });
    expect(call).toMatchObject({ type: 'function_call', call_id: 'call_1' });
    const expectedInput = [
      ...input,
      reasoning,
      call,
      { type: 'function_call_output', call_id: 'call_1', output: '12:00 UTC' },
    ];
    expect(bodies()[1]).toEqual({
      model: 'gpt-5',
      input: expectedInput,
      store: false,
      include: ['reasoning.encrypted_content'],
      tools: wireTools,
      stream: true,
    });
    expect(result.messages).toEqual([...expectedInput, ...(await outputOf(2, second, request))]);
  });

  it('sends invalid JSON and schema-invalid arguments back as error results without executing', async () => {
    calls.length = 0;
    const bad = [
      { id: 'call_a', name: 'get_time', arguments: '{"tz":' },
      { id: 'call_b', name: 'get_time', arguments: '{"tz":5}' },
    ];
    const transport = await start([{ toolCalls: bad }, { content: 'Sorry.' }]);
    const result = await runResponsesToolLoop(transport, { model: 'gpt-5', input: 'Time?', tools });

    expect(calls).toEqual([]);
    const outputs = bodies()[1]?.input as Json[];
    expect(outputs.map((item) => item.call_id)).toEqual(['call_a', 'call_b']);
    expect(String(outputs[0]?.output)).toContain('Invalid JSON in the arguments of tool \\"get_time\\"');
    expect(String(outputs[1]?.output)).toContain('Invalid arguments for tool \\"get_time\\"');
    expect(result.steps[0]?.toolResults.every((r) => r.isError)).toBe(true);
  });

  it('stops after maxSteps requests with the last calls unexecuted', async () => {
    calls.length = 0;
    const transport = await start([parallelCalls]);
    const result = await runResponsesToolLoop(transport, { model: 'gpt-5', input: 'Hi', tools, maxSteps: 1 });
    expect(bodies()).toHaveLength(1);
    expect(calls).toEqual([]);
    expect(result.finishReason).toBe('max_steps');
    expect(result.steps[0]?.toolCalls.map((c) => c.id)).toEqual(['call_weather', 'call_time']);
  });

  it('passthrough returns the calls untouched', async () => {
    calls.length = 0;
    const transport = await start([parallelCalls]);
    const result = await runResponsesToolLoop(transport, {
      model: 'gpt-5',
      input: 'Hi',
      tools,
      passThroughToolCalls: true,
    });
    expect(bodies()).toHaveLength(1);
    expect(calls).toEqual([]);
    expect(result.finishReason).toBe('tool_calls');
    expect(result.steps[0]?.toolCalls).toEqual([
      { id: 'call_weather', name: 'get_weather', arguments: '{"city":"Paris","unit":"c"}' },
      { id: 'call_time', name: 'get_time', arguments: '{"tz":"Europe/Paris"}' },
    ]);
  });
});

describe('streamResponsesToolLoop', () => {
  it('yields step-tagged events across steps and sums usage', async () => {
    const transport = await start([parallelCalls, { content: 'Done.', usage }]);
    const stream = streamResponsesToolLoop(transport, { model: 'gpt-5', input: 'Hi', tools });
    const seen: string[] = [];
    for await (const event of stream) seen.push(`${event.step}:${event.type}`);
    expect(seen[0]).toBe('1:step.start');
    expect(seen).toContain('1:tool_call.done');
    expect(seen.filter((e) => e === '1:tool.result')).toHaveLength(2);
    expect(seen).toContain('2:content');
    expect(seen.indexOf('1:step.finish')).toBeLessThan(seen.indexOf('2:step.start'));
    expect(seen.at(-1)).toBe('2:finish');
    const result = await stream.final();
    expect(result.text).toBe('Done.');
    expect(result.usage?.total_tokens).toBe(320);
  });
});

describe('the loop request on the wire', () => {
  it('loop fields and an empty tools never reach the wire; the loop reads its settings from the request', async () => {
    const transport = await start([{ content: 'Hi.' }]);
    const finished: number[] = [];
    const result = await runResponsesToolLoop(transport, {
      model: 'gpt-5',
      input: 'Hi',
      tools: [],
      maxSteps: 2,
      concurrency: 1,
      passThroughToolCalls: false,
      onStepFinish: (step) => {
        finished.push(step.step);
      },
      onToolCall: () => 'allow',
      prepareStep: () => undefined,
    });
    expect(result.text).toBe('Hi.');
    expect(finished).toEqual([1]);
    expect(bodies()).toEqual([
      { model: 'gpt-5', input: [{ type: 'message', role: 'user', content: 'Hi' }], stream: true },
    ]);
  });

  it('wire tools and defineTool tools mix in request.tools; every step gets the per-request options', async () => {
    const transport = await start([
      { toolCalls: [{ id: 'call_1', name: 'get_time', arguments: '{"tz":"UTC"}' }] },
      { content: 'Noon.' },
    ]);
    const request = { model: 'gpt-5', input: 'Time?', tools: [{ type: 'web_search' }, getTime] };
    await runResponsesToolLoop(transport, request, { headers: { 'x-trace': 't1' }, extraBody: { user: 'u1' } });
    const wire = [{ type: 'web_search' }, JSON.parse(JSON.stringify(toResponsesTool(getTime)))];
    expect(bodies().map((body) => body.tools)).toEqual([wire, wire]);
    expect(bodies().map((body) => body.user)).toEqual(['u1', 'u1']);
    expect(model?.requests.map((request) => request.headers['x-trace'])).toEqual(['t1', 't1']);
  });

  it('options.signal aborts the loop with an AbortError', async () => {
    const transport = await start([parallelCalls, { content: 'never' }]);
    const controller = new AbortController();
    const slow = defineTool({
      name: 'get_weather',
      parameters: z.object({ city: z.string(), unit: z.string() }),
      execute: () => {
        controller.abort();
        return 'x';
      },
    });
    const error = await runResponsesToolLoop(
      transport,
      { model: 'gpt-5', input: 'Hi', tools: [slow, getTime] },
      { signal: controller.signal },
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AbortError);
  });
});

// Hand-rolled: the scripted model cannot stream items with vendor fields, nor a terminal event with an empty output.
describe('round trips stay exact', () => {
  /** Serves one scripted stream per request, in order, and records every request body. */
  async function serveScripts(scripts: Script[]): Promise<{ transport: Transport; bodies: Json[] }> {
    const bodies: Json[] = [];
    const running = await serve((_req, res, n) => {
      bodies.push(JSON.parse(running.bodies[n - 1] ?? '') as Json);
      const script = scripts[n - 1];
      if (!script) {
        res.writeHead(500).end('{"error":{"message":"unexpected request"}}');
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(sseText(script.events, { named: true }));
    });
    server = running;
    const transport = new Transport({ baseURL: running.baseURL, apiKey: 'sk-test', maxRetries: 0 });
    return { transport, bodies };
  }

  function answerScript(id: string, text: string): Script {
    return new Script().start().message(0, 'msg_9', [text]).completed([messageItem('msg_9', text)], { id });
  }

  /** A provider-shaped turn: reasoning with encrypted content, then a call whose items carry vendor fields. */
  function vendorTurn(): { script: Script; reasoning: Json; call: Json } {
    const reasoning = {
      id: 'rs_1',
      type: 'reasoning',
      summary: [{ type: 'summary_text', text: 'Look it up.' }],
      encrypted_content: 'gAAAA-opaque',
      x_vendor: { trace: [1, 2] },
    };
    const call = {
      id: 'fc_1',
      type: 'function_call',
      status: 'completed',
      call_id: 'call_1',
      name: 'get_time',
      arguments: '{"tz":"UTC"}',
      x_thought_signature: 'c2lnbmF0dXJl',
      extra_content: { google: { thought_signature: 'abc' } },
    };
    const s = new Script().start();
    s.add('response.output_item.added', { output_index: 0, item: { ...reasoning, summary: [] } });
    s.add('response.reasoning_summary_part.added', {
      item_id: 'rs_1',
      output_index: 0,
      summary_index: 0,
      part: { type: 'summary_text', text: '' },
    });
    s.add('response.reasoning_summary_text.delta', { item_id: 'rs_1', output_index: 0, summary_index: 0, delta: 'Look ' });
    s.add('response.reasoning_summary_text.delta', { item_id: 'rs_1', output_index: 0, summary_index: 0, delta: 'it up.' });
    s.add('response.output_item.done', { output_index: 0, item: reasoning });
    s.add('response.output_item.added', {
      output_index: 1,
      item: { ...call, status: 'in_progress', arguments: '' },
    });
    for (const delta of ['{"tz"', ':"UTC"}']) {
      s.add('response.function_call_arguments.delta', { item_id: 'fc_1', output_index: 1, delta });
    }
    s.add('response.function_call_arguments.done', { item_id: 'fc_1', output_index: 1, arguments: '{"tz":"UTC"}' });
    s.add('response.output_item.done', { output_index: 1, item: call });
    // A gateway's terminal event with an empty output: the streamed items are what goes back.
    s.completed([], { id: 'resp_1' });
    return { script: s, reasoning, call };
  }

  it('store: false sends every output item back exactly as received, unknown fields included', async () => {
    const { script, reasoning, call } = vendorTurn();
    const { transport, bodies } = await serveScripts([script, answerScript('resp_2', 'Noon.')]);
    await runResponsesToolLoop(transport, { model: 'gpt-5', input: 'Time?', store: false, tools: [getTime] });
    expect(bodies[1]).toEqual({
      model: 'gpt-5',
      input: [
        { type: 'message', role: 'user', content: 'Time?' },
        reasoning,
        call,
        { type: 'function_call_output', call_id: 'call_1', output: '12:00 UTC' },
      ],
      store: false,
      tools: [JSON.parse(JSON.stringify(toResponsesTool(getTime)))],
      stream: true,
    });
  });

  it('store not false continues by previous_response_id and keeps the exact items in the transcript', async () => {
    const { script, reasoning, call } = vendorTurn();
    const { transport, bodies } = await serveScripts([script, answerScript('resp_2', 'Noon.')]);
    const result = await runResponsesToolLoop(transport, { model: 'gpt-5', input: 'Time?', tools: [getTime] });
    expect(bodies[1]).toEqual({
      model: 'gpt-5',
      input: [{ type: 'function_call_output', call_id: 'call_1', output: '12:00 UTC' }],
      previous_response_id: 'resp_1',
      tools: [JSON.parse(JSON.stringify(toResponsesTool(getTime)))],
      stream: true,
    });
    expect(result.messages.slice(1, 3)).toEqual([reasoning, call]);
  });

  /** A server that keeps no responses: each request is answered by its script, or refused with `refusal`. */
  async function serveStateless(answers: Array<Script | { status: number; error: Json }>) {
    const bodies: Json[] = [];
    const running = await serve((_req, res, n) => {
      bodies.push(JSON.parse(running.bodies[n - 1] ?? '') as Json);
      const answer = answers[n - 1];
      if (answer === undefined) res.writeHead(500).end('{"error":{"message":"unexpected request"}}');
      else if (answer instanceof Script) res.writeHead(200, { 'content-type': 'text/event-stream' }).end(sseText(answer.events, { named: true }));
      else res.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify({ error: answer.error }));
    });
    server = running;
    return { transport: new Transport({ baseURL: running.baseURL, apiKey: 'sk-test', maxRetries: 0 }), bodies };
  }

  const callItem = { id: 'fc_1', type: 'function_call', status: 'completed', call_id: 'call_1', name: 'get_time', arguments: '{"tz":"UTC"}' };
  const wholeConversation = [
    { type: 'message', role: 'user', content: 'Time?' },
    callItem,
    { type: 'function_call_output', call_id: 'call_1', output: '12:00 UTC' },
  ];

  it('a server that answers store: false gets the whole conversation on the next step', async () => {
    const first = new Script().start().completed([callItem], { id: 'resp_1', store: false });
    const { transport, bodies } = await serveStateless([first, answerScript('resp_2', 'Noon.')]);
    const result = await runResponsesToolLoop(transport, { model: 'gpt-5', input: 'Time?', tools: [getTime] });
    expect(result.text).toBe('Noon.');
    expect(bodies[1]).toMatchObject({ input: wholeConversation });
    expect(bodies[1]).not.toHaveProperty('previous_response_id');
  });

  it.each([
    [400, { message: 'previous_response_id is not supported by the gateway', type: 'invalid_request_error', param: 'previous_response_id', code: null }],
    [404, { message: "Previous response with id 'resp_1' not found.", type: 'invalid_request_error', param: 'previous_response_id', code: 'previous_response_not_found' }],
  ])('a %i on previous_response_id is answered by resending the whole conversation, then on every step', async (status, error) => {
    const first = new Script().start().completed([callItem], { id: 'resp_1' });
    const second = new Script().start().completed([{ ...callItem, id: 'fc_2', call_id: 'call_2' }], { id: 'resp_2' });
    const { transport, bodies } = await serveStateless([first, { status, error }, second, answerScript('resp_3', 'Noon.')]);
    const result = await runResponsesToolLoop(transport, { model: 'gpt-5', input: 'Time?', tools: [getTime] });
    expect(result.text).toBe('Noon.');
    expect(bodies).toHaveLength(4);
    expect(bodies[1]).toMatchObject({ previous_response_id: 'resp_1' });
    expect(bodies[2]).toMatchObject({ input: wholeConversation });
    expect(bodies[2]).not.toHaveProperty('previous_response_id');
    // Once refused, the loop does not try the id again.
    expect(bodies[3]).not.toHaveProperty('previous_response_id');
    expect((bodies[3] as { input: unknown[] }).input).toHaveLength(5);
  });

  it('another 400 fails the step as it is', async () => {
    const first = new Script().start().completed([callItem], { id: 'resp_1' });
    const error = { message: 'Invalid tools', type: 'invalid_request_error', param: 'tools', code: null };
    const { transport, bodies } = await serveStateless([first, { status: 400, error }]);
    await expect(runResponsesToolLoop(transport, { model: 'gpt-5', input: 'Time?', tools: [getTime] })).rejects.toMatchObject({ status: 400 });
    expect(bodies).toHaveLength(2);
  });
});

import { runChatToolLoop, streamChatToolLoop } from '@ai4ts/chat';
import { AbortError, defineTool, Transport } from '@ai4ts/core';
import { toChatTool } from '../src/index.js';
import { HttpResponse, http } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { z } from 'zod';
import { sseText } from '@ai4ts/test-kit';
import { chunk, finish, toolChunk } from './helpers.js';

const BASE = 'http://loop.test/v1';
const server = setupServer();
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => server.resetHandlers());
afterAll(() => server.close());

const usage = (prompt: number, completion: number) => ({
  id: 'chatcmpl-u',
  choices: [],
  usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
});

/** Step 1: two parallel calls whose argument fragments interleave by index; step 2: the answer. */
const STEP_1 = `${sseText([
  toolChunk({ index: 0, id: 'call_p', type: 'function', function: { name: 'get_weather', arguments: '' } }),
  toolChunk({ index: 1, id: 'call_z', type: 'function', function: { name: 'get_weather', arguments: '{"ci' } }),
  toolChunk({ index: 0, function: { arguments: '{"city":"Pa' } }),
  toolChunk({ index: 1, function: { arguments: 'ty":"Z\\u00fc' } }),
  toolChunk({ index: 0, function: { arguments: 'ris"}' } }),
  toolChunk({ index: 1, function: { arguments: 'rich"}' } }),
  finish('tool_calls'),
  usage(10, 5),
])}data: [DONE]\n\n`;
const STEP_2 = `${sseText([chunk({ role: 'assistant', content: 'Zürich is warmer.' }), finish('stop'), usage(30, 4)])}data: [DONE]\n\n`;

it('runs a two-step loop with interleaved parallel calls and sends the exact follow-up body (msw)', async () => {
  const bodies: Record<string, unknown>[] = [];
  server.use(
    http.post(`${BASE}/chat/completions`, async ({ request }) => {
      bodies.push((await request.json()) as Record<string, unknown>);
      return new HttpResponse(bodies.length === 1 ? STEP_1 : STEP_2, {
        headers: { 'content-type': 'text/event-stream' },
      });
    }),
  );
  const temperatures: Record<string, number> = { Paris: 18, Zürich: 21 };
  const getWeather = defineTool({
    name: 'get_weather',
    parameters: z.object({ city: z.string() }),
    execute: async ({ city }) => ({ city, celsius: temperatures[city] }),
  });
  const question = { role: 'user' as const, content: 'Warmer: Paris or Zürich?' };

  const result = await runChatToolLoop(new Transport({ baseURL: BASE, apiKey: 'sk-test', maxRetries: 0 }), {
    model: 'gpt-test',
    messages: [question],
    tools: [getWeather],
  });

  expect(bodies).toHaveLength(2);
  expect(bodies[1]?.messages).toEqual([
    question,
    {
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'call_p', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
        { id: 'call_z', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Z\\u00fcrich"}' } },
      ],
    },
    { role: 'tool', tool_call_id: 'call_p', content: '{"city":"Paris","celsius":18}' },
    { role: 'tool', tool_call_id: 'call_z', content: '{"city":"Zürich","celsius":21}' },
  ]);
  expect(result.text).toBe('Zürich is warmer.');
  expect(result.finishReason).toBe('stop');
  expect(result.usage).toMatchObject({ prompt_tokens: 40, completion_tokens: 9, total_tokens: 49 });
});

/** Serves the given SSE bodies in turn, recording each request's body and headers. */
function serveSteps(...steps: string[]): { bodies: Record<string, unknown>[]; headers: Headers[] } {
  const seen = { bodies: [] as Record<string, unknown>[], headers: [] as Headers[] };
  server.use(
    http.post(`${BASE}/chat/completions`, async ({ request }) => {
      seen.bodies.push((await request.json()) as Record<string, unknown>);
      seen.headers.push(request.headers);
      const body = steps[seen.bodies.length - 1] ?? '';
      return new HttpResponse(body, { headers: { 'content-type': 'text/event-stream' } });
    }),
  );
  return seen;
}

const transport = () => new Transport({ baseURL: BASE, apiKey: 'sk-test', maxRetries: 0 });
const weather = defineTool({
  name: 'get_weather',
  parameters: z.object({ city: z.string() }),
  execute: async ({ city }) => ({ city, celsius: 20 }),
});
const ask = { role: 'user' as const, content: 'Weather?' };
const ANSWER = `${sseText([chunk({ role: 'assistant', content: 'Warm.' }), finish('stop')])}data: [DONE]\n\n`;

it('Gemini: the thought_signature on a tool call goes back on that call, exactly, in the second request', async () => {
  // Gemini's OpenAI-compatible stream: the whole call in one chunk, no `index`, the finish in the same chunk.
  const gemini = `${sseText([{
    id: 'gem-1',
    object: 'chat.completion.chunk',
    created: 1700000000,
    model: 'gemini-2.5-flash',
    choices: [
      {
        index: 0,
        delta: {
          role: 'assistant',
          tool_calls: [
            {
              extra_content: { google: { thought_signature: 'CiQBVKhc7sig+nature==' } },
              function: { arguments: '{"city":"Paris"}', name: 'get_weather' },
              id: 'function-call-1',
              type: 'function',
            },
          ],
        },
        finish_reason: 'tool_calls',
      },
    ],
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  }])}data: [DONE]\n\n`;
  const seen = serveSteps(gemini, ANSWER);
  const result = await runChatToolLoop(transport(), { model: 'gemini-2.5-flash', messages: [ask], tools: [weather] });

  expect(result.text).toBe('Warm.');
  expect(seen.bodies[1]).toEqual({
    model: 'gemini-2.5-flash',
    messages: [
      ask,
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'function-call-1',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
            extra_content: { google: { thought_signature: 'CiQBVKhc7sig+nature==' } },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'function-call-1', content: '{"city":"Paris","celsius":20}' },
    ],
    tools: [toChatTool(weather)],
    stream: true,
    stream_options: { include_usage: true },
  });
});

it('OpenRouter: reasoning_details arriving across deltas go back concatenated on the assistant message', async () => {
  const base = { id: 'gen-1', provider: 'Google', model: 'google/gemini-2.5-pro', object: 'chat.completion.chunk', created: 1 };
  const delta = (d: Record<string, unknown>, finishReason: string | null = null) => ({
    ...base,
    choices: [{ index: 0, delta: d, finish_reason: finishReason, native_finish_reason: finishReason, logprobs: null }],
  });
  const text = (t: string) => ({ type: 'reasoning.text', text: t, format: 'google-gemini-v1', index: 0 });
  const encrypted = { type: 'reasoning.encrypted', data: 'CiQBVKhc7g==', id: 'tool_0', format: 'google-gemini-v1', index: 1 };
  const openrouter = `${sseText([
    delta({ role: 'assistant', content: '', reasoning: 'Let me', reasoning_details: [text('Let me')] }),
    delta({ role: 'assistant', content: '', reasoning: ' check.', reasoning_details: [text(' check.')] }),
    delta({
      role: 'assistant',
      content: null,
      reasoning: null,
      reasoning_details: [encrypted],
      tool_calls: [{ index: 0, id: 'tool_0', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } }],
    }),
    delta({ role: 'assistant', content: '' }, 'tool_calls'),
    { ...base, choices: [], usage: { prompt_tokens: 9, completion_tokens: 8, total_tokens: 17 } },
  ])}data: [DONE]\n\n`;
  const seen = serveSteps(openrouter, ANSWER);
  const result = await runChatToolLoop(
    transport(),
    { model: 'google/gemini-2.5-pro', messages: [ask], tools: [weather] },
    { extraBody: { reasoning: { effort: 'low' } } },
  );

  const assistant = {
    role: 'assistant',
    content: null,
    reasoning_content: 'Let me check.',
    reasoning_details: [text('Let me'), text(' check.'), encrypted],
    tool_calls: [{ id: 'tool_0', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } }],
  };
  expect(seen.bodies[1]).toEqual({
    model: 'google/gemini-2.5-pro',
    messages: [ask, assistant, { role: 'tool', tool_call_id: 'tool_0', content: '{"city":"Rome","celsius":20}' }],
    tools: [toChatTool(weather)],
    reasoning: { effort: 'low' },
    stream: true,
    stream_options: { include_usage: true },
  });
  expect(result.messages[1]).toEqual(assistant);
});

it('loop mode: no loop field and no empty tools reach the wire; per-request options apply to every step', async () => {
  const step1 = `${sseText([
    toolChunk({ index: 0, id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{}' } }),
    finish('tool_calls'),
  ])}data: [DONE]\n\n`;
  const seen = serveSteps(step1, ANSWER);
  const steps: number[] = [];
  const result = await runChatToolLoop(
    transport(),
    {
      model: 'm',
      messages: [ask],
      tools: [],
      maxSteps: 2,
      concurrency: 1,
      passThroughToolCalls: false,
      onStepFinish: (step) => {
        steps.push(step.step);
      },
      onToolCall: () => 'allow',
      prepareStep: () => undefined,
    },
    { headers: { 'x-trace': 'loop-7' }, extraBody: { user: 'u-1' } },
  );

  expect(steps).toEqual([1, 2]);
  expect(result.text).toBe('Warm.');
  // `lookup` is no tool of the loop: it gets an "unknown tool" error result and the model is asked again.
  expect(seen.bodies.map((body) => Object.keys(body).sort())).toEqual([
    ['messages', 'model', 'stream', 'stream_options', 'user'],
    ['messages', 'model', 'stream', 'stream_options', 'user'],
  ]);
  expect(seen.headers.map((headers) => headers.get('x-trace'))).toEqual(['loop-7', 'loop-7']);
});

it('options.signal aborts the loop with an AbortError', async () => {
  serveSteps(sseText([chunk({ content: 'never finishes' })]));
  const controller = new AbortController();
  const stream = streamChatToolLoop(transport(), { model: 'm', messages: [ask], tools: [weather] }, { signal: controller.signal });
  stream.on('content', () => controller.abort());
  await expect(stream.final()).rejects.toBeInstanceOf(AbortError);
});

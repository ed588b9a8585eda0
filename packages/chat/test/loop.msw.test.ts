import { runChatToolLoop } from '@ai4ts/chat';
import { defineTool, Transport } from '@ai4ts/core';
import { HttpResponse, http } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { z } from 'zod';
import { chunk, finish, sse, toolChunk } from './helpers.js';

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
const STEP_1 = sse(
  toolChunk({ index: 0, id: 'call_p', type: 'function', function: { name: 'get_weather', arguments: '' } }),
  toolChunk({ index: 1, id: 'call_z', type: 'function', function: { name: 'get_weather', arguments: '{"ci' } }),
  toolChunk({ index: 0, function: { arguments: '{"city":"Pa' } }),
  toolChunk({ index: 1, function: { arguments: 'ty":"Z\\u00fc' } }),
  toolChunk({ index: 0, function: { arguments: 'ris"}' } }),
  toolChunk({ index: 1, function: { arguments: 'rich"}' } }),
  finish('tool_calls'),
  usage(10, 5),
);
const STEP_2 = sse(chunk({ role: 'assistant', content: 'Zürich is warmer.' }), finish('stop'), usage(30, 4));

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

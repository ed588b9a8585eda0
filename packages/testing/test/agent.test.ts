import { toChatTool } from '@ai4ts/chat';
import { defineTool, runToolLoop, type ToolLoopAdapter } from '@ai4ts/core';
import { parseSse } from '@ai4ts/sse';
import { agentQuestion, agentScript, type ChatMessage, type MockModel, startMockModel } from '@ai4ts/testing';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';

let model: MockModel | undefined;
afterEach(async () => {
  await model?.close();
  model = undefined;
});

const temperatures: Record<string, number> = { Paris: 18, Zürich: 12.5 };

const tools = [
  defineTool({
    name: 'get_weather',
    description: 'Current weather of a city',
    parameters: z.object({ city: z.string() }),
    execute: ({ city }) => ({ city, temperature: temperatures[city], conditions: 'clear' }),
  }),
  defineTool({
    name: 'convert_temperature',
    description: 'Converts a temperature',
    parameters: z.object({ value: z.number(), from: z.enum(['celsius']), to: z.enum(['fahrenheit']) }),
    execute: ({ value }) => (value * 9) / 5 + 32,
  }),
];

interface Request {
  model: string;
  messages: ChatMessage[];
}
interface Completion {
  choices: { message: ChatMessage; finish_reason: string }[];
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
}

/** A minimal non-streaming Chat Completions adapter over fetch: enough to drive the agent end to end. */
function chatAdapter(baseURL: string): ToolLoopAdapter<Request, Completion, ChatMessage> {
  const message = (completion: Completion) => completion.choices[0]?.message as ChatMessage;
  return {
    async send(request, { signal }) {
      const response = await fetch(`${baseURL}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ...request, tools: tools.map(toChatTool) }),
        signal,
      });
      return (await response.json()) as Completion;
    },
    readTurn: (completion) => ({
      toolCalls: (message(completion).tool_calls ?? []).map((c) => ({
        id: c.id,
        name: c.function.name,
        arguments: c.function.arguments,
      })),
      finishReason: completion.choices[0]?.finish_reason ?? 'stop',
      text: typeof message(completion).content === 'string' ? (message(completion).content as string) : '',
      usage: completion.usage,
    }),
    getMessages: (request) => request.messages,
    withMessages: (request, messages) => ({ ...request, messages }),
    assistantMessages: (completion) => [message(completion)],
    toolMessages: (results) => results.map((r) => ({ role: 'tool', tool_call_id: r.toolCallId, content: r.content })),
  };
}

describe('agentScript', () => {
  it('needs two tools and three requests, and answers from the tool results it was sent', async () => {
    model = await startMockModel({ script: agentScript });
    const result = await runToolLoop(
      chatAdapter(model.baseURL),
      { model: 'mock-model', messages: [{ role: 'user', content: agentQuestion }] },
      { tools },
    );
    expect(result.finishReason).toBe('stop');
    expect(result.steps.map((s) => s.toolCalls.map((c) => c.name))).toEqual([
      ['get_weather', 'get_weather'],
      ['convert_temperature'],
      [],
    ]);
    expect(result.steps[0]?.toolCalls.map((c) => JSON.parse(c.arguments))).toEqual([
      { city: 'Paris' },
      { city: 'Zürich' },
    ]);
    expect(JSON.parse(result.steps[1]?.toolCalls[0]?.arguments ?? '')).toEqual({
      value: 18,
      from: 'celsius',
      to: 'fahrenheit',
    });
    expect(result.text).toBe(
      'Right now it is Paris: 18 °C, Zürich: 12.5 °C. The warmer city is Paris at 18 °C, which is 64.4 °F.',
    );
    expect(result.completion.choices[0]?.message.reasoning_content).toBeTruthy();
    expect(model.requests.map((r) => (r.body as Request).messages.length)).toEqual([1, 4, 6]);
    expect(result.usage?.total_tokens).toBe(
      result.steps.reduce((sum, step) => sum + (step.usage?.total_tokens ?? 0), 0),
    );
  });

  it('streams its first step as reasoning and two fragmented, interleaved get_weather calls', async () => {
    model = await startMockModel({ script: agentScript, seed: 3 });
    const response = await fetch(`${model.baseURL}/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: agentQuestion }] }),
    });
    let reasoning = '';
    const args: string[] = [];
    let fragments = 0;
    for await (const event of parseSse(response)) {
      if (event.data === '[DONE]') break;
      const delta = JSON.parse(event.data).choices[0]?.delta ?? {};
      reasoning += delta.reasoning_content ?? '';
      for (const call of delta.tool_calls ?? []) {
        args[call.index] = (args[call.index] ?? '') + call.function.arguments;
        if (call.function.arguments) fragments++;
      }
    }
    expect(reasoning).toMatch(/in parallel/);
    expect(args).toEqual(['{"city":"Paris"}', '{"city":"Z\\u00fcrich"}']);
    expect(fragments).toBeGreaterThan(4);
  });

  it('reports a failing tool in its answer', async () => {
    model = await startMockModel({ script: agentScript });
    const failing = [
      defineTool({
        name: 'get_weather',
        parameters: z.object({ city: z.string() }),
        execute: () => {
          throw new Error('weather service down');
        },
      }),
    ];
    const adapter = chatAdapter(model.baseURL);
    const result = await runToolLoop(
      adapter,
      { model: 'mock-model', messages: [{ role: 'user', content: agentQuestion }] },
      { tools: failing },
    );
    expect(result.steps).toHaveLength(2);
    expect(result.text).toMatch(/^I could not get a temperature reading: Paris: no reading \(.*weather service down/);
  });
});

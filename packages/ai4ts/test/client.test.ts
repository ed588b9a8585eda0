import { agentQuestion, agentScript, type MockModel, startMockModel } from '@ai4ts/testing';
import { Ai4ts, ChatStream, createClient, defineTool } from 'ai4ts';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';

let model: MockModel | undefined;
afterEach(async () => {
  await model?.close();
  model = undefined;
});

const CELSIUS: Record<string, number> = { Paris: 18, Zürich: 21 };

function agentTools(calls: string[]) {
  const getWeather = defineTool({
    name: 'get_weather',
    description: 'Current weather of a city',
    parameters: z.object({ city: z.string() }),
    execute: ({ city }) => {
      calls.push(`get_weather:${city}`);
      return { city, temperature: CELSIUS[city] ?? 0 };
    },
  });
  const convert = defineTool({
    name: 'convert_temperature',
    description: 'Converts a temperature',
    parameters: z.object({ value: z.number(), from: z.enum(['celsius', 'fahrenheit']), to: z.enum(['celsius', 'fahrenheit']) }),
    execute: ({ value, from, to }) => {
      calls.push(`convert_temperature:${value}`);
      return from === to ? value : from === 'celsius' ? (value * 9) / 5 + 32 : ((value - 32) * 5) / 9;
    },
  });
  return [getWeather, convert];
}

describe('Ai4ts client', () => {
  it('runs the agent through client.chat.create with two tools', async () => {
    model = await startMockModel({ script: agentScript });
    const client = createClient({ baseURL: model.baseURL, apiKey: 'test', maxRetries: 0 });
    const calls: string[] = [];

    const result = await client.chat.create({
      model: 'mock-model',
      messages: [{ role: 'user', content: agentQuestion }],
      tools: agentTools(calls),
    });

    expect(calls.sort()).toEqual(['convert_temperature:21', 'get_weather:Paris', 'get_weather:Zürich']);
    expect(result.steps).toHaveLength(3);
    expect(result.finishReason).toBe('stop');
    expect(result.text).toContain('Zürich at 21 °C, which is 69.8 °F');
    expect(result.messages.filter((m) => m.role === 'tool')).toHaveLength(3);
    const sum = result.steps.reduce((total, step) => total + (step.usage?.total_tokens ?? 0), 0);
    expect(result.usage?.total_tokens).toBe(sum);
  });

  it('streams the loop with step-tagged events', async () => {
    model = await startMockModel({ script: agentScript });
    const client = new Ai4ts({ baseURL: model.baseURL, apiKey: 'test', maxRetries: 0 });
    const stream = client.chat.stream({
      model: 'mock-model',
      messages: [{ role: 'user', content: agentQuestion }],
      tools: agentTools([]),
    });
    const results: string[] = [];
    for await (const event of stream) if (event.type === 'tool.result') results.push(`${event.step}:${event.name}`);
    expect(results.sort()).toEqual(['1:get_weather', '1:get_weather', '2:convert_temperature']);
    expect((await stream.final()).steps).toHaveLength(3);
  });

  it('makes a plain request when there are no defineTool tools', async () => {
    model = await startMockModel({ script: [{ content: 'Hi.' }, { content: 'Hello.' }] });
    const client = createClient({ baseURL: model.baseURL, apiKey: 'test', maxRetries: 0 });
    const completion = await client.chat.create({ model: 'mock-model', messages: [{ role: 'user', content: 'Hi' }] });
    expect(completion.choices[0]?.message.content).toBe('Hi.');
    const stream = client.chat.stream({ model: 'mock-model', messages: [{ role: 'user', content: 'Hi' }] });
    expect(stream).toBeInstanceOf(ChatStream);
    expect((await stream.final()).choices[0]?.message.content).toBe('Hello.');
  });
});

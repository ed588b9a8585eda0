/** `client.gemini` behind the front door, against the scripted Gemini: one rule for plain calls and tool loops. */
import { agentQuestion, agentScript, type MockModel, startMockModel } from '@ai4ts/testing';
import { Ai4ts, defineTool } from 'ai4ts';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';

let model: MockModel | undefined;
afterEach(async () => {
  await model?.close();
  model = undefined;
});

const tools = [
  defineTool({
    name: 'get_weather',
    parameters: z.object({ city: z.string() }),
    execute: ({ city }) => ({ city, temperature: city === 'Paris' ? 18 : 21, unit: 'celsius' }),
  }),
  defineTool({
    name: 'convert_temperature',
    parameters: z.object({ value: z.number(), from: z.string(), to: z.string() }),
    execute: ({ value }) => Math.round(((value * 9) / 5 + 32) * 10) / 10,
  }),
];

describe('client.gemini', () => {
  it('a plain create, then the agent tool loop in three steps, with middleware seeing protocol gemini', async () => {
    model = await startMockModel({
      script: (body, context) => (Array.isArray(body.tools) ? agentScript(body, context) : { content: 'Hi from Gemini' }),
    });
    const client = new Ai4ts({ provider: 'gemini', baseURL: model.geminiBaseURL, apiKey: 'AIza-test' });
    const protocols: string[] = [];
    client.use(async (ctx, next) => {
      protocols.push(ctx.protocol);
      return next();
    });
    const plain = await client.gemini.create({ model: 'gemini-2.5-flash', contents: [{ role: 'user', parts: [{ text: 'Hi' }] }] });
    expect(plain.candidates?.[0]?.content?.parts[0]?.text).toBe('Hi from Gemini');
    const result = await client.gemini.create({
      model: 'gemini-3-pro-preview',
      contents: [{ role: 'user', parts: [{ text: agentQuestion }] }],
      tools,
      maxSteps: 5,
    });
    expect(result.steps).toHaveLength(3);
    expect(result.text).toBe('Right now it is Paris: 18 °C, Zürich: 21 °C. The warmer city is Zürich at 21 °C, which is 69.8 °F.');
    expect(protocols).toEqual(['gemini', 'gemini', 'gemini', 'gemini']);
    // The transcript alternates user and model turns, every model turn with the signature it came with.
    expect(result.messages.map((content) => content.role)).toEqual(['user', 'model', 'user', 'model', 'user', 'model']);
  });
});

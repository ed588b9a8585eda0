/** `client.gemini` behind the front door, against the scripted Gemini: one rule for plain calls and tool loops. */
import { agentQuestion, agentScript, type MockModel, startMockModel } from '@ai4ts/testing';
import { Ai4ts, } from 'ai4ts';
import { afterEach, describe, expect, it } from 'vitest';
import { AGENT_ANSWER, AGENT_TOOLS } from './agent-tools.js';

let model: MockModel | undefined;
afterEach(async () => {
  await model?.close();
  model = undefined;
});

const tools = AGENT_TOOLS;

describe('client.gemini', () => {
  it('a plain create, then the agent tool loop in three steps, with middleware seeing protocol gemini', async () => {
    model = await startMockModel({
      script: (body, context) => (Array.isArray(body.tools) ? agentScript(body, context) : { content: 'Hi from Gemini' }),
    });
    const client = new Ai4ts({ provider: 'gemini', baseURL: model.geminiBaseURL, apiKey: 'AIza-test' });
    const protocols: string[] = [];
    const models: unknown[] = [];
    client.use(async (ctx, next) => {
      protocols.push(ctx.protocol);
      if (ctx.protocol === 'gemini') models.push(ctx.request.model);
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
    expect(result.text).toBe(AGENT_ANSWER);
    expect(protocols).toEqual(['gemini', 'gemini', 'gemini', 'gemini']);
    // Middleware sees the model (a cache keys on it); the API gets it in the URL only.
    expect(models).toEqual(['gemini-2.5-flash', 'gemini-3-pro-preview', 'gemini-3-pro-preview', 'gemini-3-pro-preview']);
    expect(model.requests.map((request) => request.path)).toEqual([
      '/v1beta/models/gemini-2.5-flash:generateContent',
      '/v1beta/models/gemini-3-pro-preview:streamGenerateContent',
      '/v1beta/models/gemini-3-pro-preview:streamGenerateContent',
      '/v1beta/models/gemini-3-pro-preview:streamGenerateContent',
    ]);
    expect(model.requests.every((request) => (request.body as Record<string, unknown>).model === undefined)).toBe(true);
    // The transcript alternates user and model turns, every model turn with the signature it came with.
    expect(result.messages.map((content) => content.role)).toEqual(['user', 'model', 'user', 'model', 'user', 'model']);
  });

  it('a middleware that changes the model changes the URL', async () => {
    model = await startMockModel({ script: [{ content: 'ok' }] });
    const client = new Ai4ts({ provider: 'gemini', baseURL: model.geminiBaseURL, apiKey: 'AIza-test' });
    client.use(async (ctx, next) => {
      if (ctx.protocol === 'gemini') ctx.request = { ...ctx.request, model: 'gemini-2.5-pro' };
      return next();
    });
    await client.gemini.create({ model: 'gemini-2.5-flash', contents: [{ role: 'user', parts: [{ text: 'Hi' }] }] });
    expect(model.requests[0]?.path).toBe('/v1beta/models/gemini-2.5-pro:generateContent');
  });
});

/** GeminiService and the tool loop over HTTP, against @ai4ts/testing's scripted Gemini on 127.0.0.1. */
import { ApiError, defineTool, StreamIncompleteError, Transport } from '@ai4ts/core';
import { type MockModel, type MockScript, startMockModel } from '@ai4ts/testing';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import {
  type Content,
  type GeminiLoopRequest,
  GeminiService,
  PromptBlockedError,
  runGeminiToolLoop,
  streamGeminiToolLoop,
} from '../src/index.js';

let model: MockModel | undefined;
afterEach(async () => {
  await model?.close();
  model = undefined;
});

async function start(script: MockScript): Promise<GeminiService> {
  model = await startMockModel({ script });
  return new GeminiService(
    new Transport({ provider: 'gemini', apiKey: 'AIza-local-key', baseURL: model.geminiBaseURL, maxRetries: 0 }),
  );
}

const user = (text: string): Content[] => [{ role: 'user', parts: [{ text }] }];

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

describe('GeminiService', () => {
  it('create: the model in the URL, the key as x-goog-api-key, not in the body', async () => {
    const gemini = await start([{ content: 'Hello there!' }]);
    const response = await gemini.create({ model: 'gemini-2.5-flash', contents: user('Hi') });
    expect(response.candidates?.[0]?.content?.parts).toEqual([{ text: 'Hello there!' }]);
    expect(response.candidates?.[0]?.finishReason).toBe('STOP');
    const [sent] = model?.requests ?? [];
    expect(sent?.path).toBe('/v1beta/models/gemini-2.5-flash:generateContent');
    expect(sent?.headers['x-goog-api-key']).toBe('AIza-local-key');
    expect(sent?.headers.authorization).toBeUndefined();
    expect(sent?.body).toEqual({ contents: user('Hi') });
  });

  it('stream: streamGenerateContent?alt=sse, text, thoughts and usage folded', async () => {
    const gemini = await start([{ reasoning: 'Let me think.', content: 'The answer is 42.' }]);
    const stream = gemini.stream({
      model: 'gemini-2.5-pro',
      contents: user('What is it?'),
      generationConfig: { thinkingConfig: { includeThoughts: true } },
    });
    let text = '';
    let reasoning = '';
    const finishes: string[] = [];
    for await (const event of stream) {
      if (event.type === 'content') text += event.delta;
      if (event.type === 'reasoning') reasoning += event.delta;
      if (event.type === 'finish') finishes.push(event.finishReason);
    }
    const response = await stream.final();
    expect(text).toBe('The answer is 42.');
    expect(reasoning).toBe('Let me think.');
    expect(finishes).toEqual(['stop']);
    const parts = response.candidates?.[0]?.content?.parts ?? [];
    expect(parts[0]).toEqual({ text: 'Let me think.', thought: true });
    // The signature came on an empty chunk after the text: it stays on the text part it ends.
    expect(parts[1]).toMatchObject({ text: 'The answer is 42.', thoughtSignature: expect.any(String) });
    expect(response.usageMetadata?.totalTokenCount).toBeGreaterThan(0);
    const sent = model?.requests[0];
    expect(sent?.path).toBe('/v1beta/models/gemini-2.5-pro:streamGenerateContent');
  });

  it('a blocked prompt is a PromptBlockedError, streamed or not', async () => {
    const gemini = await start([{ blockReason: 'SAFETY' }, { blockReason: 'PROHIBITED_CONTENT' }]);
    const created = await gemini.create({ model: 'gemini-2.5-flash', contents: user('bad') }).catch((e: unknown) => e);
    expect(created).toBeInstanceOf(PromptBlockedError);
    expect((created as PromptBlockedError).blockReason).toBe('SAFETY');
    const streamed = await gemini.stream({ model: 'gemini-2.5-flash', contents: user('bad') }).final().catch((e: unknown) => e);
    expect(streamed).toBeInstanceOf(PromptBlockedError);
    expect((streamed as PromptBlockedError).blockReason).toBe('PROHIBITED_CONTENT');
  });

  it('an in-stream error is an ApiError with the Google status as its code, the text so far its partial, the key nowhere', async () => {
    const gemini = await start([{ content: 'Partial answer', streamError: { message: 'overloaded', type: 'UNAVAILABLE' } }]);
    const error = await gemini.stream({ model: 'gemini-2.5-flash', contents: user('Hi') }).final().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).code).toBe('UNAVAILABLE');
    const partial = (error as ApiError).partial as { candidates: { content: Content }[] };
    expect(partial.candidates[0]?.content.parts[0]?.text).toBe('Partial answer');
    expect(JSON.stringify(error)).not.toContain('AIza-local-key');
  });

  it("an in-stream UNAVAILABLE before any output is sent again (Google's status names are retryable codes)", async () => {
    model = await startMockModel({
      script: [{ content: '', streamError: { message: 'overloaded', type: 'UNAVAILABLE' } }, { content: 'Second try' }],
    });
    const transport = new Transport({ provider: 'gemini', apiKey: 'AIza-local-key', baseURL: model.geminiBaseURL, maxRetries: 1 });
    const stream = new GeminiService(transport).stream({ model: 'gemini-2.5-flash', contents: user('Hi') });
    const retries: unknown[] = [];
    stream.on('retry', (event) => retries.push(event.error));
    const result = await stream.final();
    expect(result.candidates?.[0]?.content?.parts[0]?.text).toBe('Second try');
    // In a stream that began with HTTP 200 there is no HTTP status: the error is told by its code.
    expect(retries).toEqual([expect.objectContaining({ code: 'UNAVAILABLE', status: undefined })]);
    expect(model.requests).toHaveLength(2);
  });

  it('a stream cut before the finishReason is a StreamIncompleteError with the text so far', async () => {
    const gemini = await start([{ content: 'Cut here please', cutOff: { afterChunks: -1 } }]);
    const error = await gemini.stream({ model: 'gemini-2.5-flash', contents: user('Hi') }).final().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StreamIncompleteError);
    const partial = (error as StreamIncompleteError).partial as { candidates: { content: Content }[] };
    expect(partial.candidates[0]?.content.parts[0]?.text).toBe('Cut here please');
  });

  it('an HTTP error in Google\'s shape is typed', async () => {
    const gemini = await start([{ httpError: { status: 429 } }]);
    const error = await gemini.create({ model: 'gemini-2.5-flash', contents: user('Hi') }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(429);
  });

  it('structured output: responseJsonSchema, the object validated', async () => {
    const gemini = await start([{ object: { city: 'Paris', celsius: 18 } }]);
    const result = await gemini.create({
      model: 'gemini-2.5-flash',
      contents: user('Weather?'),
      output: z.object({ city: z.string(), celsius: z.number() }),
    });
    expect(result.object).toEqual({ city: 'Paris', celsius: 18 });
    const body = model?.requests[0]?.body as { generationConfig: Record<string, unknown> };
    expect(body.generationConfig.responseMimeType).toBe('application/json');
    expect(body.generationConfig.responseJsonSchema).toMatchObject({ type: 'object', required: ['city', 'celsius'] });
  });
});

describe('the Gemini tool loop', () => {
  const loopRequest = (tools: GeminiLoopRequest['tools'], modelName = 'gemini-3-pro-preview'): GeminiLoopRequest => ({
    model: modelName,
    contents: user('Weather in Paris and Rome?'),
    tools,
    generationConfig: { thinkingConfig: { includeThoughts: true } },
  });

  it('runs two steps on Gemini 3: the model turn goes back exactly as received, signatures and thoughts included', async () => {
    const { tool, ran } = weatherTool();
    const gemini = await start([
      {
        reasoning: 'I need both cities.',
        toolCalls: [
          { name: 'get_weather', arguments: { city: 'Paris' } },
          { name: 'get_weather', arguments: { city: 'Rome' } },
        ],
      },
      { reasoning: 'Rome is warmer.', content: 'Rome is warmer: 24 °C.' },
    ]);
    const result = await gemini.runLoop(loopRequest([tool]));
    expect(ran).toEqual(['Paris', 'Rome']);
    expect(result.text).toBe('Rome is warmer: 24 °C.');
    expect(result.steps).toHaveLength(2);
    const first = result.steps[0]?.completion.candidates?.[0]?.content?.parts;
    const second = model?.requests[1]?.body as { contents: Content[]; tools: unknown[] };
    // The model turn as received (thought part, the signature on the first call), but the stream's closing empty
    // text part, which the API rejects ("empty text parameter"); then the responses by name.
    expect(first?.at(-1)).toEqual({ text: '' });
    expect(second.contents[1]).toEqual({ role: 'model', parts: first?.slice(0, -1) });
    expect(second.contents[1]?.parts[1]?.thoughtSignature).toEqual(expect.any(String));
    expect(second.contents[2]).toEqual({
      role: 'user',
      parts: [
        { functionResponse: { name: 'get_weather', response: { output: '{"city":"Paris","celsius":18}' } } },
        { functionResponse: { name: 'get_weather', response: { output: '{"city":"Rome","celsius":24}' } } },
      ],
    });
    expect(second.tools).toEqual([
      {
        functionDeclarations: [
          { name: 'get_weather', description: 'Current weather of a city', parametersJsonSchema: expect.any(Object) },
        ],
      },
    ]);
  });

  it('sends the API\'s call ids back on the functionResponse', async () => {
    const { tool } = weatherTool();
    const gemini = await start([
      { toolCalls: [{ id: 'fc-7', name: 'get_weather', arguments: { city: 'Paris' } }] },
      { content: 'Done.' },
    ]);
    await gemini.runLoop(loopRequest([tool], 'gemini-2.5-flash'));
    const second = model?.requests[1]?.body as { contents: Content[] };
    expect(second.contents[2]?.parts[0]?.functionResponse).toMatchObject({ id: 'fc-7', name: 'get_weather' });
  });

  it('streams a loop, and passes calls through when asked', async () => {
    const { tool, ran } = weatherTool();
    const gemini = await start([{ toolCalls: [{ name: 'get_weather', arguments: { city: 'Rome' } }] }]);
    const stream = streamGeminiToolLoop(gemini.transport, { ...loopRequest([tool]), passThroughToolCalls: true });
    const names: string[] = [];
    for await (const event of stream) if (event.type === 'tool_call.done') names.push(event.name);
    const result = await stream.final();
    expect(names).toEqual(['get_weather']);
    expect(ran).toEqual([]);
    expect(result.finishReason).toBe('tool_calls');
    expect(result.steps[0]?.toolCalls[0]).toMatchObject({ name: 'get_weather', arguments: '{"city":"Rome"}' });
  });

  it('the scripted Gemini 3 rejects a model turn whose function call lost its signature', async () => {
    const gemini = await start([{ content: 'never' }]);
    const contents: Content[] = [
      ...user('Weather?'),
      { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }] },
      { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { output: '18' } } }] },
    ];
    const error = await runGeminiToolLoop(gemini.transport, { model: 'gemini-3-pro-preview', contents }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).message).toContain('thought_signature');
  });

  it('the scripted model rejects a functionResponse without its call', async () => {
    const gemini = await start([{ content: 'never' }]);
    const contents: Content[] = [
      ...user('Weather?'),
      { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { output: '18' } } }] },
    ];
    const error = await gemini.create({ model: 'gemini-2.5-flash', contents }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).message).toContain('function response turn comes immediately after a function call turn');
  });
});

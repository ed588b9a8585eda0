/**
 * The front door's one rule, over the four protocols: what runs (loop or plain) is decided by the request alone,
 * the types say the same, loop fields and empty tools never reach the wire, and per-request options apply in both
 * modes.
 */
import { type MockModel, startMockModel } from '@ai4ts/testing';
import {
  Ai4ts,
  type ChatCompletion,
  ChatStream,
  type ChatToolLoopResult,
  defineTool,
  GeminiStream,
  type GeminiToolLoopResult,
  type GeminiToolLoopStream,
  type GenerateContentResponse,
  type Message,
  MessagesStream,
  type MessagesToolLoopResult,
  type ResponseObject,
  type ResponsesToolLoopStream,
  ResponsesStream,
  ToolLoopStream,
} from 'ai4ts';
import { afterEach, describe, expect, expectTypeOf, it } from 'vitest';
import * as z from 'zod';

const echo = defineTool({ name: 'echo', parameters: z.object({ text: z.string() }), execute: ({ text }) => text });

let model: MockModel | undefined;
afterEach(async () => {
  await model?.close();
  model = undefined;
});

async function client(turns = 4): Promise<Ai4ts> {
  model = await startMockModel({ script: Array.from({ length: turns }, () => ({ content: 'Hi.' })) });
  return new Ai4ts({ provider: 'openai-compatible', baseURL: model.baseURL, apiKey: 'k', maxRetries: 0 });
}

/** A Gemini client of a scripted model of `turns` answers. */
async function geminiClient(turns = 4): Promise<Ai4ts> {
  model = await startMockModel({ script: Array.from({ length: turns }, () => ({ content: 'Hi.' })) });
  return new Ai4ts({ provider: 'gemini', baseURL: model.geminiBaseURL, apiKey: 'k', maxRetries: 0 });
}

const chatRequest = { model: 'mock-model', messages: [{ role: 'user' as const, content: 'Hi' }] };
const responsesRequest = { model: 'mock-model', input: 'Hi' };
const messagesRequest = { model: 'mock-model', max_tokens: 64, messages: [{ role: 'user' as const, content: 'Hi' }] };
const geminiRequest = { model: 'mock-model', contents: [{ role: 'user' as const, parts: [{ text: 'Hi' }] }] };

describe('the overloads type what runs', () => {
  it('plain requests give the protocol’s result and stream; loop requests the loop’s', async () => {
    const c = await client(12);
    // Plain, even with an empty tools array: the protocol's own types, and the same at run time.
    const completion = c.chat.create({ ...chatRequest, tools: [] });
    expectTypeOf(completion).toEqualTypeOf<Promise<ChatCompletion>>();
    expect((await completion).object).toBe('chat.completion');
    const response = c.responses.create(responsesRequest);
    expectTypeOf(response).toEqualTypeOf<Promise<ResponseObject>>();
    expect((await response).object).toBe('response');
    const message = c.messages.create(messagesRequest);
    expectTypeOf(message).toEqualTypeOf<Promise<Message>>();
    expect((await message).type).toBe('message');

    const chatStream = c.chat.stream(chatRequest, { idleTimeout: 5_000 });
    expectTypeOf(chatStream).toEqualTypeOf<ChatStream>();
    expect(chatStream).toBeInstanceOf(ChatStream);
    const responseStream = c.responses.stream(responsesRequest, { idleTimeout: 5_000 });
    expectTypeOf(responseStream).toEqualTypeOf<ResponsesStream>();
    expect(responseStream).toBeInstanceOf(ResponsesStream);
    const messageStream = c.messages.stream(messagesRequest, { idleTimeout: 5_000 });
    expectTypeOf(messageStream).toEqualTypeOf<MessagesStream>();
    expect(messageStream).toBeInstanceOf(MessagesStream);
    await Promise.all([chatStream.final(), responseStream.final(), messageStream.final()]);

    // A defineTool tool or a loop field runs the loop: typed as the loop, whatever the second argument.
    const looped = c.chat.create({ ...chatRequest, tools: [echo] }, { idleTimeout: 5_000 });
    expectTypeOf(looped).toEqualTypeOf<Promise<ChatToolLoopResult>>();
    expect((await looped).steps).toHaveLength(1);
    const stepped = c.responses.stream({ ...responsesRequest, maxSteps: 2 }, { headers: { 'x-a': '1' } });
    expectTypeOf(stepped).toEqualTypeOf<ResponsesToolLoopStream>();
    expect(stepped).toBeInstanceOf(ToolLoopStream);
    expect((await stepped.final()).text).toBe('Hi.');
    const passthrough = c.messages.create({ ...messagesRequest, passThroughToolCalls: true });
    expectTypeOf(passthrough).toEqualTypeOf<Promise<MessagesToolLoopResult>>();
    expect((await passthrough).finishReason).toBe('stop');
  });

  it('the request alone decides the type, whatever the second argument', () => {
    // Typed only: these functions are never called.
    const c = new Ai4ts({ provider: 'openai-compatible', baseURL: 'http://127.0.0.1:9', apiKey: 'k' });
    const withTool = () => c.chat.stream({ ...chatRequest, tools: [echo] }, { idleTimeout: 100 });
    expectTypeOf(withTool).returns.not.toEqualTypeOf<ChatStream>();
    expectTypeOf(withTool).returns.toHaveProperty('final').returns.toEqualTypeOf<Promise<ChatToolLoopResult>>();
    const withSteps = () => c.messages.create({ ...messagesRequest, maxSteps: 3 }, { timeout: 100 });
    expectTypeOf(withSteps).returns.toEqualTypeOf<Promise<MessagesToolLoopResult>>();
    const wireTool = { type: 'function' as const, function: { name: 'x', parameters: {} } };
    const withWireTool = () => c.chat.create({ ...chatRequest, tools: [wireTool] });
    expectTypeOf(withWireTool).returns.toEqualTypeOf<Promise<ChatCompletion>>();
    expect(typeof withTool).toBe('function');
  });
});

describe('the wire', () => {
  it('loop fields and empty tools never reach the wire, in loop and in plain mode, for every protocol', async () => {
    const c = await client(6);
    const hooks = { maxSteps: 2, concurrency: 1, onStepFinish: () => {}, onToolCall: () => undefined, prepareStep: () => undefined };
    await c.chat.create({ ...chatRequest, tools: [] });
    await c.chat.create({ ...chatRequest, ...hooks });
    await c.responses.create({ ...responsesRequest, tools: [] });
    await c.responses.create({ ...responsesRequest, ...hooks });
    await c.messages.create({ ...messagesRequest, tools: [] });
    await c.messages.create({ ...messagesRequest, ...hooks, passThroughToolCalls: false });
    const bodies = (model?.requests ?? []).map((request) => request.body);
    expect(bodies).toHaveLength(6);
    for (const body of bodies) {
      expect(Object.keys(body as object).sort()).toEqual(
        expect.not.arrayContaining(['tools', 'maxSteps', 'passThroughToolCalls', 'concurrency', 'onStepFinish', 'onToolCall', 'prepareStep']),
      );
    }
  });

  it('per-request options apply to every step of a loop as to a plain call', async () => {
    const c = await client(6);
    const options = { headers: { 'x-trace': 't-1' }, extraBody: { user: 'u-1' } };
    await c.chat.create({ ...chatRequest, maxSteps: 1 }, options);
    await c.chat.create(chatRequest, options);
    await c.responses.create({ ...responsesRequest, maxSteps: 1 }, options);
    await c.responses.create(responsesRequest, options);
    await c.messages.create({ ...messagesRequest, maxSteps: 1 }, options);
    await c.messages.create(messagesRequest, options);
    for (const request of model?.requests ?? []) {
      expect(request.headers['x-trace']).toBe('t-1');
      expect(request.body).toMatchObject({ user: 'u-1' });
    }
  });

  it('a loop’s signal aborts it; a plain stream’s signal aborts it', async () => {
    const c = await client();
    const controller = new AbortController();
    controller.abort(new Error('stop'));
    await expect(c.chat.create({ ...chatRequest, tools: [echo] }, { signal: controller.signal })).rejects.toMatchObject({
      name: 'AbortError',
    });
    await expect(c.messages.stream(messagesRequest, { signal: controller.signal }).final()).rejects.toMatchObject({
      name: 'AbortError',
    });
  });
});

describe('Gemini through the front door', () => {
  it('the request alone decides plain or loop, typed and at run time', async () => {
    const c = await geminiClient(6);
    const response = c.gemini.create({ ...geminiRequest, tools: [] });
    expectTypeOf(response).toEqualTypeOf<Promise<GenerateContentResponse>>();
    expect((await response).candidates?.[0]?.content?.parts[0]?.text).toBe('Hi.');
    const stream = c.gemini.stream(geminiRequest, { idleTimeout: 5_000 });
    expectTypeOf(stream).toEqualTypeOf<GeminiStream>();
    expect(stream).toBeInstanceOf(GeminiStream);
    await stream.final();
    const looped = c.gemini.create({ ...geminiRequest, tools: [echo] }, { idleTimeout: 5_000 });
    expectTypeOf(looped).toEqualTypeOf<Promise<GeminiToolLoopResult>>();
    expect((await looped).steps).toHaveLength(1);
    const stepped = c.gemini.stream({ ...geminiRequest, maxSteps: 2 }, { headers: { 'x-a': '1' } });
    expectTypeOf(stepped).toEqualTypeOf<GeminiToolLoopStream>();
    expect(stepped).toBeInstanceOf(ToolLoopStream);
    expect((await stepped.final()).text).toBe('Hi.');
  });

  it('loop fields and empty tools never reach the wire; per-request options apply to every step as to a plain call', async () => {
    const c = await geminiClient(6);
    const hooks = { maxSteps: 2, concurrency: 1, onStepFinish: () => {}, onToolCall: () => undefined, prepareStep: () => undefined };
    // `labels` is a field the API knows (the scripted server refuses unknown ones, as the API does).
    const options = { headers: { 'x-trace': 't-1' }, extraBody: { labels: { team: 'a' } } };
    await c.gemini.create({ ...geminiRequest, tools: [] }, options);
    await c.gemini.create({ ...geminiRequest, ...hooks }, options);
    await c.gemini.create({ ...geminiRequest, passThroughToolCalls: false, maxSteps: 1 }, options);
    const requests = model?.requests ?? [];
    expect(requests).toHaveLength(3);
    for (const request of requests) {
      expect(Object.keys(request.body as object).sort()).toEqual(['contents', 'labels']);
      expect(request.headers['x-trace']).toBe('t-1');
    }
  });
});

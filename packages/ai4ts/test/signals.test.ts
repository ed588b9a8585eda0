/**
 * A long-lived signal (an app-wide one passed to every call) keeps nothing of the calls it was given to: after each
 * kind of call it has no listener left, and it was never handed to `AbortSignal.any`, of which Node keeps a record
 * for as long as the source lives (so each call used to leave ~200 bytes behind on Node 22, ~60 on Node 20).
 */
import { getEventListeners } from 'node:events';
import { type MockModel, startMockModel } from '@ai4ts/testing';
import { Ai4ts, defineTool } from 'ai4ts';
import { afterEach, describe, expect, it, vi } from 'vitest';
import * as z from 'zod';

const echo = defineTool({ name: 'echo', parameters: z.object({ text: z.string() }), execute: ({ text }) => text });
const chatRequest = { model: 'mock-model', messages: [{ role: 'user' as const, content: 'Hi' }] };
const responsesRequest = { model: 'mock-model', input: 'Hi' };
const messagesRequest = { model: 'mock-model', max_tokens: 64, messages: [{ role: 'user' as const, content: 'Hi' }] };
const geminiRequest = { model: 'mock-model', contents: [{ role: 'user' as const, parts: [{ text: 'Hi' }] }] };

let model: MockModel | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  await model?.close();
  model = undefined;
});

const calls: Array<[string, (ai: Ai4ts, signal: AbortSignal) => Promise<unknown>]> = [
  ['chat create', (ai, signal) => ai.chat.create(chatRequest, { signal })],
  ['chat stream', (ai, signal) => ai.chat.stream(chatRequest, { signal }).final()],
  ['chat tool loop', (ai, signal) => ai.chat.create({ ...chatRequest, tools: [echo] }, { signal })],
  ['responses create', (ai, signal) => ai.responses.create(responsesRequest, { signal })],
  ['responses stream', (ai, signal) => ai.responses.stream(responsesRequest, { signal }).final()],
  ['messages create', (ai, signal) => ai.messages.create(messagesRequest, { signal })],
  ['messages stream', (ai, signal) => ai.messages.stream(messagesRequest, { signal }).final()],
  ['gemini create', (ai, signal) => ai.gemini.create(geminiRequest, { signal })],
  ['gemini stream', (ai, signal) => ai.gemini.stream(geminiRequest, { signal }).final()],
  ['gemini tool loop', (ai, signal) => ai.gemini.create({ ...geminiRequest, tools: [echo] }, { signal })],
  ['embeddings create', (ai, signal) => ai.embeddings.create({ model: 'e', input: 'Hi' }, { signal })],
  ['embeddings embedMany', (ai, signal) => ai.embeddings.embedMany(['a', 'b', 'c'], { model: 'e', batchSize: 1, signal })],
  ['rerank', (ai, signal) => ai.rerank({ model: 'r', query: 'Hi', documents: ['a', 'b'] }, { signal })],
];

describe('a long-lived signal', () => {
  it.each(calls)('%s: no listener is left on it and it never goes to AbortSignal.any', async (name, call) => {
    model = await startMockModel({ script: Array.from({ length: 4 }, () => ({ content: 'Hi.' })) });
    const ai = name.startsWith('gemini')
      ? new Ai4ts({ provider: 'gemini', baseURL: model.geminiBaseURL, apiKey: 'k', maxRetries: 0 })
      : new Ai4ts({ provider: 'openai-compatible', baseURL: model.baseURL, apiKey: 'k', maxRetries: 0 });
    const app = new AbortController();
    const any = vi.spyOn(AbortSignal, 'any');
    for (let i = 0; i < 3; i++) await call(ai, app.signal);
    expect(getEventListeners(app.signal, 'abort')).toHaveLength(0);
    expect(any.mock.calls.filter(([signals]) => [...signals].includes(app.signal))).toHaveLength(0);
    expect(any).toHaveBeenCalled(); // ky still combines its own signals: the spy saw the calls
  });
});

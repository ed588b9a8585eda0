/**
 * Structured output on the plain services (`ChatService`, `ResponsesService`, `MessagesService`, `GeminiService`): `create` and
 * `stream` with `output` read the answer as the loop's one step does, against @ai4ts/testing's server (real HTTP).
 */
import { ChatService } from '@ai4ts/chat';
import { OutputRefusalError, OutputValidationError, Transport } from '@ai4ts/core';
import { GeminiService } from '@ai4ts/gemini';
import { MessagesService } from '@ai4ts/messages';
import { ResponsesService } from '@ai4ts/responses';
import { type MockModel, type MockScript, startMockModel } from '@ai4ts/testing';
import { afterEach, describe, expect, expectTypeOf, it } from 'vitest';
import * as z from 'zod';

const City = z
  .object({ name: z.string(), country: z.string(), sights: z.array(z.string()).default([]) })
  .meta({ title: 'city' });
type City = z.infer<typeof City>;

const ANSWER = { name: 'Zürich', country: 'CH', sights: ['Grossmünster', 'See "Zürichsee"'] };
const QUESTION = 'Tell me about Zürich';

let model: MockModel | undefined;
afterEach(async () => {
  await model?.close();
  model = undefined;
});

async function transport(script: MockScript, protocol?: string): Promise<Transport> {
  model = await startMockModel({ script, seed: 5 });
  if (protocol === 'gemini') return new Transport({ provider: 'gemini', baseURL: model.geminiBaseURL, apiKey: 'test-key', maxRetries: 0 });
  return new Transport({ provider: 'openai-compatible', baseURL: model.baseURL, apiKey: 'test-key', maxRetries: 0 });
}

function bodies(): Record<string, unknown>[] {
  return (model?.requests ?? []).filter((r) => r.method === 'POST').map((r) => r.body as Record<string, unknown>);
}

async function rejection<E>(promise: Promise<unknown>, type: abstract new (...args: never[]) => E): Promise<E> {
  const thrown = await promise.then(
    () => undefined,
    (error: unknown) => error,
  );
  if (!(thrown instanceof type)) throw new Error(`expected a rejection with ${type.name}, got ${String(thrown)}`);
  return thrown;
}

/** The structured part of each protocol's wire body. */
const FORMAT = {
  chat: { response_format: { type: 'json_schema', json_schema: expect.objectContaining({ name: 'city', strict: true }) } },
  responses: { text: { format: expect.objectContaining({ type: 'json_schema', name: 'city', strict: true }) } },
  messages: { tool_choice: { type: 'tool', name: 'city' } },
  gemini: { generationConfig: { responseMimeType: 'application/json', responseJsonSchema: expect.objectContaining({ title: 'city' }) } },
};

/** One plain create and one plain stream with `output`, per protocol, typed by the services' overloads. */
const services = {
  chat: (t: Transport) => {
    const service = new ChatService(t);
    const request = { model: 'mock-model', messages: [{ role: 'user' as const, content: QUESTION }], output: City };
    return { create: () => service.create(request), stream: () => service.stream(request) };
  },
  responses: (t: Transport) => {
    const service = new ResponsesService(t);
    const request = { model: 'mock-model', input: QUESTION, output: City };
    return { create: () => service.create(request), stream: () => service.stream(request) };
  },
  messages: (t: Transport) => {
    const service = new MessagesService(t);
    const request = { model: 'mock-model', max_tokens: 300, messages: [{ role: 'user' as const, content: QUESTION }], output: City };
    return { create: () => service.create(request), stream: () => service.stream(request) };
  },
  gemini: (t: Transport) => {
    const service = new GeminiService(t);
    const request = { model: 'mock-model', contents: [{ role: 'user' as const, parts: [{ text: QUESTION }] }], output: City };
    return { create: () => service.create(request), stream: () => service.stream(request) };
  },
};

describe.each(['chat', 'responses', 'messages', 'gemini'] as const)('%s service with output', (protocol) => {
  it('create: one request asking for the schema, resolving to the validated, typed object', async () => {
    const { create } = services[protocol](await transport([{ object: { name: 'Bern', country: 'CH' } }], protocol));
    const result = await create();
    expectTypeOf(result.object).toEqualTypeOf<City>();
    expect(result.object).toEqual({ name: 'Bern', country: 'CH', sights: [] });
    expect(result.steps).toHaveLength(1);
    expect(result.finishReason).toBe('stop');
    expect(bodies()).toHaveLength(1);
    expect(bodies()[0]).toMatchObject(FORMAT[protocol]);
    expect(bodies()[0]).not.toHaveProperty('output');
  });

  it('stream: object events growing to the answer, and final() with the typed object', async () => {
    const { stream } = services[protocol](await transport([{ object: ANSWER }], protocol));
    const handle = stream();
    const objects: unknown[] = [];
    for await (const event of handle) {
      if (event.type === 'object') {
        expectTypeOf(event.object).toEqualTypeOf<{ name?: string; country?: string; sights?: string[] }>();
        objects.push(event.object);
      }
    }
    expect(objects.length).toBeGreaterThan(2);
    expect(objects[0]).toEqual({});
    expect(objects.at(-1)).toEqual(ANSWER);
    const { object } = await handle.final();
    expectTypeOf(object).toEqualTypeOf<City>();
    expect(object).toEqual(ANSWER);
  });

  it('a refusal rejects with OutputRefusalError', async () => {
    const { create } = services[protocol](await transport([{ refusal: 'No.' }], protocol));
    const error = await rejection(create(), OutputRefusalError);
    expect(error.refusal).toBe('No.');
  });

  it('an invalid answer rejects with OutputValidationError after one request (repair needs the loop)', async () => {
    const { create } = services[protocol](await transport([{ object: { name: 'Bern' } }, { object: ANSWER }], protocol));
    const error = await rejection(create(), OutputValidationError);
    expect(error.issues.map((issue) => issue.path)).toEqual([['country']]);
    expect(JSON.parse(error.text)).toEqual({ name: 'Bern' });
    expect(bodies()).toHaveLength(1);
  });
});

describe('plain services without output', () => {
  it('create still resolves to the protocol result as sent', async () => {
    const service = new ChatService(await transport([{ content: 'hi' }]));
    const completion = await service.create({ model: 'mock-model', messages: [{ role: 'user', content: 'Hi' }] });
    expectTypeOf(completion.object).toEqualTypeOf<'chat.completion'>();
    expect(completion.choices[0]?.message.content).toBe('hi');
  });
});

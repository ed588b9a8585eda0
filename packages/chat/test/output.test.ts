import { runChatToolLoop, streamChatToolLoop } from '@ai4ts/chat';
import {
  defineTool,
  OutputRefusalError,
  OutputValidationError,
  type ToolLoopPartial,
  Transport,
  type TransportOptions,
} from '@ai4ts/core';
import { type MockModel, type MockScript, startMockModel } from '@ai4ts/testing';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';

let model: MockModel | undefined;
afterEach(async () => {
  await model?.close();
  model = undefined;
});

async function start(script: MockScript, options: TransportOptions = {}): Promise<Transport> {
  model = await startMockModel({ script });
  return new Transport({ baseURL: model.baseURL, apiKey: 'test', maxRetries: 0, ...options });
}

function bodies(): Record<string, unknown>[] {
  return (model?.requests ?? []).filter((r) => r.path.endsWith('/chat/completions')).map((r) => r.body as Record<string, unknown>);
}

const Recipe = z
  .object({
    title: z.string(),
    servings: z.number().int().default(2),
    steps: z.array(z.object({ text: z.string(), minutes: z.number().optional() })),
  })
  .meta({ title: 'recipe', description: 'A recipe' });

const question = { role: 'user', content: 'A pancake recipe' } as const;

/** The error a promise rejects with, checked to be of `type`. */
async function rejection<E>(promise: Promise<unknown>, type: abstract new (...args: never[]) => E): Promise<E> {
  const thrown = await promise.then(
    () => undefined,
    (error: unknown) => error,
  );
  if (!(thrown instanceof type)) throw new Error(`expected a rejection with ${type.name}, got ${String(thrown)}`);
  return thrown;
}

const strictSchema = {
  type: 'object',
  description: 'A recipe',
  title: 'recipe',
  properties: {
    title: { type: 'string' },
    servings: { type: ['integer', 'null'], minimum: -9007199254740991, maximum: 9007199254740991, default: 2 },
    steps: {
      type: 'array',
      items: {
        type: 'object',
        properties: { text: { type: 'string' }, minutes: { type: ['number', 'null'] } },
        required: ['text', 'minutes'],
        additionalProperties: false,
      },
    },
  },
  required: ['title', 'servings', 'steps'],
  additionalProperties: false,
};

describe('chat structured output', () => {
  it('sends response_format json_schema with the strict schema, and never `output` itself', async () => {
    const transport = await start([{ object: { title: 'Pancakes', servings: null, steps: [] } }]);
    const result = await runChatToolLoop(transport, { model: 'mock-model', messages: [question], output: Recipe });
    expect(bodies()).toEqual([
      {
        model: 'mock-model',
        messages: [question],
        response_format: {
          type: 'json_schema',
          json_schema: { name: 'recipe', description: 'A recipe', schema: strictSchema, strict: true },
        },
        stream: true,
        stream_options: { include_usage: true },
      },
    ]);
    // A strict `null` for an optional property reads as absent, so the default applies.
    expect(result.object).toEqual({ title: 'Pancakes', servings: 2, steps: [] });
    expect(result.text).toBe('{"title":"Pancakes","servings":null,"steps":[]}');
  });

  it('a provider with JSON mode only gets json_object and the schema in a system message', async () => {
    const transport = await start([{ object: { title: 'x', servings: 1, steps: [] } }], {
      provider: { name: 'json-mode', baseURL: '', apiKeyEnv: [], auth: 'bearer', quirks: { streamOptions: false, responseFormat: 'json_object' } },
    });
    const result = await runChatToolLoop(transport, { model: 'mock-model', messages: [question], output: Recipe });
    const [body] = bodies();
    expect(body?.response_format).toEqual({ type: 'json_object' });
    expect(body?.messages).toEqual([
      {
        role: 'system',
        content: `Answer with a single JSON object that matches this JSON Schema, and nothing else:\n${JSON.stringify(z.toJSONSchema(Recipe, { io: 'input', target: 'draft-2020-12' })).replace('"$schema":"https://json-schema.org/draft/2020-12/schema",', '')}`,
      },
      question,
    ]);
    // The system message is on the wire only.
    expect(result.messages[0]).toEqual(question);
    expect(result.object).toEqual({ title: 'x', servings: 1, steps: [] });
  });

  it('streams object events: monotone partials, the last one deep-equal to the object before defaults', async () => {
    const answer = { title: 'Crêpes "fines"', servings: null, steps: [{ text: 'Mix\nwell', minutes: 2.5 }, { text: 'Fry', minutes: null }] };
    const transport = await start([{ object: answer }]);
    const stream = streamChatToolLoop(transport, { model: 'mock-model', messages: [question], output: Recipe });
    const objects: unknown[] = [];
    let contents = 0;
    for await (const event of stream) {
      if (event.type === 'object') objects.push(event.object);
      if (event.type === 'content') contents++;
    }
    const result = await stream.final();
    expect(objects.length).toBeGreaterThan(3);
    expect(objects.length).toBeLessThanOrEqual(contents);
    expect(objects.at(-1)).toEqual(answer);
    expect(objects[0]).toEqual({});
    // Every partial is a prefix of the final in the sense of strings growing and members appearing.
    for (const partial of objects) expect(JSON.stringify(answer).startsWith(JSON.stringify(partial).replace(/[\]}]+$/, '').replace(/"$/, ''))).toBe(true);
    expect(result.object).toEqual({ title: 'Crêpes "fines"', servings: 2, steps: [{ text: 'Mix\nwell', minutes: 2.5 }, { text: 'Fry' }] });
    // typed: z.infer of the schema
    const servings: number = result.object.servings;
    expect(servings).toBe(2);
  });

  it('a large answer: changes merge into fewer object events, and the last still equals the answer', async () => {
    const answer = { title: 'Many', servings: 4, steps: Array.from({ length: 600 }, (_, i) => ({ text: `step ${i}`, minutes: i })) };
    const transport = await start([{ object: answer }]);
    const stream = streamChatToolLoop(transport, { model: 'mock-model', messages: [question], output: Recipe });
    const objects: unknown[] = [];
    let contents = 0;
    for await (const event of stream) {
      if (event.type === 'object') objects.push(event.object);
      if (event.type === 'content') contents++;
    }
    expect(objects.length).toBeLessThan(contents / 2);
    expect(objects.at(-1)).toEqual(answer);
    expect((await stream.final()).object).toEqual(answer);
  });

  it('a cut-off answer: the turn end shows what arrived since the last object event', async () => {
    const steps = Array.from({ length: 600 }, (_, i) => ({ text: `step ${i}`, minutes: i }));
    const text = JSON.stringify({ title: 'Cut', servings: 1, steps });
    const transport = await start([{ content: text.slice(0, -40), finishReason: 'length' }]);
    const stream = streamChatToolLoop(transport, { model: 'mock-model', messages: [question], output: Recipe });
    let last: unknown;
    const read = async () => {
      for await (const event of stream) if (event.type === 'object') last = event.object;
    };
    const error = await rejection(read(), OutputValidationError);
    expect(error.issues[0]?.code).toBe('truncated');
    // The text ends in `{"text":"step 598","minutes":`: everything before it, and that step's text.
    expect(last).toEqual({ title: 'Cut', servings: 1, steps: [...steps.slice(0, 598), { text: 'step 598' }] });
  });

  it('reports a refusal as a refusal, not as a parse error', async () => {
    const transport = await start([{ refusal: "I can't help with that." }]);
    const error = await rejection(
      runChatToolLoop(transport, { model: 'mock-model', messages: [question], output: Recipe }),
      OutputRefusalError,
    );
    expect(error).not.toBeInstanceOf(OutputValidationError);
    expect(error.refusal).toBe("I can't help with that.");
    expect((error.partial as ToolLoopPartial).steps).toHaveLength(1);
  });

  it('an answer that does not match is an OutputValidationError with the raw text, the issues and partial', async () => {
    const transport = await start([{ content: '{"title": 7, "steps": []' }, { object: { title: 1 } }]);
    const error = await rejection(
      runChatToolLoop(transport, { model: 'mock-model', messages: [question], output: Recipe }),
      OutputValidationError,
    );
    expect(error.text).toBe('{"title": 7, "steps": []');
    expect(error.issues[0]?.code).toBe('invalid_json');
    expect((error.partial as ToolLoopPartial).text).toBe('{"title": 7, "steps": []');

    const mismatch = await rejection(
      runChatToolLoop(transport, { model: 'mock-model', messages: [question], output: Recipe }),
      OutputValidationError,
    );
    expect(mismatch.issues.map((issue) => issue.path)).toEqual([['title'], ['steps']]);
  });

  it('repair: sends the issues back, each attempt a step, usage summed', async () => {
    const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
    const transport = await start([
      { object: { title: 'Pancakes', steps: 'mix' }, usage },
      { object: { title: 'Pancakes', servings: 4, steps: [{ text: 'Mix', minutes: null }] }, usage },
    ]);
    const result = await runChatToolLoop(transport, { model: 'mock-model', messages: [question], output: Recipe, repair: 2 });
    expect(result.object).toEqual({ title: 'Pancakes', servings: 4, steps: [{ text: 'Mix' }] });
    expect(result.steps.map((step) => step.step)).toEqual([1, 2]);
    expect(result.usage).toEqual({ prompt_tokens: 20, completion_tokens: 10, total_tokens: 30 });
    const second = bodies()[1];
    expect(second?.messages).toEqual([
      question,
      { role: 'assistant', content: '{"title":"Pancakes","steps":"mix"}' },
      {
        role: 'user',
        content:
          'Your answer does not match the required JSON schema:\n' +
          '- steps: Invalid input: expected array, received string\n' +
          'Answer again with only the corrected JSON.',
      },
    ]);
    expect(second?.response_format).toEqual(bodies()[0]?.response_format);
  });

  it('repair stops after n attempts with the last error', async () => {
    const transport = await start([{ content: 'no' }, { content: 'still no' }, { content: 'never' }]);
    const error = await rejection(
      runChatToolLoop(transport, { model: 'mock-model', messages: [question], output: Recipe, repair: 1 }),
      OutputValidationError,
    );
    expect(error.text).toBe('still no');
    expect((error.partial as ToolLoopPartial).steps).toHaveLength(2);
    expect(bodies()).toHaveLength(2);
  });

  it('output with tools: tools run as usual, then the final answer is parsed', async () => {
    const transport = await start([
      { toolCalls: [{ id: 'call_1', name: 'lookup', arguments: { dish: 'pancakes' } }] },
      { object: { title: 'Pancakes', servings: 3, steps: [] } },
    ]);
    const lookup = defineTool({
      name: 'lookup',
      parameters: z.object({ dish: z.string() }),
      execute: ({ dish }) => ({ dish, serves: 3 }),
    });
    const stream = streamChatToolLoop(transport, { model: 'mock-model', messages: [question], tools: [lookup], output: Recipe });
    const types: string[] = [];
    for await (const event of stream) if (event.type !== 'content' && event.type !== 'tool_call.delta') types.push(`${event.step}:${event.type}`);
    const result = await stream.final();
    expect(result.object).toEqual({ title: 'Pancakes', servings: 3, steps: [] });
    expect(types).toContain('1:tool.result');
    expect(types.filter((type) => type.endsWith(':object')).every((type) => type.startsWith('2:'))).toBe(true);
    expect(bodies().map((body) => body.response_format !== undefined && Array.isArray(body.tools))).toEqual([true, true]);
  });
});

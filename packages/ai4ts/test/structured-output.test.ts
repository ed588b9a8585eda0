/**
 * Structured output through the front door, on all four protocols against @ai4ts/testing's server (real HTTP):
 * the exact wire bodies, object events, refusal, repair, and output with tools.
 */
import { type MockModel, type MockScript, startMockModel } from '@ai4ts/testing';
import {
  Ai4ts,
  type Ai4tsOptions,
  defineTool,
  OutputRefusalError,
  OutputValidationError,
  type ToolLoopPartial,
} from 'ai4ts';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { expectMonotone, within } from '@ai4ts/test-kit';

const City = z
  .object({
    name: z.string(),
    country: z.string(),
    population: z.number().optional(),
    sights: z.array(z.string()).default([]),
  })
  .meta({ title: 'city' });

const ANSWER = { name: 'Zürich', country: 'CH', population: 443_037, sights: ['Grossmünster', 'See "Zürichsee"'] };
const QUESTION = 'Tell me about Zürich';

/** The strict-mode schema every json_schema request carries. */
const STRICT = {
  type: 'object',
  title: 'city',
  properties: {
    name: { type: 'string' },
    country: { type: 'string' },
    population: { type: ['number', 'null'] },
    sights: { type: ['array', 'null'], items: { type: 'string' }, default: [] },
  },
  required: ['name', 'country', 'population', 'sights'],
  additionalProperties: false,
};

/** The input-side schema, as a forced tool's input_schema. */
const INPUT = {
  type: 'object',
  title: 'city',
  properties: {
    name: { type: 'string' },
    country: { type: 'string' },
    population: { type: 'number' },
    sights: { type: 'array', items: { type: 'string' }, default: [] },
  },
  required: ['name', 'country'],
};

let model: MockModel | undefined;
afterEach(async () => {
  await model?.close();
  model = undefined;
});

async function client(script: MockScript, options: Partial<Ai4tsOptions> = {}, protocol?: Protocol): Promise<Ai4ts> {
  model = await startMockModel({ script, seed: 3 });
  // Gemini's client is the `gemini` provider at the scripted model's `/v1beta` base.
  if (protocol === 'gemini') return new Ai4ts({ ...options, provider: 'gemini', baseURL: model.geminiBaseURL, apiKey: 'test-key', maxRetries: 0 });
  return new Ai4ts({ provider: 'openai-compatible', ...options, baseURL: model.baseURL, apiKey: 'test-key', maxRetries: 0 });
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

type Protocol = 'chat' | 'responses' | 'messages' | 'gemini';

/** One structured request per protocol, streamed or not, with the extra fields given. */
function ask(c: Ai4ts, protocol: Protocol, extra: { repair?: number; tools?: ReturnType<typeof defineTool>[] } = {}) {
  if (protocol === 'chat') return c.chat.stream({ model: 'mock-model', messages: [{ role: 'user', content: QUESTION }], output: City, ...extra });
  if (protocol === 'responses') return c.responses.stream({ model: 'mock-model', input: QUESTION, output: City, ...extra });
  if (protocol === 'gemini') return c.gemini.stream({ model: 'mock-model', contents: [{ role: 'user', parts: [{ text: QUESTION }] }], output: City, ...extra });
  return c.messages.stream({
    model: 'mock-model',
    max_tokens: 400,
    messages: [{ role: 'user', content: QUESTION }],
    output: City,
    ...extra,
  });
}

const EXPECTED_BODY: Record<Protocol, Record<string, unknown>> = {
  chat: {
    model: 'mock-model',
    messages: [{ role: 'user', content: QUESTION }],
    response_format: { type: 'json_schema', json_schema: { name: 'city', schema: STRICT, strict: true } },
    stream: true,
    stream_options: { include_usage: true },
  },
  responses: {
    model: 'mock-model',
    input: [{ type: 'message', role: 'user', content: QUESTION }],
    text: { format: { type: 'json_schema', name: 'city', schema: STRICT, strict: true } },
    stream: true,
  },
  messages: {
    model: 'mock-model',
    max_tokens: 400,
    messages: [{ role: 'user', content: QUESTION }],
    tools: [{ name: 'city', description: 'Give the final answer: its input is the answer.', input_schema: INPUT }],
    tool_choice: { type: 'tool', name: 'city' },
    stream: true,
  },
  // The model is in the URL; the schema goes as `responseJsonSchema`, which takes the input-side JSON Schema.
  gemini: {
    contents: [{ role: 'user', parts: [{ text: QUESTION }] }],
    generationConfig: { responseMimeType: 'application/json', responseJsonSchema: INPUT },
  },
};

describe.each(['chat', 'responses', 'messages', 'gemini'] as const)('structured output over %s', (protocol) => {
  it('sends the exact body, streams monotone object events, and resolves to the validated object', async () => {
    const c = await client([{ object: ANSWER }], {}, protocol);
    const stream = ask(c, protocol);
    const objects: unknown[] = [];
    for await (const event of stream) if (event.type === 'object') objects.push(event.object);
    const result = await stream.final();

    expect(bodies()).toEqual([EXPECTED_BODY[protocol]]);
    expect(result.object).toEqual(ANSWER);
    expect(JSON.parse(result.text)).toEqual(ANSWER);
    expect(objects.length).toBeGreaterThan(5);
    expect(objects.at(-1)).toEqual(ANSWER);
    expectMonotone(objects, ANSWER);
    // The partials pass through the answer's fields as they stream, not only the whole at the end.
    expect(objects.some((partial) => within(partial, ANSWER) && !Object.hasOwn(partial as object, 'sights'))).toBe(true);
    const typed: string[] = result.object.sights;
    expect(typed).toHaveLength(2);
  });

  it('applies defaults after the last object event, which equals the answer as sent', async () => {
    const sent = { name: 'Bern', country: 'CH', population: null, sights: null };
    const c = await client([{ object: sent }], {}, protocol);
    const stream = ask(c, protocol);
    let last: unknown;
    for await (const event of stream) if (event.type === 'object') last = event.object;
    const result = await stream.final();
    expect(last).toEqual(sent);
    expect(result.object).toEqual({ name: 'Bern', country: 'CH', sights: [] });
  });

  it('reports a refusal as OutputRefusalError', async () => {
    const c = await client([{ refusal: 'I will not.' }], {}, protocol);
    const error = await rejection(ask(c, protocol).final(), OutputRefusalError);
    expect(error.refusal).toBe('I will not.');
    expect((error.partial as ToolLoopPartial).steps).toHaveLength(1);
  });

  it('repair: the issues go back, each attempt a step, usage summed', async () => {
    const usage = { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 };
    const c = await client(
      [
        { object: { name: 'Zürich', country: 41 }, usage },
        { object: ANSWER, usage },
      ],
      {},
      protocol,
    );
    const result = await ask(c, protocol, { repair: 1 }).final();
    expect(result.object).toEqual(ANSWER);
    expect(result.steps).toHaveLength(2);
    expect(result.usage).toMatchObject({ prompt_tokens: 14, completion_tokens: 6, total_tokens: 20 });
    const feedback =
      'Your answer does not match the required JSON schema:\n' +
      '- country: Invalid input: expected string, received number\n' +
      'Answer again with only the corrected JSON.';
    const second = bodies()[1];
    const transcript = protocol === 'responses' ? second?.input : protocol === 'gemini' ? second?.contents : second?.messages;
    expect(JSON.stringify(transcript)).toContain(JSON.stringify(feedback));
  });

  it('without repair, a mismatch is an OutputValidationError with the raw text and the issues', async () => {
    const c = await client([{ object: { name: 'Zürich' } }], {}, protocol);
    const error = await rejection(ask(c, protocol).final(), OutputValidationError);
    expect(JSON.parse(error.text)).toEqual({ name: 'Zürich' });
    expect(error.issues.map((issue) => issue.path)).toEqual([['country']]);
    expect((error.partial as ToolLoopPartial).steps).toHaveLength(1);
  });

  it('with tools: the tools run, then the final answer is parsed', async () => {
    const ran: string[] = [];
    const lookup = defineTool({
      name: 'lookup',
      parameters: z.object({ city: z.string() }),
      execute: ({ city }) => {
        ran.push(city);
        return { population: 443_037 };
      },
    });
    const outputCall = protocol === 'messages' ? { toolCalls: [{ name: 'city', arguments: ANSWER }] } : { object: ANSWER };
    const c = await client([{ toolCalls: [{ name: 'lookup', arguments: { city: 'Zürich' } }] }, outputCall], {}, protocol);
    const stream = ask(c, protocol, { tools: [lookup] });
    const steps: number[] = [];
    for await (const event of stream) if (event.type === 'object') steps.push(event.step);
    const result = await stream.final();
    expect(ran).toEqual(['Zürich']);
    expect(result.object).toEqual(ANSWER);
    expect(result.steps).toHaveLength(2);
    expect(new Set(steps)).toEqual(new Set([2]));
    if (protocol === 'messages') expect(bodies()[0]?.tool_choice).toEqual({ type: 'any' });
  });
});

describe('Anthropic Messages: native structured outputs', () => {
  it('uses output_config.format with the strict schema on the anthropic preset', async () => {
    const c = await client([{ object: ANSWER }], { provider: 'anthropic' });
    const result = await c.messages.create({
      model: 'claude-sonnet-4-5',
      max_tokens: 400,
      messages: [{ role: 'user', content: QUESTION }],
      output: City,
    });
    expect(bodies()).toEqual([
      {
        model: 'claude-sonnet-4-5',
        max_tokens: 400,
        messages: [{ role: 'user', content: QUESTION }],
        output_config: { format: { type: 'json_schema', schema: STRICT } },
        stream: true,
      },
    ]);
    expect(result.object).toEqual(ANSWER);
  });

  it('falls back to the forced tool for a model without it', async () => {
    const c = await client([{ object: ANSWER }], { provider: 'anthropic' });
    const result = await c.messages.create({
      model: 'claude-sonnet-4-20250514',
      max_tokens: 400,
      messages: [{ role: 'user', content: QUESTION }],
      output: City,
    });
    expect(bodies()[0]?.tool_choice).toEqual({ type: 'tool', name: 'city' });
    expect(bodies()[0]?.output_config).toBeUndefined();
    expect(result.object).toEqual(ANSWER);
  });

  it('repairs a forced-tool answer with an error tool_result', async () => {
    const c = await client([{ object: { name: 'Zürich' } }, { object: ANSWER }]);
    const result = await c.messages.create({
      model: 'mock-model',
      max_tokens: 400,
      messages: [{ role: 'user', content: QUESTION }],
      output: City,
      repair: 1,
    });
    expect(result.object).toEqual(ANSWER);
    const [first, second] = result.steps;
    const id = first?.completion.content.filter((block) => block.type === 'tool_use').map((block) => Reflect.get(block, 'id'))[0];
    expect(second?.request.messages.at(-1)).toEqual({
      role: 'user',
      content: [
        {
          type: 'tool_result',
          tool_use_id: id,
          content:
            'Your answer does not match the required JSON schema:\n- country: Invalid input: expected string, received undefined\n' +
            'Answer again with only the corrected JSON.',
          is_error: true,
        },
      ],
    });
  });
});

describe('partialToolArguments', () => {
  const lookup = defineTool({
    name: 'lookup',
    parameters: z.object({ city: z.string(), days: z.array(z.number()) }),
    execute: () => 'ok',
  });
  const args = { city: 'Zürich "centre"', days: [1, 2, 30] };

  // Not Gemini: its API sends each call's arguments whole, in one chunk (only Vertex AI streams `partialArgs`).
  it.each(['chat', 'responses', 'messages'] as const)('%s: tool_call.delta events carry the arguments parsed so far', async (protocol) => {
    const c = await client([{ toolCalls: [{ name: 'lookup', arguments: args }] }, { content: 'done' }]);
    const request = { tools: [lookup], partialToolArguments: true } as const;
    const stream =
      protocol === 'chat'
        ? c.chat.stream({ model: 'mock-model', messages: [{ role: 'user', content: QUESTION }], ...request })
        : protocol === 'responses'
          ? c.responses.stream({ model: 'mock-model', input: QUESTION, ...request })
          : c.messages.stream({ model: 'mock-model', max_tokens: 100, messages: [{ role: 'user', content: QUESTION }], ...request });
    const partials: unknown[] = [];
    for await (const event of stream) if (event.type === 'tool_call.delta' && 'partialArguments' in event) partials.push(event.partialArguments);
    await stream.final();
    expect(partials.length).toBeGreaterThan(3);
    expect(partials.at(-1)).toEqual(args);
    expectMonotone(partials, args);
    expect(bodies()[0]).not.toHaveProperty('partialToolArguments');
  });

  it('is opt-in', async () => {
    const c = await client([{ toolCalls: [{ name: 'lookup', arguments: args }] }, { content: 'done' }]);
    const stream = c.chat.stream({ model: 'mock-model', messages: [{ role: 'user', content: QUESTION }], tools: [lookup] });
    let deltas = 0;
    for await (const event of stream)
      if (event.type === 'tool_call.delta') {
        deltas++;
        expect(event).not.toHaveProperty('partialArguments');
      }
    expect(deltas).toBeGreaterThan(3);
  });
});

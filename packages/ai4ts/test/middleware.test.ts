/**
 * `client.use(middleware)` around each model request of every protocol, against @ai4ts/testing over real HTTP:
 * order, a changed request on the wire, observed and rewritten events, short-circuits (a cache, a mock inside a
 * loop, a guardrail) and the errors of a middleware that misbehaves.
 */
import { type MockModel, type MockTurn, startMockModel } from '@ai4ts/testing';
import {
  Ai4ts,
  isConverseResponse,
  AbortError,
  Ai4tsError,
  type RequestOptions,
  TimeoutError,
  defineTool,
  isChatCompletion,
  isGenerateContentResponse,
  isMessage,
  type Middleware,
  type ModelResult,
  type StreamEvent,
  type ContentEvent,
  isKnownBlock,
} from 'ai4ts';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';

const user = { role: 'user' as const, content: 'Hello' };

let model: MockModel | undefined;
afterEach(async () => {
  await model?.close();
  model = undefined;
});

/** A client of the scripted model; Gemini's is the `gemini` provider at its `/v1beta` base. */
async function start(script: MockTurn[], protocol?: string): Promise<Ai4ts> {
  model = await startMockModel({ script });
  const at =
    protocol === 'gemini'
      ? ({ provider: 'gemini', baseURL: model.geminiBaseURL } as const)
      : ({ provider: 'openai-compatible', baseURL: model.baseURL } as const);
  return new Ai4ts({ ...at, apiKey: 'sk-middleware-0123456789', maxRetries: 0 });
}

const contents = [{ role: 'user' as const, parts: [{ text: user.content }] }];

const plain = {
  chat: (c: Ai4ts) => c.chat.create({ model: 'mock-model', messages: [user] }),
  responses: (c: Ai4ts) => c.responses.create({ model: 'mock-model', input: [user] }),
  messages: (c: Ai4ts) => c.messages.create({ model: 'mock-model', max_tokens: 32, messages: [user] }),
  gemini: (c: Ai4ts) => c.gemini.create({ model: 'mock-model', contents }),
};
const streamed = {
  chat: (c: Ai4ts) => c.chat.stream({ model: 'mock-model', messages: [user] }).final(),
  responses: (c: Ai4ts) => c.responses.stream({ model: 'mock-model', input: [user] }).final(),
  messages: (c: Ai4ts) => c.messages.stream({ model: 'mock-model', max_tokens: 32, messages: [user] }).final(),
  gemini: (c: Ai4ts) => c.gemini.stream({ model: 'mock-model', contents }).final(),
};

/** A request with temperature 0.3 where its protocol puts it (Gemini: `generationConfig`), and the one it has. */
const temperature = {
  set: (request: object, protocol: string) =>
    protocol === 'gemini' ? { ...request, generationConfig: { temperature: 0.3 } } : { ...request, temperature: 0.3 },
  of: (request: object): unknown => {
    const config = Reflect.get(request, 'generationConfig');
    return typeof config === 'object' && config !== null ? Reflect.get(config, 'temperature') : Reflect.get(request, 'temperature');
  },
};

describe.each(Object.keys(plain) as (keyof typeof plain)[])('%s', (protocol) => {
  it('runs the middleware in the order added, around the request, and sends the request they changed', async () => {
    const client = await start([{ content: 'Hi.' }], protocol);
    const trail: string[] = [];
    client
      .use(async (ctx, next) => {
        trail.push(`a before ${ctx.protocol} stream=${ctx.stream}`);
        ctx.request = temperature.set(ctx.request, ctx.protocol) as typeof ctx.request;
        const result = await next();
        trail.push('a after');
        return result;
      })
      .use(async (ctx, next) => {
        trail.push(`b before temperature=${temperature.of(ctx.request)}`);
        const result = await next();
        trail.push('b after');
        return result;
      });
    await plain[protocol](client);
    expect(trail).toEqual([`a before ${protocol} stream=false`, 'b before temperature=0.3', 'b after', 'a after']);
    const body = model?.requests[0]?.body as object;
    expect(temperature.of(body)).toBe(0.3);
    // Gemini's model is in the URL, never in the body.
    if (protocol === 'gemini') expect(model?.requests[0]?.path).toBe('/v1beta/models/mock-model:generateContent');
    else expect(body).toMatchObject({ model: 'mock-model' });
  });

  it('a cache keyed by the request answers the second identical request without sending it (create and stream)', async () => {
    const client = await start([{ content: 'Cached answer.' }, { content: 'Streamed answer.' }], protocol);
    const cache = new Map<string, ModelResult>();
    client.use(async (ctx, next) => {
      const key = `${ctx.protocol} ${ctx.stream} ${JSON.stringify(ctx.request)}`;
      const hit = cache.get(key);
      if (hit) return hit;
      const result = await next();
      cache.set(key, result);
      return result;
    });
    const first = await plain[protocol](client);
    const second = await plain[protocol](client);
    expect(second).toBe(first);
    const third = await streamed[protocol](client);
    const fourth = await streamed[protocol](client);
    expect(fourth).toBe(third);
    expect(model?.requests).toHaveLength(2);
  });

  it('observes the streamed events', async () => {
    const client = await start([{ content: 'Streamed words.' }], protocol);
    const deltas: string[] = [];
    client.use(async (ctx, next) => {
      ctx.onEvent((event) => {
        if (event.type === 'content') deltas.push(event.delta);
      });
      return next();
    });
    await streamed[protocol](client);
    expect(deltas.join('')).toBe('Streamed words.');
  });
});

describe('short-circuits and errors', () => {
  it('a mock answers every step of a tool loop: the tool runs on its call, the server is never asked', async () => {
    const client = await start([]);
    const ran: string[] = [];
    const echo = defineTool({
      name: 'echo',
      parameters: z.object({ text: z.string() }),
      execute: ({ text }) => {
        ran.push(text);
        return text;
      },
    });
    let step = 0;
    client.use(async (ctx) => {
      if (ctx.protocol !== 'chat') throw new Error('chat only');
      step++;
      const message =
        step === 1
          ? {
              role: 'assistant' as const,
              content: null,
              tool_calls: [{ id: 'call_1', type: 'function' as const, function: { name: 'echo', arguments: '{"text":"hi"}' } }],
            }
          : { role: 'assistant' as const, content: `Done with ${ctx.request.messages.length} messages.` };
      return {
        id: `mock-${step}`,
        object: 'chat.completion',
        created: 0,
        model: 'mock-model',
        choices: [{ index: 0, message, finish_reason: step === 1 ? 'tool_calls' : 'stop' }],
      };
    });
    const result = await client.chat.create({ model: 'mock-model', messages: [user], tools: [echo] });
    expect(ran).toEqual(['hi']);
    expect(result.text).toBe('Done with 3 messages.');
    expect(model?.requests).toHaveLength(0);
  });

  it('a content filter rejects a request before it is sent, and can change an answer', async () => {
    const client = await start([{ content: 'The password is hunter2.' }]);
    client.use(async (ctx, next) => {
      if (JSON.stringify(ctx.request).includes('credit card')) throw new Ai4tsError('Blocked by the content filter');
      const result = await next();
      if (isChatCompletion(result)) {
        const choices = result.choices.map((choice) => ({
          ...choice,
          message: { ...choice.message, content: choice.message.content?.replace(/hunter2/g, '*******') ?? null },
        }));
        return { ...result, choices };
      }
      return result;
    });
    await expect(
      client.chat.create({ model: 'mock-model', messages: [{ role: 'user', content: 'my credit card is 4111' }] }),
    ).rejects.toThrow('Blocked by the content filter');
    expect(model?.requests).toHaveLength(0);
    const completion = await client.chat.create({ model: 'mock-model', messages: [user] });
    expect(completion.choices[0]?.message.content).toBe('The password is *******.');
  });

  it('a middleware that returns something else than the protocol result, or calls next() twice, fails the call', async () => {
    const client = await start([{ content: 'One.' }]);
    const wrong: Middleware = async () => ({ id: 'x', choices: 'none' }) as unknown as ModelResult;
    client.use(wrong);
    await expect(client.chat.create({ model: 'mock-model', messages: [user] })).rejects.toThrow(
      'A middleware returned something that is not a chat result',
    );
    const twice = await start([{ content: 'One.' }]);
    twice.use(async (_ctx, next) => {
      await next();
      return next();
    });
    await expect(twice.chat.create({ model: 'mock-model', messages: [user] })).rejects.toThrow(
      'A middleware called next() twice',
    );
  });
});

/** The filter of docs/observability.md: words masked in the streamed events and in the result alike. */
const SECRET = /\b(?:password|hunter2)\b/g;
const redact = (text: string) => text.replace(SECRET, '***');
const SPOKEN = 'The password is hunter2, so keep the password to yourself.';
const MASKED = 'The *** is ***, so keep the *** to yourself.';

function redactResult(result: ModelResult): ModelResult {
  if (isChatCompletion(result))
    return {
      ...result,
      choices: result.choices.map((choice) => ({
        ...choice,
        message: { ...choice.message, content: choice.message.content && redact(choice.message.content) },
      })),
    };
  if (isMessage(result))
    return {
      ...result,
      content: result.content.map((block) => (isKnownBlock(block) && block.type === 'text' ? { ...block, text: redact(block.text) } : block)),
    };
  if (isConverseResponse(result)) {
    const content = result.output.message.content.map((block) => ('text' in block && typeof block.text === 'string' ? { ...block, text: redact(block.text) } : block));
    return { ...result, output: { message: { ...result.output.message, content } } };
  }
  if (isGenerateContentResponse(result))
    return {
      ...result,
      candidates: result.candidates?.map((candidate) => ({
        ...candidate,
        content: candidate.content && {
          ...candidate.content,
          parts: candidate.content.parts.map((part) => (typeof part.text === 'string' ? { ...part, text: redact(part.text) } : part)),
        },
      })),
    };
  const output = result.output.map((item) =>
    item.type === 'message'
      ? { ...item, content: item.content.map((part) => (part.type === 'output_text' ? { ...part, text: redact(part.text) } : part)) }
      : item,
  );
  return { ...result, output, output_text: redact(result.output_text) };
}

const wordFilter: Middleware = async (ctx, next) => {
  // A word may be cut between two deltas: the text after the last space waits for the next delta (or the finish).
  let held = '';
  let shown = '';
  const release = (text: string, choice: number): StreamEvent => {
    const delta = redact(text);
    shown += delta;
    return { type: 'content', delta, snapshot: shown, choice };
  };
  ctx.transformEvents((event) => {
    if (event.type === 'content') {
      const text = held + event.delta;
      const end = text.search(/\S*$/);
      held = text.slice(end);
      return end === 0 ? [] : [release(text.slice(0, end), event.choice)];
    }
    if (event.type === 'finish' && held !== '') {
      const rest = held;
      held = '';
      return [release(rest, event.choice), event];
    }
    return event;
  });
  return redactResult(await next());
};

function textOf(result: ModelResult): string | null {
  if (isChatCompletion(result)) return result.choices[0]?.message.content ?? null;
  if (isMessage(result)) return result.content.flatMap((block) => (isKnownBlock(block) && block.type === 'text' ? [block.text] : [])).join('');
  if (isConverseResponse(result)) return result.output.message.content.flatMap((block) => ('text' in block && typeof block.text === 'string' ? [block.text] : [])).join('');
  if (isGenerateContentResponse(result))
    return (result.candidates?.[0]?.content?.parts ?? []).flatMap((part) => (typeof part.text === 'string' ? [part.text] : [])).join('');
  return result.output_text;
}

const streams = {
  chat: (c: Ai4ts) => c.chat.stream({ model: 'mock-model', messages: [user] }),
  responses: (c: Ai4ts) => c.responses.stream({ model: 'mock-model', input: [user] }),
  messages: (c: Ai4ts) => c.messages.stream({ model: 'mock-model', max_tokens: 64, messages: [user] }),
  // Gemini sends its thoughts only when asked to.
  gemini: (c: Ai4ts) =>
    c.gemini.stream({ model: 'mock-model', contents, generationConfig: { thinkingConfig: { includeThoughts: true } } }),
};

const lookup = defineTool({ name: 'lookup', parameters: z.object({ key: z.string() }), execute: ({ key }) => `value of ${key}` });
const loops = {
  chat: (c: Ai4ts) => c.chat.stream({ model: 'mock-model', messages: [user], tools: [lookup] }),
  responses: (c: Ai4ts) => c.responses.stream({ model: 'mock-model', input: [user], tools: [lookup] }),
  messages: (c: Ai4ts) => c.messages.stream({ model: 'mock-model', max_tokens: 64, messages: [user], tools: [lookup] }),
  gemini: (c: Ai4ts) => c.gemini.stream({ model: 'mock-model', contents, tools: [lookup] }),
};

/** `on('content')` of any protocol's stream handle. */
function onContent(stream: { on(event: 'content', handler: (event: ContentEvent) => void): unknown }, see: (delta: string) => void) {
  stream.on('content', (event) => see(event.delta));
}

describe.each(Object.keys(streams) as (keyof typeof streams)[])('transforming the events of a %s stream', (protocol) => {
  it('a content filter masks the text in every event and in the result: what was yielded and the result agree', async () => {
    const client = await start([{ content: SPOKEN }], protocol);
    client.use(wordFilter);
    const stream = streams[protocol](client);
    const handled: string[] = [];
    onContent(stream, (delta) => handled.push(delta));
    const deltas: string[] = [];
    for await (const event of stream) {
      if (event.type !== 'content') continue;
      deltas.push(event.delta);
      expect(event.snapshot).toBe(deltas.join(''));
    }
    expect(deltas.join('')).toBe(MASKED);
    expect(handled).toEqual(deltas);
    expect(textOf(await stream.final())).toBe(MASKED);
  });

  it('in a streamed tool loop, each step’s events are rewritten and the loop’s text is the rewritten result’s', async () => {
    const client = await start([{ toolCalls: [{ name: 'lookup', arguments: { key: 'a' } }] }, { content: SPOKEN }], protocol);
    client.use(wordFilter);
    const stream = loops[protocol](client);
    let text = '';
    for await (const event of stream) if (event.type === 'content') text += event.delta;
    const result = await stream.final();
    expect(text).toBe(MASKED);
    expect(result.text).toBe(MASKED);
    expect(result.steps).toHaveLength(2);
  });

  it('transforms apply innermost first, may drop events, and observers see what is yielded', async () => {
    const client = await start([{ reasoning: 'Thinking.', content: 'aaa' }], protocol);
    const observed: string[] = [];
    let dropped = 0;
    client
      .use(async (ctx, next) => {
        ctx.onEvent((event) => observed.push(event.type));
        ctx.transformEvents((event) => (event.type === 'content' ? { ...event, delta: event.delta.replaceAll('b', 'c') } : event));
        return next();
      })
      .use(async (ctx, next) => {
        ctx.transformEvents((event) => {
          if (event.type === 'reasoning') dropped++;
          return event.type === 'reasoning' ? [] : event.type === 'content' ? { ...event, delta: event.delta.replaceAll('a', 'b') } : event;
        });
        return next();
      });
    const stream = streams[protocol](client);
    const yielded: string[] = [];
    let text = '';
    for await (const event of stream) {
      yielded.push(event.type);
      if (event.type === 'content') text += event.delta;
    }
    expect(text).toBe('ccc');
    expect(dropped).toBeGreaterThan(0);
    expect(yielded).not.toContain('reasoning');
    expect(yielded).toContain('finish');
    expect(observed).toEqual(yielded);
  });

  it('with no transform registered the listener keeps its own emit: its events pay nothing', async () => {
    const client = await start([{ content: 'Hi.' }, { content: 'Hi.' }], protocol);
    client.use(async (ctx, next) => {
      ctx.onEvent(() => undefined);
      return next();
    });
    const observed = streams[protocol](client);
    await observed.final();
    expect(Object.hasOwn(observed.listener, 'emit')).toBe(false);
    client.use(async (ctx, next) => {
      ctx.transformEvents((event) => event);
      return next();
    });
    const transformed = streams[protocol](client);
    await transformed.final();
    expect(Object.hasOwn(transformed.listener, 'emit')).toBe(true);
  });
});

describe('a middleware that never answers', () => {
  const never = (): Promise<never> => new Promise(() => undefined);
  const calls = {
    create: (c: Ai4ts, options: RequestOptions) => c.chat.create({ model: 'mock-model', messages: [user] }, options),
    stream: (c: Ai4ts, options: RequestOptions) => c.chat.stream({ model: 'mock-model', messages: [user] }, options).final(),
  };

  it.each(Object.keys(calls) as (keyof typeof calls)[])('%s: the call’s signal aborts it (AbortError)', async (kind) => {
    const client = await start([{ content: 'Hi.' }]);
    client.use(never);
    const controller = new AbortController();
    const pending = calls[kind](client, { signal: controller.signal });
    setTimeout(() => controller.abort(), 20);
    await expect(pending).rejects.toBeInstanceOf(AbortError);
  });

  it.each(Object.keys(calls) as (keyof typeof calls)[])('%s: the call’s headers timeout ends it (TimeoutError)', async (kind) => {
    const client = await start([{ content: 'Hi.' }]);
    client.use(never);
    const error = await calls[kind](client, { timeouts: { headers: 50 } }).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toMatchObject({ phase: 'headers', timeoutMs: 50 });
  });

  it('a middleware that hangs after next() is still ended by the signal', async () => {
    const client = await start([{ content: 'Hi.' }]);
    client.use(async (_ctx, next) => {
      await next();
      return never();
    });
    const controller = new AbortController();
    const pending = calls.create(client, { signal: controller.signal });
    setTimeout(() => controller.abort(), 100);
    await expect(pending).rejects.toBeInstanceOf(AbortError);
  });
});

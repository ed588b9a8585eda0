import { parseSse } from '@ai4ts/sse';
import OpenAI from 'openai';
import { type MockModel, type MockModelOptions, startMockModel } from '@ai4ts/testing';
import { afterEach, describe, expect, it } from 'vitest';

let model: MockModel | undefined;
afterEach(async () => {
  await model?.close();
  model = undefined;
});

async function start(options: MockModelOptions): Promise<MockModel> {
  model = await startMockModel(options);
  return model;
}

const ask = (extra: Record<string, unknown> = {}) => ({
  model: 'gpt-test',
  messages: [{ role: 'user', content: 'hi' }],
  ...extra,
});

function post(server: MockModel, body: unknown, init: RequestInit = {}) {
  return fetch(`${server.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test' },
    body: JSON.stringify(body),
    ...init,
  });
}

interface Chunk {
  choices: { index: number; delta: Record<string, unknown>; finish_reason: string | null }[];
  usage?: Record<string, unknown> | null;
}

/** Reads a streamed answer: every data payload, and whether it ended with [DONE]. */
async function readStream(response: Response) {
  const chunks: Chunk[] = [];
  const errors: unknown[] = [];
  let done = false;
  for await (const event of parseSse(response)) {
    expect(done).toBe(false);
    if (event.data === '[DONE]') done = true;
    else {
      const payload = JSON.parse(event.data);
      if (payload.error) errors.push(payload.error);
      else chunks.push(payload);
    }
  }
  return { chunks, errors, done };
}

/** Joins streamed deltas back into a message, the way a client does. */
function assemble(chunks: Chunk[]) {
  let reasoning = '';
  let content = '';
  let finish: string | null = null;
  const calls: { id: string; name: string; arguments: string }[] = [];
  const fragments: { index: number; piece: string }[] = [];
  for (const chunk of chunks) {
    const choice = chunk.choices[0];
    if (!choice) continue;
    reasoning += (choice.delta.reasoning_content as string | undefined) ?? '';
    content += (choice.delta.content as string | undefined) ?? '';
    type CallDelta = { index: number; id?: string; function: Record<string, string> };
    for (const call of (choice.delta.tool_calls as CallDelta[] | undefined) ?? []) {
      const { index, id, function: fn } = call;
      if (id) calls[index] = { id, name: fn.name ?? '', arguments: fn.arguments ?? '' };
      else {
        const target = calls[index];
        if (!target) throw new Error(`fragment for call ${index} before its start`);
        target.arguments += fn.arguments;
        fragments.push({ index, piece: fn.arguments ?? '' });
      }
    }
    finish = choice.finish_reason ?? finish;
  }
  return { reasoning, content, calls, finish, fragments };
}

describe('startMockModel', () => {
  it('answers a non-streamed request and records bodies and headers', async () => {
    const server = await start({ script: [{ reasoning: 'Think.', content: 'Hello!' }] });
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const response = await post(server, ask());
    expect(response.status).toBe(200);
    const completion = await response.json();
    expect(completion).toMatchObject({
      id: 'chatcmpl-mock-1',
      object: 'chat.completion',
      model: 'gpt-test',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: 'Hello!', reasoning_content: 'Think.' },
          finish_reason: 'stop',
        },
      ],
    });
    const usage = completion.usage;
    expect(usage.total_tokens).toBe(usage.prompt_tokens + usage.completion_tokens);
    expect(usage.completion_tokens_details.reasoning_tokens).toBeGreaterThan(0);
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]).toMatchObject({ method: 'POST', path: '/v1/chat/completions', body: ask() });
    expect(server.requests[0]?.headers.authorization).toBe('Bearer sk-test');
  });

  it('streams reasoning and content in small deltas, then finish, usage with choices: [] and [DONE]', async () => {
    const content = 'The quick brown fox jumps over the lazy dog. '.repeat(3);
    const server = await start({
      script: [{ reasoning: 'Let me think about foxes.', content, usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 } }],
    });
    const response = await post(server, ask({ stream: true, stream_options: { include_usage: true } }));
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const { chunks, done } = await readStream(response);
    expect(done).toBe(true);
    const message = assemble(chunks);
    expect(message).toMatchObject({ reasoning: 'Let me think about foxes.', content, finish: 'stop', calls: [] });
    const contentDeltas = chunks.flatMap((c) => (typeof c.choices[0]?.delta.content === 'string' ? [c.choices[0].delta.content] : []));
    expect(contentDeltas.length).toBeGreaterThan(content.length / 7);
    expect(Math.max(...contentDeltas.map((d) => d.length))).toBeLessThanOrEqual(6);
    expect(chunks[0]?.choices[0]?.delta).toEqual({ role: 'assistant', content: '' });
    const last = chunks.at(-1);
    expect(last).toMatchObject({ choices: [], usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 } });
    expect(chunks.slice(0, -1).every((c) => c.usage === null)).toBe(true);
  });

  it('sends no usage chunk without stream_options.include_usage', async () => {
    const server = await start({ script: [{ content: 'Hi' }] });
    const { chunks } = await readStream(await post(server, ask({ stream: true })));
    expect(chunks.every((c) => c.choices.length === 1 && !('usage' in c))).toBe(true);
  });

  it('interleaves parallel tool calls and cuts arguments anywhere, even inside a \\u escape', async () => {
    const toolCalls = [
      { id: 'call_a', name: 'get_weather', arguments: { city: 'Zürich', unit: 'celsius' } },
      { id: 'call_b', name: 'get_weather', arguments: { city: 'São Paulo', unit: 'celsius' } },
      { name: 'get_time', arguments: '{"zone": "Europe/Paris"}' },
    ];
    let interleaved = 0;
    let cutInsideEscape = 0;
    for (let seed = 1; seed <= 12; seed++) {
      const server = await start({ script: [{ content: 'Let me look.', toolCalls }], seed });
      const { chunks, done } = await readStream(await post(server, ask({ stream: true })));
      await server.close();
      model = undefined;
      expect(done).toBe(true);
      const message = assemble(chunks);
      expect(message.finish).toBe('tool_calls');
      expect(message.calls.map((c) => c.name)).toEqual(['get_weather', 'get_weather', 'get_time']);
      expect(message.calls[0]).toEqual({ id: 'call_a', name: 'get_weather', arguments: '{"city":"Z\\u00fcrich","unit":"celsius"}' });
      expect(JSON.parse(message.calls[1]?.arguments ?? '')).toEqual({ city: 'São Paulo', unit: 'celsius' });
      expect(message.calls[2]?.arguments).toBe('{"zone": "Europe/Paris"}');
      expect(message.calls[2]?.id).toMatch(/^call_[A-Za-z0-9]{24}$/);
      const order = message.fragments.map((f) => f.index);
      if (order.some((index, i) => i > 0 && index < (order[i - 1] ?? 0))) interleaved++;
      const escapeAt = message.calls[0]?.arguments.indexOf('\\u') ?? -1;
      let boundary = 0;
      for (const { piece } of message.fragments.filter((f) => f.index === 0)) {
        boundary += piece.length;
        if (boundary > escapeAt && boundary < escapeAt + 6) cutInsideEscape++;
      }
    }
    expect(interleaved).toBeGreaterThan(0);
    expect(cutInsideEscape).toBeGreaterThan(0);
  });

  it('is deterministic for a seed', async () => {
    const script = [{ content: 'Same every time, piece by piece.' }];
    const server = await start({ script: [...script, ...script], seed: 7 });
    const first = await readStream(await post(server, ask({ stream: true })));
    const second = await readStream(await post(server, ask({ stream: true })));
    const deltas = (r: typeof first) => r.chunks.map((c) => c.choices[0]?.delta.content);
    expect(deltas(first)).not.toEqual(deltas(second)); // each request has its own seed (seed + step)...
    const again = await start({ script, seed: 7 });
    await server.close();
    expect(deltas(await readStream(await post(again, ask({ stream: true }))))).toEqual(deltas(first)); // ...and replays
  });

  it('gives the script the request body and the step count', async () => {
    const seen: unknown[] = [];
    const server = await start({
      script: (_body, context) => {
        const { step, headers } = context;
        seen.push([step, context.protocol === 'chat' ? context.body.messages.length : -1, headers['x-test']]);
        return { content: `step ${step}` };
      },
    });
    await post(server, ask(), { headers: { 'content-type': 'application/json', 'x-test': 'yes' } });
    const second = await (await post(server, ask())).json();
    expect(second.choices[0].message.content).toBe('step 2');
    expect(seen).toEqual([
      [1, 1, 'yes'],
      [2, 1, undefined],
    ]);
  });

  it('lists models', async () => {
    const server = await start({ script: [], models: ['a', 'b'] });
    const list = await (await fetch(`${server.baseURL}/models`)).json();
    expect(list).toEqual({
      object: 'list',
      data: [
        { id: 'a', object: 'model', created: 0, owned_by: 'ai4ts-testing' },
        { id: 'b', object: 'model', created: 0, owned_by: 'ai4ts-testing' },
      ],
    });
  });

  it('answers unknown routes, bad bodies and exhausted scripts with OpenAI-style errors', async () => {
    const server = await start({ script: [] });
    const notFound = await fetch(`${server.url}/v1/audio/speech`, { method: 'POST', body: '{}' });
    expect(notFound.status).toBe(404);
    expect((await notFound.json()).error.type).toBe('not_found');
    const bad = await post(server, { model: 'x' });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error).toMatchObject({ type: 'invalid_request_error', message: expect.stringContaining('messages') });
    const exhausted = await post(server, ask());
    expect(exhausted.status).toBe(500);
    expect((await exhausted.json()).error.message).toBe('The script has no turn for request 1');
  });

  it('a scripted HTTP error’s default body is the one the real API sends for that status', async () => {
    const statuses = [429, 500, 503, 401, 400];
    const server = await start({ script: statuses.map((status) => ({ httpError: { status } })) });
    const bodies = [];
    for (const _ of statuses) bodies.push((await (await post(server, ask())).json()).error);
    expect(bodies.map(({ type, code }) => [type, code])).toEqual([
      ['requests', 'rate_limit_exceeded'],
      ['server_error', null],
      ['server_error', null],
      ['invalid_request_error', 'invalid_api_key'],
      ['invalid_request_error', null],
    ]);
  });

  it('scripts HTTP errors, in-stream errors and cut-off streams', async () => {
    const server = await start({
      script: [
        { httpError: { status: 429 } },
        { httpError: { status: 503, body: { detail: 'overloaded' } } },
        { content: 'partial answer', streamError: { message: 'model crashed', code: 'internal' } },
        { content: 'a long answer that will be cut', cutOff: { afterChunks: 3 } },
        { content: 'a long answer that will be reset', cutOff: { afterChunks: 3, reset: true } },
      ],
    });
    const limited = await post(server, ask({ stream: true }));
    expect(limited.status).toBe(429);
    expect((await limited.json()).error.message).toBe('Scripted HTTP 429');
    const unavailable = await post(server, ask());
    expect([unavailable.status, await unavailable.json()]).toEqual([503, { detail: 'overloaded' }]);

    const crashed = await readStream(await post(server, ask({ stream: true })));
    expect(crashed.errors).toEqual([{ message: 'model crashed', code: 'internal' }]);
    expect(crashed.done).toBe(false);
    expect(assemble(crashed.chunks)).toMatchObject({ content: 'partial answer', finish: null });

    const cut = await readStream(await post(server, ask({ stream: true })));
    expect(cut.chunks).toHaveLength(3);
    expect(cut.done).toBe(false);

    const reset = await post(server, ask({ stream: true }));
    await expect(readStream(reset)).rejects.toThrow();
  });

  it('stops streaming when the client aborts, and closes with a stream in flight', async () => {
    const server = await start({ script: [{ content: 'slow '.repeat(50), chunkDelayMs: 5 }, { content: 'x'.repeat(50), chunkDelayMs: 5 }] });
    const controller = new AbortController();
    const response = await post(server, ask({ stream: true }), { signal: controller.signal });
    const received: string[] = [];
    await expect(
      (async () => {
        for await (const event of parseSse(response)) {
          received.push(event.data);
          if (received.length === 3) controller.abort();
        }
      })(),
    ).rejects.toThrow();
    expect(received).toHaveLength(3);

    const inFlight = await post(server, ask({ stream: true }));
    const reader = inFlight.body?.getReader();
    await reader?.read();
    await server.close();
    model = undefined;
    const drain = async () => {
      for (let read = await reader?.read(); read && !read.done; read = await reader?.read());
    };
    await expect(drain()).rejects.toThrow();
  });
});

describe('with the openai client', () => {
  it('streams content and fragmented tool calls that the openai client reassembles', async () => {
    const server = await start({
      script: [{ content: 'Looking up.', toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: { city: 'Zürich' } }] }],
    });
    const client = new OpenAI({ baseURL: server.baseURL, apiKey: 'sk-test', maxRetries: 0 });
    const stream = client.chat.completions.stream({
      model: 'mock-model',
      messages: [{ role: 'user', content: 'Weather?' }],
      stream_options: { include_usage: true },
    });
    const completion = await stream.finalChatCompletion();
    expect(completion.choices[0]?.message).toMatchObject({
      content: 'Looking up.',
      tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Z\\u00fcrich"}' } }],
    });
    expect(completion.choices[0]?.finish_reason).toBe('tool_calls');
    expect(completion.usage?.total_tokens).toBeGreaterThan(0);
    expect(server.requests[0]?.headers.authorization).toBe('Bearer sk-test');
  });
});

import {
  Ai4tsError,
  AuthenticationError,
  defineTool,
  PROVIDERS,
  ProtocolError,
  type StreamEvent,
  Transport,
} from '@ai4ts/core';
import { type ChatLoopRequest, ChatService, collectChatCompletion, toChatTool } from '@ai4ts/chat';
import { toWireRequest } from '../src/request.js';
import { encodeSse, parseSse } from '@ai4ts/sse';
import { HttpResponse, http } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { sseText } from '@ai4ts/test-kit';
import { chunk, finish, toolChunk } from './helpers.js';

const BASE = 'http://chat.test/v1';
const server = setupServer();
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => server.resetHandlers());
afterAll(() => server.close());

interface Seen {
  body: Record<string, unknown>;
  headers: Headers;
}

/** Answers chat/completions with `text` as SSE (or JSON when `json` is given, or raw `text`), recording the request. */
function answer(seen: Seen[], reply: { sse?: string; json?: unknown; text?: string; status?: number }) {
  server.use(
    http.post(`${BASE}/chat/completions`, async ({ request }) => {
      seen.push({ body: (await request.json()) as Record<string, unknown>, headers: request.headers });
      if (reply.json !== undefined) return HttpResponse.json(reply.json as object, { status: reply.status ?? 200 });
      if (reply.text !== undefined) return HttpResponse.text(reply.text);
      return new HttpResponse(reply.sse, { headers: { 'content-type': 'text/event-stream' } });
    }),
  );
}

const service = (provider = PROVIDERS.openai) =>
  new ChatService(new Transport({ provider, baseURL: BASE, apiKey: 'sk-test', maxRetries: 0 }));

const messages = [{ role: 'user' as const, content: 'Hi' }];
const STREAM = `${sseText([
  chunk({ role: 'assistant', content: '', reasoning_content: 'think' }),
  chunk({ content: 'Hello' }),
  toolChunk({ index: 0, id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }),
  finish('tool_calls'),
  { id: 'chatcmpl-1', choices: [], usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 } },
])}data: [DONE]\n\n`;

describe('ChatService over msw', () => {
  it('stream(): sends the wire body with stream and stream_options.include_usage, no loop field, no empty tools, bearer auth', async () => {
    const seen: Seen[] = [];
    answer(seen, { sse: STREAM });
    const request = {
      model: 'gpt-x',
      messages,
      temperature: 0.2,
      enable_thinking: true,
      tools: [],
      top_k: undefined,
      maxSteps: 3,
      passThroughToolCalls: false,
      concurrency: 2,
      onStepFinish: () => undefined,
      onToolCall: () => 'allow' as const,
      prepareStep: () => undefined,
    };
    const completion = await service().stream(request).final();
    expect(seen[0]?.body).toEqual({
      model: 'gpt-x',
      messages,
      temperature: 0.2,
      enable_thinking: true,
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(seen[0]?.headers.get('authorization')).toBe('Bearer sk-test');
    expect(seen[0]?.headers.get('content-type')).toContain('application/json');
    expect(request).toHaveProperty('maxSteps', 3); // the caller's object is untouched
    expect(completion.choices[0]?.message).toEqual({
      role: 'assistant',
      content: 'Hello',
      reasoning_content: 'think',
      tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }],
    });
    expect(completion.usage?.total_tokens).toBe(3);
  });

  it('stream(): keeps the caller\'s stream_options, and adds none for a provider whose preset refuses them', async () => {
    const seen: Seen[] = [];
    answer(seen, { sse: STREAM });
    await service().stream({ model: 'm', messages, stream_options: { include_usage: false } }).final();
    await service({ ...PROVIDERS.openai, name: 'legacy', quirks: { streamOptions: false } })
      .stream({ model: 'm', messages })
      .final();
    expect(seen[0]?.body.stream_options).toEqual({ include_usage: false });
    expect(seen[1]?.body).not.toHaveProperty('stream_options');
    expect(seen[1]?.body.stream).toBe(true);
  });

  it('stream(): events by iteration, by emitter, and .listener state agree', async () => {
    answer([], { sse: STREAM });
    const stream = service().stream({ model: 'm', messages });
    const emitted: string[] = [];
    stream.on('content', (e) => emitted.push(e.delta));
    const chunks: unknown[] = [];
    stream.on('chunk', (e) => chunks.push(e.chunk));
    const iterated: StreamEvent[] = [];
    for await (const event of stream) iterated.push(event);
    expect(iterated.map((e) => e.type)).toEqual([
      'reasoning',
      'content',
      'tool_call.start',
      'tool_call.delta',
      'tool_call.done',
      'finish',
      'usage',
    ]);
    expect(chunks).toHaveLength(5);
    expect(emitted).toEqual(['Hello']);
    expect(stream.listener.status).toBe('completed');
    expect(stream.listener.content).toBe('Hello');
    expect(await stream.final()).toEqual(stream.listener.completion);
  });

  it('every loop replays the stream from its first event, the usage after the finish included', async () => {
    answer([], { sse: STREAM });
    const stream = service().stream({ model: 'm', messages });
    const completion = await stream.final();
    const first: StreamEvent[] = [];
    for await (const event of stream) first.push(event);
    const second: StreamEvent[] = [];
    for await (const event of stream) second.push(event);
    expect(first.at(-1)).toMatchObject({ type: 'usage', usage: { total_tokens: 3 } });
    expect(second).toEqual(first);
    expect(completion.usage?.total_tokens).toBe(3);
  });

  it('toReadableStream(): the normalized events as SSE frames, then event: done', async () => {
    answer([], { sse: STREAM });
    const stream = service().stream({ model: 'm', messages });
    const frames: { event: string; data: string }[] = [];
    for await (const { event, data } of parseSse(stream.toReadableStream())) frames.push({ event, data });
    const events: StreamEvent[] = [];
    for await (const event of stream) events.push(event);
    expect(frames.at(-1)).toEqual({ event: 'done', data: '' });
    expect(frames.slice(0, -1).map((f) => f.event)).toEqual(events.map((e) => e.type));
    expect(frames.slice(0, -1).map((f) => JSON.parse(f.data))).toEqual(events);
  });

  it('toReadableStream(): a failure becomes a last event: error frame with the class, message and code', async () => {
    answer([], { sse: sseText([chunk({ content: 'x' }), { error: { message: 'boom', code: 'overloaded' } }]) });
    const stream = service().stream({ model: 'm', messages });
    const frames: { event: string; data: string }[] = [];
    for await (const { event, data } of parseSse(stream.toReadableStream())) frames.push({ event, data });
    expect(frames.map((f) => f.event)).toEqual(['content', 'error']);
    expect(JSON.parse(frames[1]?.data ?? '')).toEqual({ name: 'ApiError', message: 'boom', code: 'overloaded' });
  });

  it('a proxy can re-encode the chunk events as Chat Completions SSE that reads back to the same completion', async () => {
    answer([], { sse: STREAM });
    const stream = service().stream({ model: 'm', messages });
    let text = '';
    stream.on('chunk', (e) => {
      text += encodeSse({ data: JSON.stringify(e.chunk) });
    });
    const completion = await stream.final();
    expect(await collectChatCompletion(`${text}data: [DONE]\n\n`)).toEqual(completion);
  });

  it('an HTTP 401 rejects .final() and the iteration with AuthenticationError; an un-awaited stream raises no unhandled rejection', async () => {
    answer([], { json: { error: { message: 'Incorrect API key', type: 'invalid_request_error', code: 'invalid_api_key' } }, status: 401 });
    const ignored = service().stream({ model: 'm', messages });
    const stream = service().stream({ model: 'm', messages });
    const iterate = async () => {
      for await (const _ of stream) {
        // nothing arrives
      }
    };
    await expect(iterate()).rejects.toBeInstanceOf(AuthenticationError);
    await expect(stream.final()).rejects.toMatchObject({ status: 401, code: 'invalid_api_key' });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(ignored.listener.error).toBeInstanceOf(AuthenticationError);
  });

  it('an invalid request throws synchronously, before any request', () => {
    const seen: Seen[] = [];
    answer(seen, { sse: STREAM });
    expect(() => service().stream({ model: '', messages: [] })).toThrow(Ai4tsError);
    // @ts-expect-error: an unknown role, as plain JavaScript could send it.
    expect(() => toWireRequest({ model: 'm', messages: [{ role: 'wizard', content: 'x' }] })).toThrow(/Invalid chat request/);
    expect(seen).toEqual([]);
  });

  it('create(): sends no stream fields and returns the JSON completion as is', async () => {
    const seen: Seen[] = [];
    const json = {
      id: 'chatcmpl-9',
      object: 'chat.completion',
      created: 1,
      model: 'm',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hi there' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 },
    };
    answer(seen, { json });
    // Loop fields on a plain call, as a request built for the loop and passed on could carry them.
    const request: ChatLoopRequest = {
      model: 'm',
      messages,
      stream: true,
      stream_options: { include_usage: true },
      tools: [],
      maxSteps: 2,
      onStepFinish: () => undefined,
    };
    const { tools: _, ...rest } = request;
    const completion = await service().create({ ...rest, tools: [] });
    expect(seen[0]?.body).toEqual({ model: 'm', messages });
    expect(completion).toEqual(json);
  });

  it('create(): a body that is not JSON, or JSON without choices, is a ProtocolError', async () => {
    answer([], { text: '<html>Bad gateway</html>' });
    await expect(service().create({ model: 'm', messages })).rejects.toBeInstanceOf(ProtocolError);
    answer([], { json: { object: 'list', data: [] } });
    await expect(service().create({ model: 'm', messages })).rejects.toThrow(/no choices/);
  });

  it('create(): a daemon that answers text/event-stream anyway is aggregated to the same completion', async () => {
    answer([], { sse: STREAM });
    const viaCreate = await service().create({ model: 'm', messages });
    answer([], { sse: STREAM });
    const viaStream = await service().stream({ model: 'm', messages }).final();
    expect(viaCreate).toEqual(viaStream);
    expect(viaCreate.choices[0]?.message.content).toBe('Hello');
  });

  it('create(): a 200 body holding {error} is an ApiError', async () => {
    answer([], { json: { error: { message: 'quota', code: 'insufficient_quota' } } });
    await expect(service().create({ model: 'm', messages })).rejects.toMatchObject({ name: 'ApiError', code: 'insufficient_quota' });
  });

  it('toWireRequest(): tools made by defineTool go out in their JSON Schema form; wire-format tools unchanged', async () => {
    const seen: Seen[] = [];
    answer(seen, { sse: STREAM });
    const weather = defineTool({ name: 'get_weather', description: 'Weather', parameters: z.object({ city: z.string() }) });
    const wire = { type: 'function', function: { name: 'now', parameters: { type: 'object', properties: {} } } };
    const loopRequest: ChatLoopRequest = { model: 'm', messages, tools: [weather, wire] };
    const body = toWireRequest(loopRequest);
    expect(body.tools).toEqual([toChatTool(weather), wire]);
    expect(loopRequest.tools).toEqual([weather, wire]); // never mutated
    await service().stream({ model: 'm', messages, tools: [toChatTool(weather), wire] }).final();
    expect(seen[0]?.body.tools).toEqual(body.tools);
    expect(body.tools).toMatchObject([
      { type: 'function', function: { name: 'get_weather', description: 'Weather', parameters: { properties: { city: { type: 'string' } } } } },
      wire,
    ]);
  });

  it('stream(): a server that ignores stream: true and answers one JSON completion is read the same way', async () => {
    answer([], {
      json: {
        id: 'chatcmpl-j',
        object: 'chat.completion',
        created: 5,
        model: 'm',
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: '<think>why</think>Because.',
              tool_calls: [{ id: 'call_j', type: 'function', function: { name: 'f', arguments: '{}' } }],
            },
            finish_reason: 'tool_calls',
          },
        ],
        usage: { prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 },
      },
    });
    const stream = service().stream({ model: 'm', messages });
    const done: string[] = [];
    stream.on('tool_call.done', (e) => done.push(e.id));
    const completion = await stream.final();
    expect(completion.choices[0]?.message).toEqual({
      role: 'assistant',
      content: 'Because.',
      reasoning_content: 'why',
      tool_calls: [{ id: 'call_j', type: 'function', function: { name: 'f', arguments: '{}' } }],
    });
    expect(completion.usage?.total_tokens).toBe(5);
    expect(done).toEqual(['call_j']);
  });
});

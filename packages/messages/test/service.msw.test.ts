/** Request and response shapes of the service, against msw. */
import { Ai4tsError, ApiError, BadRequestError, ProtocolError, Transport } from '@ai4ts/core';
import { HttpResponse, http } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { sseText } from '@ai4ts/test-kit';
import {
  type Message,
  type MessageCreateParams,
  MessagesStream,
  MessagesService,
  streamMessage,
} from '../src/index.js';
import { helloStream, thinkingTextToolStream } from './fixtures.js';

const BASE = 'https://api.anthropic.com/v1';
const server = setupServer();
const seen: Array<{ url: string; headers: Headers; body: Record<string, unknown> }> = [];

beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => {
  server.resetHandlers();
  seen.length = 0;
});
afterAll(() => server.close());

function answer(reply: () => Response): void {
  server.use(
    http.post(`${BASE}/messages`, async ({ request }) => {
      seen.push({
        url: request.url,
        headers: request.headers,
        body: (await request.json()) as Record<string, unknown>,
      });
      return reply();
    }),
  );
}

const sse = (text: string) => new HttpResponse(text, { headers: { 'content-type': 'text/event-stream' } });
const service = () => new MessagesService(new Transport({ provider: 'anthropic', apiKey: 'sk-ant-test-key' }));
const request: MessageCreateParams = {
  model: 'claude-sonnet-4-5',
  max_tokens: 1024,
  system: 'Be brief.',
  messages: [{ role: 'user', content: 'Hello' }],
};

const final: Message = {
  id: 'msg_013Zva2CMHLNnXjNJJKqJ2EF',
  type: 'message',
  role: 'assistant',
  model: 'claude-sonnet-4-5',
  content: [{ type: 'text', text: 'Hi! How can I help?' }],
  stop_reason: 'end_turn',
  stop_sequence: null,
  usage: { input_tokens: 12, output_tokens: 9 },
};

describe('MessagesService.create', () => {
  it('POSTs /messages with x-api-key, anthropic-version and the body with stream false', async () => {
    answer(() => HttpResponse.json(final));
    const message = await service().create(request, {
      headers: { 'anthropic-beta': 'token-efficient-tools-2025-02-19' },
      extraBody: { top_k: 5 },
    });
    expect(message).toEqual(final);
    const [sent] = seen;
    expect(sent?.url).toBe(`${BASE}/messages`);
    expect(sent?.headers.get('x-api-key')).toBe('sk-ant-test-key');
    expect(sent?.headers.get('anthropic-version')).toBe('2023-06-01');
    expect(sent?.headers.get('anthropic-beta')).toBe('token-efficient-tools-2025-02-19');
    expect(sent?.headers.get('authorization')).toBeNull();
    expect(sent?.body).toEqual({ ...request, stream: false, top_k: 5 });
  });

  it('aggregates an SSE answer transparently', async () => {
    answer(() => sse(sseText(thinkingTextToolStream(), { named: true })));
    const message = await service().create(request);
    expect(message.content.map((b) => b.type)).toEqual(['thinking', 'text', 'tool_use']);
    expect(message.stop_reason).toBe('tool_use');
  });

  it('an HTTP error is the typed ApiError with the provider type', async () => {
    answer(() =>
      HttpResponse.json(
        { type: 'error', error: { type: 'invalid_request_error', message: 'max_tokens: Field required' } },
        { status: 400 },
      ),
    );
    const error = await service()
      .create(request)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BadRequestError);
    expect((error as ApiError).type).toBe('invalid_request_error');
    expect((error as ApiError).message).toContain('max_tokens: Field required');
  });

  it('rejects a request without the required fields before sending it', async () => {
    const error = await service()
      .create({ model: '', messages: [] } as unknown as MessageCreateParams)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Ai4tsError);
    expect((error as Error).message).toMatch(/max_tokens/);
    expect(seen).toHaveLength(0);
  });
});

describe('MessagesService.create: what the body holds', () => {
  it('the exact wire body: no empty tools, no undefined field, stream false', async () => {
    answer(() => HttpResponse.json(final));
    await service().create({ ...request, tools: [], temperature: undefined });
    expect(seen[0]?.body).toEqual({ ...request, stream: false });
  });

  it('a 200 body holding { error } is the ApiError', async () => {
    answer(() => HttpResponse.json({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }));
    const error = await service()
      .create(request)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).type).toBe('overloaded_error');
  });

  it('a body that is not JSON, or JSON that is not a message, is a ProtocolError with the body', async () => {
    answer(() => new HttpResponse('<html>bad gateway</html>', { headers: { 'content-type': 'text/html' } }));
    const html = await service()
      .create(request)
      .catch((e: unknown) => e);
    expect(html).toBeInstanceOf(ProtocolError);
    expect((html as ProtocolError).line).toBe('<html>bad gateway</html>');
    answer(() => HttpResponse.json({ object: 'chat.completion', choices: [] }));
    await expect(service().create(request)).rejects.toThrow(/not a Messages message/);
  });
});

describe('streamMessage', () => {
  it('returns the running handle (not a Promise); an invalid request throws synchronously', async () => {
    answer(() => sse(sseText(helloStream(), { named: true })));
    const transport = new Transport({ provider: 'anthropic', apiKey: 'sk-ant-test-key' });
    expect(() => streamMessage(transport, { ...request, model: '' })).toThrow(Ai4tsError);
    const stream = streamMessage(transport, { ...request, tools: [] });
    expect(stream).toBeInstanceOf(MessagesStream);
    expect((await stream.final()).content).toEqual([{ type: 'text', text: 'Hello!' }]);
    expect(seen).toHaveLength(1);
    expect(seen[0]?.body).toEqual({ ...request, stream: true });
  });

  it('toReadableStream() is the SSE of the normalized events, then done', async () => {
    answer(() => sse(sseText(helloStream(), { named: true })));
    const text = await new Response(service().stream(request).toReadableStream()).text();
    const names = [...text.matchAll(/^event: (.+)$/gm)].map((match) => match[1]);
    expect(names).toEqual(['usage', 'content', 'content', 'usage', 'finish', 'done']);
  });
});

describe('MessagesService.stream', () => {
  it('POSTs with stream true and accept text/event-stream; final() resolves to the message', async () => {
    answer(() => sse(sseText(helloStream(), { named: true })));
    const stream = service().stream(request);
    const message = await stream.final();
    expect(message.content).toEqual([{ type: 'text', text: 'Hello!' }]);
    expect(seen[0]?.body).toEqual({ ...request, stream: true });
    expect(seen[0]?.headers.get('accept')).toBe('text/event-stream');
    expect(seen[0]?.headers.get('x-api-key')).toBe('sk-ant-test-key');
    expect(seen[0]?.headers.get('anthropic-version')).toBe('2023-06-01');
    expect(stream.listener.status).toBe('completed');
  });

  it('iterates the normalized events in order, then ends', async () => {
    answer(() => sse(sseText(thinkingTextToolStream(), { named: true })));
    const types: string[] = [];
    for await (const event of service().stream(request)) types.push(event.type);
    expect(types).toEqual([
      'usage',
      'reasoning',
      'reasoning',
      'content',
      'content',
      'tool_call.start',
      'tool_call.delta',
      'tool_call.delta',
      'tool_call.delta',
      'tool_call.done',
      'usage',
      'finish',
    ]);
  });

  it('an HTTP error rejects final() and the iteration with a partial of null', async () => {
    answer(() =>
      HttpResponse.json({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }, { status: 529 }),
    );
    const stream = service().stream(request, { maxRetries: 0 });
    const error = (await stream.final().catch((e: unknown) => e)) as ApiError;
    expect(error).toBeInstanceOf(ApiError);
    expect(error.status).toBe(529);
    expect(error.type).toBe('overloaded_error');
    expect(error.partial).toBeUndefined();
    await expect(async () => {
      for await (const _ of stream) {
        // nothing arrives
      }
    }).rejects.toBe(error);
  });

  it('a second loop yields the same events from the first', async () => {
    answer(() => sse(sseText(helloStream(), { named: true })));
    const stream = service().stream(request);
    const first: string[] = [];
    for await (const event of stream) first.push(event.type);
    const second: string[] = [];
    for await (const event of stream) second.push(event.type);
    expect(first).toEqual(['usage', 'content', 'content', 'usage', 'finish']);
    expect(second).toEqual(first);
  });
});

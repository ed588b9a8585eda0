/**
 * No API key in any error, whatever the server echoes: every error type the SDK raises from server data, for each
 * protocol, searched in String(), JSON.stringify(), the stack, util.inspect(depth 10) and the cause chain. The
 * Transport redacts server data once, before any listener, collector or error sees it.
 */
import { inspect } from 'node:util';
import { Ai4ts, Ai4tsError } from 'ai4ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serve, sseFrame, type TestServer } from '@ai4ts/test-kit';

const KEY = 'sk-test-SECRET-0123456789abcdef';
const ESCAPED = JSON.stringify(KEY).slice(1, -1);
/** The key as JSON may spell it: every character a `\u` escape. Only visible once the JSON is parsed. */
const UNICODE = [...KEY].map((char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');

interface Canned {
  status?: number;
  type: string;
  body: string;
  headers?: Record<string, string>;
}

let server: TestServer;
let baseURL = '';
let next: Canned = { type: 'application/json', body: '{}' };

beforeAll(async () => {
  server = await serve((_req, res) => {
    res.writeHead(next.status ?? 200, { 'content-type': next.type, ...next.headers });
    res.end(next.body);
  });
  baseURL = server.baseURL;
});
afterAll(() => server.close());

const client = () => new Ai4ts({ provider: 'openai-compatible', baseURL, apiKey: KEY, maxRetries: 0 });
/** Gemini sends the key as `x-goog-api-key`, and Google's errors name it ("API key not valid"). */
const google = () => new Ai4ts({ provider: 'gemini', baseURL, apiKey: KEY, maxRetries: 0 });
/** Frames as `[event, data]`: the data as sent, JSON or not. */
const sse = (...frames: [string | undefined, string][]) => frames.map(([event, data]) => sseFrame(data, event)).join('');

/** Every way an error can be looked at; none may show the key. */
function expectNoKey(error: unknown): void {
  expect(error).toBeInstanceOf(Ai4tsError);
  const views: string[] = [String(error), JSON.stringify(error), inspect(error, { depth: 10 })];
  for (let cause: unknown = error; cause instanceof Error; cause = cause.cause) {
    views.push(cause.message, cause.stack ?? '');
  }
  for (const view of views) expect(view).not.toContain(KEY);
}

const chat = { model: 'm', messages: [{ role: 'user' as const, content: 'Hi' }] };
const responses = { model: 'm', input: 'Hi' };
const messages = { model: 'm', max_tokens: 16, messages: [{ role: 'user' as const, content: 'Hi' }] };
const gemini = { model: 'm', contents: [{ role: 'user' as const, parts: [{ text: 'Hi' }] }] };
/** Google's error body. */
const googleError = (message: string, code = 400) => JSON.stringify({ error: { code, message, status: 'INVALID_ARGUMENT' } });

const cases: Record<string, [Canned, (c: Ai4ts) => Promise<unknown>][]> = {
  'an in-stream error frame': [
    [
      { type: 'text/event-stream', body: sse([undefined, JSON.stringify({ error: { message: `Invalid key ${KEY}` } })]) },
      (c) => c.chat.stream(chat).final(),
    ],
    [
      {
        type: 'text/event-stream',
        body: sse(
          ['response.created', JSON.stringify({ type: 'response.created', sequence_number: 0, response: { id: 'r', object: 'response', status: 'in_progress', output: [] } })],
          ['error', JSON.stringify({ type: 'error', sequence_number: 1, code: 'invalid_api_key', message: `Key ${KEY} is wrong` })],
        ),
      },
      (c) => c.responses.stream(responses).final(),
    ],
    [
      {
        type: 'text/event-stream',
        body: sse(
          ['response.created', JSON.stringify({ type: 'response.created', sequence_number: 0, response: { id: 'r', object: 'response', status: 'in_progress', output: [] } })],
          ['response.failed', JSON.stringify({ type: 'response.failed', sequence_number: 1, response: { id: 'r', object: 'response', status: 'failed', output: [], error: { code: 'server_error', message: `Upstream said ${KEY}` } } })],
        ),
      },
      (c) => c.responses.stream(responses).final(),
    ],
    [
      {
        type: 'text/event-stream',
        body: sse(['error', JSON.stringify({ type: 'error', error: { type: 'authentication_error', message: `x-api-key ${KEY}` } })]),
      },
      (c) => c.messages.stream(messages).final(),
    ],
    [
      {
        type: 'text/event-stream',
        body: sse(
          [undefined, JSON.stringify({ candidates: [{ content: { role: 'model', parts: [{ text: 'Hi' }] }, index: 0 }] })],
          [undefined, googleError(`API key ${KEY} expired`, 500)],
        ),
      },
      () => google().gemini.stream(gemini).final(),
    ],
    [
      {
        type: 'text/event-stream',
        body: sse([undefined, JSON.stringify({ promptFeedback: { blockReason: 'OTHER', blockReasonMessage: `key ${KEY}` } })]),
      },
      () => google().gemini.stream(gemini).final(),
    ],
  ],
  'data that is not JSON (ProtocolError.line and its cause)': [
    [{ type: 'text/event-stream', body: sse([undefined, `{oops ${KEY}`]) }, (c) => c.chat.stream(chat).final()],
    [{ type: 'text/event-stream', body: sse(['response.created', `{oops ${KEY}`]) }, (c) => c.responses.stream(responses).final()],
    [{ type: 'text/event-stream', body: sse(['message_start', `{oops ${KEY}`]) }, (c) => c.messages.stream(messages).final()],
    [{ type: 'text/event-stream', body: sse([undefined, `{oops ${KEY}`]) }, () => google().gemini.stream(gemini).final()],
  ],
  'a 200 JSON {error} body, to a stream and to create': [
    [{ type: 'application/json', body: JSON.stringify({ error: { message: `bad ${ESCAPED}` } }) }, (c) => c.chat.stream(chat).final()],
    [{ type: 'application/json', body: JSON.stringify({ error: { message: `bad ${KEY}` } }) }, (c) => c.chat.create(chat)],
    [{ type: 'application/json', body: JSON.stringify({ error: { message: `bad ${KEY}` } }) }, (c) => c.responses.create(responses)],
    [{ type: 'application/json', body: JSON.stringify({ type: 'error', error: { type: 'x', message: `bad ${KEY}` } }) }, (c) => c.messages.create(messages)],
    [{ type: 'application/json', body: googleError(`bad ${ESCAPED}`) }, () => google().gemini.create(gemini)],
    [{ type: 'application/json', body: googleError(`bad ${KEY}`) }, () => google().gemini.stream(gemini).final()],
  ],
  'an HTTP error echoing the key in its body and a header': [
    [
      { status: 401, type: 'application/json', body: JSON.stringify({ error: { message: `Incorrect API key provided: ${KEY}` } }), headers: { 'x-echo': KEY } },
      (c) => c.chat.create(chat),
    ],
    [
      { status: 401, type: 'application/json', body: JSON.stringify({ error: { message: `Incorrect API key: ${KEY}` } }), headers: { 'x-echo': KEY } },
      (c) => c.messages.stream(messages).final(),
    ],
    [
      { status: 400, type: 'application/json', body: googleError(`API key not valid: ${KEY}`), headers: { 'x-echo': KEY } },
      () => google().gemini.create(gemini),
    ],
    [
      { status: 403, type: 'application/json', body: googleError(`Key ${KEY} has no access`, 403), headers: { 'x-echo': KEY } },
      () => google().gemini.stream(gemini).final(),
    ],
  ],
  'the key spelled with JSON \\u escapes, in every place the raw key is redacted from': [
    [{ type: 'text/event-stream', body: sse([undefined, `{"error":{"message":"Invalid key ${UNICODE}"}}`]) }, (c) => c.chat.stream(chat).final()],
    [
      { type: 'text/event-stream', body: sse(['error', `{"type":"error","error":{"type":"authentication_error","message":"x-api-key ${UNICODE}"}}`]) },
      (c) => c.messages.stream(messages).final(),
    ],
    [
      {
        type: 'text/event-stream',
        body: sse(['error', `{"type":"error","sequence_number":0,"code":"invalid_api_key","message":"Key ${UNICODE}"}`]),
      },
      (c) => c.responses.stream(responses).final(),
    ],
    [{ type: 'application/json', body: `{"error":{"message":"bad ${UNICODE}"}}` }, (c) => c.chat.create(chat)],
    [{ type: 'application/json', body: `{"error":{"message":"bad ${UNICODE}"}}` }, (c) => c.chat.stream(chat).final()],
    [{ status: 401, type: 'application/json', body: `{"error":{"message":"Incorrect API key: ${UNICODE}"}}` }, (c) => c.responses.create(responses)],
    [
      { type: 'text/event-stream', body: sse([undefined, `{"error":{"code":500,"message":"API key ${UNICODE}","status":"INTERNAL"}}`]) },
      () => google().gemini.stream(gemini).final(),
    ],
    [{ status: 400, type: 'application/json', body: `{"error":{"code":400,"message":"API key not valid ${UNICODE}"}}` }, () => google().gemini.create(gemini)],
  ],
  'a non-streaming create answered with SSE (the collector fallback)': [
    [{ type: 'text/event-stream', body: sse([undefined, JSON.stringify({ error: { message: KEY } })]) }, (c) => c.chat.create(chat)],
    [{ type: 'text/event-stream', body: sse(['error', JSON.stringify({ type: 'error', error: { type: 'x', message: KEY } })]) }, (c) => c.messages.create(messages)],
    [{ type: 'text/event-stream', body: sse([undefined, googleError(KEY, 500)]) }, () => google().gemini.create(gemini)],
  ],
};

describe('no API key in any error built from server data', () => {
  for (const [name, calls] of Object.entries(cases)) {
    it(name, async () => {
      for (const [canned, call] of calls) {
        next = canned;
        const error = await call(client()).then(
          () => new Error('expected a failure'),
          (e: unknown) => e,
        );
        expectNoKey(error);
      }
    });
  }

  it('the echoed key really reached the client (the redaction is what hides it)', async () => {
    next = { status: 401, type: 'application/json', body: JSON.stringify({ error: { message: `Incorrect API key provided: ${KEY}` } }) };
    const error = await client().chat.create(chat).catch((e: unknown) => e);
    expect(String(error)).toContain('[redacted]');
    next = { status: 400, type: 'application/json', body: googleError(`API key not valid: ${KEY}`) };
    const googleError400 = await google().gemini.create(gemini).catch((e: unknown) => e);
    expect(String(googleError400)).toContain('[redacted]');
  });
});

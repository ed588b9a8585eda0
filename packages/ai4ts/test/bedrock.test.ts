/**
 * Claude on Amazon Bedrock through `client.messages`, over real sockets: a node:http server that answers only what
 * Bedrock accepts (a SigV4 Authorization for the credentials it knows, the model id URL-encoded in the path,
 * `anthropic_version` in the body and no `model` nor `stream` there) with Anthropic's JSON, or with
 * `invoke-with-response-stream`'s AWS event-stream frames made by @smithy/eventstream-codec: each a `chunk` whose
 * payload is `{"bytes": base64 of one Anthropic event}`.
 */
import { AuthenticationError, Ai4ts, ApiError, ProtocolError } from 'ai4ts';
import { BEDROCK_ANTHROPIC_VERSION, bedrock } from 'ai4ts/bedrock';
import { bedrockEventFrame, bedrockExceptionFrame, concatBytes, serve, type TestServer } from '@ai4ts/test-kit';
import { afterEach, describe, expect, it } from 'vitest';

const MODEL = 'anthropic.claude-3-5-haiku-20241022-v1:0';
const PATH = '/model/anthropic.claude-3-5-haiku-20241022-v1%3A0';
const ACCESS_KEY_ID = 'AKIAIOSFODNN7EXAMPLE';
const SECRET = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYSECRETKEY';

type Event = Record<string, unknown> & { type: string };
const started = {
  id: 'msg_bdrk_01',
  type: 'message',
  role: 'assistant',
  model: 'claude-3-5-haiku-20241022',
  content: [],
  stop_reason: null,
  stop_sequence: null,
  usage: { input_tokens: 12, output_tokens: 1 },
};
const hello: Event[] = [
  { type: 'message_start', message: started },
  { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
  { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hello' } },
  { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: ' from Bedrock' } },
  { type: 'content_block_stop', index: 0 },
  { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 4 } },
  {
    type: 'message_stop',
    'amazon-bedrock-invocationMetrics': { inputTokenCount: 12, outputTokenCount: 4, invocationLatency: 300, firstByteLatency: 100 },
  },
];

/** One invoke-with-response-stream frame carrying an Anthropic event. */
const chunk = (event: Event) => bedrockEventFrame('chunk', { bytes: Buffer.from(JSON.stringify(event)).toString('base64') });

let server: TestServer | undefined;
let refusals: string[] = [];

afterEach(async () => {
  await server?.close();
  server = undefined;
  refusals = [];
});

/**
 * The Bedrock side; `streamOf(n)` gives request n's body (a list of byte slices, written one by one) for a stream.
 * The signature is checked for shape and key id only: its value is verified in core's bedrock.test.ts.
 */
async function startBedrock(streamOf: (n: number) => Uint8Array[] = () => [concatBytes(hello.map(chunk))]) {
  server = await serve((req, res, n) => {
    const body = JSON.parse(server?.bodies[n - 1] ?? '{}') as Record<string, unknown>;
    const refuse = (status: number, reason: string) => {
      refusals.push(reason);
      res.writeHead(status, { 'content-type': 'application/json', 'x-amzn-errortype': 'ValidationException' });
      res.end(JSON.stringify({ message: reason }));
    };
    const auth = String(req.headers.authorization);
    if (!auth.startsWith(`AWS4-HMAC-SHA256 Credential=${ACCESS_KEY_ID}/`) || !/\/us-east-1\/bedrock\/aws4_request, /.test(auth)) {
      return refuse(403, 'bad signature');
    }
    if ('model' in body || 'stream' in body) return refuse(400, 'extraneous key');
    if (body.anthropic_version !== BEDROCK_ANTHROPIC_VERSION) return refuse(400, 'anthropic_version missing');
    if (req.url === `${PATH}/invoke`) {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ ...started, content: [{ type: 'text', text: 'Hi' }], stop_reason: 'end_turn' }));
    }
    if (req.url !== `${PATH}/invoke-with-response-stream`) return refuse(404, `no route ${req.url}`);
    res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream' });
    const parts = streamOf(n);
    const write = (i: number) => {
      if (i === parts.length) return res.end();
      res.write(parts[i], () => setImmediate(() => write(i + 1)));
    };
    write(0);
  });
  return server;
}

function client(url: string, maxRetries = 0) {
  return new Ai4ts({
    provider: bedrock({ region: 'us-east-1', credentials: { accessKeyId: ACCESS_KEY_ID, secretAccessKey: SECRET } }),
    baseURL: url.replace(/\/$/, ''),
    maxRetries,
    backoff: { initialMs: 1, maxMs: 1 },
  });
}

const request = { model: MODEL, max_tokens: 64, messages: [{ role: 'user' as const, content: 'Hi' }] };

describe('Claude on Bedrock through client.messages', () => {
  it('create: invoke, signed, the model in the path', async () => {
    const { url } = await startBedrock();
    const message = await client(url).messages.create(request);
    expect(message.content).toEqual([{ type: 'text', text: 'Hi' }]);
    expect(refusals).toEqual([]);
  });

  it('stream: event-stream frames cut at every byte are read by the Messages listener', async () => {
    const bytes = concatBytes(hello.map(chunk));
    // Every frame boundary crossed: the body written one byte at a time.
    const { url } = await startBedrock(() => [...bytes].map((b) => Uint8Array.of(b)));
    const stream = client(url).messages.stream(request);
    const texts: string[] = [];
    stream.on('content', (event) => texts.push(event.delta));
    const final = await stream.final();
    expect(texts.join('')).toBe('Hello from Bedrock');
    expect(final.content).toEqual([{ type: 'text', text: 'Hello from Bedrock' }]);
    expect(final.stop_reason).toBe('end_turn');
    expect(final.usage).toMatchObject({ input_tokens: 12, output_tokens: 4 });
    expect(refusals).toEqual([]);
  });

  it('a throttlingException before the first event is retried; the retry streams', async () => {
    const { url } = await startBedrock((n) =>
      n === 1 ? [bedrockExceptionFrame('throttlingException', 'Too many requests, please wait')] : [concatBytes(hello.map(chunk))],
    );
    const final = await client(url, 2).messages.stream(request).final();
    expect(final.content).toEqual([{ type: 'text', text: 'Hello from Bedrock' }]);
    expect(server?.requests).toBe(2);
  });

  it('an exception after the first event is a typed error with what arrived as partial, not retried', async () => {
    const { url } = await startBedrock(() => [
      concatBytes(hello.slice(0, 3).map(chunk)),
      bedrockExceptionFrame('modelStreamErrorException', 'The model failed'),
    ]);
    const error = await client(url, 2).messages.stream(request).final().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ code: 'modelStreamErrorException', message: 'modelStreamErrorException: The model failed' });
    expect(JSON.stringify((error as ApiError).partial)).toContain('Hello');
    expect(server?.requests).toBe(1);
  });

  it('a stream cut inside a frame is a ProtocolError, never a clean end', async () => {
    const bytes = concatBytes(hello.map(chunk));
    const { url } = await startBedrock(() => [bytes.subarray(0, bytes.length - 7)]);
    const error = await client(url).messages.stream(request).final().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProtocolError);
    expect(String((error as Error).message)).toMatch(/ended inside a message/);
  });

  it('a frame with a bad CRC is a ProtocolError', async () => {
    const bytes = concatBytes(hello.map(chunk));
    bytes[40] = (bytes[40] ?? 0) ^ 0xff;
    const { url } = await startBedrock(() => [bytes]);
    await expect(client(url).messages.stream(request).final()).rejects.toThrow(ProtocolError);
  });

  it('fixed credentials echoed by the server in a stream are redacted from the result', async () => {
    const echo = hello.map((event) =>
      event.type === 'content_block_delta' ? { ...event, delta: { type: 'text_delta', text: `${SECRET} ${ACCESS_KEY_ID}` } } : event,
    );
    const { url } = await startBedrock(() => [concatBytes(echo.map(chunk))]);
    const final = await client(url).messages.stream(request).final();
    const text = JSON.stringify(final);
    expect(text).toContain('[redacted]');
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain(ACCESS_KEY_ID);
  });

  it('a refused signature is the AuthenticationError, without the secret', async () => {
    const { url } = await startBedrock();
    const wrong = new Ai4ts({
      provider: bedrock({ region: 'us-east-1', credentials: { accessKeyId: 'AKIAOTHERKEY00000000', secretAccessKey: SECRET } }),
      baseURL: url.replace(/\/$/, ''),
      maxRetries: 0,
    });
    const error = await wrong.messages.create(request).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(JSON.stringify(error) + String(error)).not.toContain(SECRET);
  });
});

/**
 * Amazon Bedrock's transport: SigV4 against AWS's published test vectors, and against a node:http server on
 * 127.0.0.1 that checks each request's signature itself (its own SigV4, node:crypto, written from AWS's
 * specification); credentials from the environment or a function, cached until they expire, never in an error or a
 * log line.
 */
import { createHash, createHmac } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { Ai4tsError, ApiError, AuthenticationError, type Logger, ProtocolError, Transport } from '@ai4ts/core';
import { AwsSigner, BEDROCK_ANTHROPIC_VERSION, bedrock } from '@ai4ts/core/bedrock';
import {
  bedrockEventFrame,
  bedrockExceptionFrame,
  eventStreamFrame,
  serve,
  type TestServer,
} from '@ai4ts/test-kit';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CASES, SUITE } from './fixtures/sigv4-vectors.js';
import { expectNoSecret } from './secret.js';

describe('SigV4: the AWS Signature Version 4 Test Suite', () => {
  const signer = new AwsSigner({ service: SUITE.service, region: SUITE.region, credentials: SUITE.credentials });
  for (const vector of CASES) {
    it(vector.name, async () => {
      const url = new URL(`https://example.amazonaws.com${vector.target}`);
      const headers = await signer.sign(
        { method: vector.method, url, headers: new Headers(vector.headers), body: undefined },
        SUITE.datetime,
      );
      expect(headers.get('x-amz-date')).toBe(SUITE.datetime);
      expect(headers.get('authorization')).toBe(
        `AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=${vector.signedHeaders}, Signature=${vector.signature}`,
      );
    });
  }
});

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const hmac = (key: string | Buffer, text: string) => createHmac('sha256', key).update(text).digest();
/** RFC 3986 encoding of one path segment, as SigV4 wants it. */
const encodeSegment = (s: string) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/**
 * The signature AWS would compute for a request as received, from AWS's SigV4 specification: canonical request
 * (method, each path segment URI-encoded again, sorted query, signed headers, body hash), string to sign, the key
 * derived from the secret, date, region and service.
 */
function expectedAuthorization(req: IncomingMessage, body: string, secret: string): string {
  const auth = String(req.headers.authorization);
  const signedHeaders = /SignedHeaders=([^,]+)/.exec(auth)?.[1] ?? '';
  const credential = /Credential=([^,]+)/.exec(auth)?.[1] ?? '';
  const [accessKeyId, date, region, service] = credential.split('/');
  const amzDate = String(req.headers['x-amz-date']);
  const url = new URL(req.url ?? '/', 'http://x');
  const canonicalUri = url.pathname.split('/').map(encodeSegment).join('/');
  const query = [...url.searchParams].map(([k, v]) => `${encodeSegment(k)}=${encodeSegment(v)}`).sort().join('&');
  const canonicalHeaders = signedHeaders
    .split(';')
    .map((name) => `${name}:${String(req.headers[name]).trim().replace(/\s+/g, ' ')}\n`)
    .join('');
  const canonical = [req.method, canonicalUri, query, canonicalHeaders, signedHeaders, sha256(body)].join('\n');
  const scope = `${date}/${region}/${service}/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonical)].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${secret}`, date ?? ''), region ?? ''), service ?? ''), 'aws4_request');
  const signature = createHmac('sha256', key).update(toSign).digest('hex');
  return `AWS4-HMAC-SHA256 Credential=${accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`;
}

const ACCESS_KEY_ID = 'AKIAIOSFODNN7EXAMPLE';
const SECRET = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYSECRETKEY';
const SESSION_TOKEN = 'FQoGZXIvYXdzEXAMPLESESSIONTOKENsecret0123456789';
const MODEL = 'us.anthropic.claude-sonnet-4-20250514-v1:0';
const REPLY = {
  id: 'msg_1',
  type: 'message',
  role: 'assistant',
  model: 'claude',
  content: [{ type: 'text', text: 'hi' }],
  stop_reason: 'end_turn',
  stop_sequence: null,
  usage: { input_tokens: 3, output_tokens: 1 },
};

interface Seen {
  method: string | undefined;
  url: string | undefined;
  headers: IncomingMessage['headers'];
  body: string;
  valid: boolean;
}

describe('bedrock() against a node:http server that verifies SigV4', () => {
  let server: TestServer | undefined;
  const seen: Seen[] = [];

  afterEach(async () => {
    await server?.close();
    server = undefined;
    seen.length = 0;
    vi.unstubAllEnvs();
  });

  /** Answers each request with `answer(n)` after recording it and checking its signature against `secret`. */
  async function start(answer: (n: number) => { status: number; body: unknown } = () => ({ status: 200, body: REPLY })) {
    server = await serve((req, res, n) => {
      const body = server?.bodies[n - 1] ?? '';
      const valid = req.headers.authorization === expectedAuthorization(req, body, SECRET);
      seen.push({ method: req.method, url: req.url, headers: req.headers, body, valid });
      const { status, body: reply } = answer(n);
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(reply));
    });
    return server.url.replace(/\/$/, '');
  }

  it('points at the region, and refuses no region or a bad one', () => {
    expect(bedrock({ region: 'eu-central-1' })).toMatchObject({
      name: 'bedrock',
      baseURL: 'https://bedrock-runtime.eu-central-1.amazonaws.com',
      protocol: 'messages',
    });
    vi.stubEnv('AWS_REGION', '');
    vi.stubEnv('AWS_DEFAULT_REGION', '');
    expect(() => bedrock()).toThrow('needs a region');
    vi.stubEnv('AWS_REGION', 'ap-northeast-1');
    expect(bedrock().baseURL).toBe('https://bedrock-runtime.ap-northeast-1.amazonaws.com');
    expect(() => bedrock({ region: 'evil.example/x' })).toThrow(Ai4tsError);
  });

  it('sends Converse requests as the protocol built them, refuses any other path', () => {
    const rewrite = bedrock({ region: 'us-east-1' }).rewriteRequest;
    const body = { messages: [] };
    expect(rewrite?.({ path: '/model/amazon.nova-pro-v1%3A0/converse-stream', body })).toEqual({
      path: 'model/amazon.nova-pro-v1%3A0/converse-stream',
      body,
    });
    expect(rewrite?.({ path: 'model/amazon.nova-pro-v1%3A0/converse', body })?.path).toBe('model/amazon.nova-pro-v1%3A0/converse');
    expect(() => rewrite?.({ path: '/chat/completions', body: { model: 'x' } })).toThrow(/Messages .* or Converse requests/);
    expect(() => rewrite?.({ path: '/model/a/b/converse', body })).toThrow(Ai4tsError);
  });

  it('signs with the environment credentials: the model id URL-encoded in the path, the body as Bedrock takes it', async () => {
    vi.stubEnv('AWS_ACCESS_KEY_ID', ACCESS_KEY_ID);
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', SECRET);
    vi.stubEnv('AWS_SESSION_TOKEN', SESSION_TOKEN);
    const baseURL = await start();
    const transport = new Transport({ provider: bedrock({ region: 'us-west-2' }), baseURL });
    const reply = await transport.json('messages', {
      body: { model: MODEL, max_tokens: 10, messages: [{ role: 'user', content: 'hé' }] },
    });
    expect(reply).toEqual(REPLY);
    const [request] = seen;
    expect(request?.valid).toBe(true);
    expect(request?.method).toBe('POST');
    expect(request?.url).toBe('/model/us.anthropic.claude-sonnet-4-20250514-v1%3A0/invoke');
    expect(request?.headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE\/\d{8}\/us-west-2\/bedrock\/aws4_request, SignedHeaders=accept;host;x-amz-date;x-amz-security-token, Signature=[0-9a-f]{64}$/,
    );
    expect(request?.headers['x-amz-security-token']).toBe(SESSION_TOKEN);
    expect(request?.headers['content-type']).toBe('application/json');
    expect(JSON.parse(request?.body ?? '')).toEqual({
      anthropic_version: BEDROCK_ANTHROPIC_VERSION,
      max_tokens: 10,
      messages: [{ role: 'user', content: 'hé' }],
    });
  });

  it('encodes an inference profile ARN into one path segment', async () => {
    const baseURL = await start();
    const arn = 'arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-3-5-haiku-20241022-v1:0';
    const transport = new Transport({
      provider: bedrock({ region: 'us-east-1', credentials: { accessKeyId: ACCESS_KEY_ID, secretAccessKey: SECRET } }),
      baseURL,
    });
    await transport.json('messages', { body: { model: arn, max_tokens: 1, messages: [] } });
    expect(seen[0]?.url).toBe(
      '/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3Ainference-profile%2Fus.anthropic.claude-3-5-haiku-20241022-v1%3A0/invoke',
    );
    expect(seen[0]?.valid).toBe(true);
  });

  it('calls a credentials function once while its credentials are fresh, on each request when they near expiry', async () => {
    const baseURL = await start();
    const sourceOf = (lifetimeMs: number) =>
      vi.fn(() => ({ accessKeyId: ACCESS_KEY_ID, secretAccessKey: SECRET, sessionToken: SESSION_TOKEN, expiration: new Date(Date.now() + lifetimeMs) }));
    const sendWith = (source: ReturnType<typeof sourceOf>) => {
      const transport = new Transport({ provider: bedrock({ region: 'us-east-1', credentials: source }), baseURL });
      return () => transport.json('messages', { body: { model: MODEL, max_tokens: 1, messages: [] } });
    };
    const fresh = sourceOf(3_600_000);
    const sendFresh = sendWith(fresh);
    await Promise.all([sendFresh(), sendFresh()]);
    await sendFresh();
    expect(fresh).toHaveBeenCalledTimes(1);
    // Inside the one-minute margin before expiry: never reused.
    const expiring = sourceOf(30_000);
    const sendExpiring = sendWith(expiring);
    await sendExpiring();
    await sendExpiring();
    expect(expiring).toHaveBeenCalledTimes(2);
    expect(seen).toHaveLength(5);
    expect(seen.every((request) => request.valid)).toBe(true);
  });

  it('signs each retry anew', async () => {
    const baseURL = await start((n) => (n === 1 ? { status: 503, body: { message: 'busy' } } : { status: 200, body: REPLY }));
    const transport = new Transport({
      provider: bedrock({ region: 'us-east-1', credentials: { accessKeyId: ACCESS_KEY_ID, secretAccessKey: SECRET } }),
      baseURL,
      backoff: { initialMs: 1, maxMs: 1 },
    });
    await transport.json('messages', { body: { model: MODEL, max_tokens: 1, messages: [] } });
    expect(seen).toHaveLength(2);
    expect(seen.every((request) => request.valid)).toBe(true);
  });

  it('no credentials is an AuthenticationError before anything is sent', async () => {
    vi.stubEnv('AWS_ACCESS_KEY_ID', '');
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', '');
    const baseURL = await start();
    const transport = new Transport({ provider: bedrock({ region: 'us-east-1' }), baseURL });
    await expect(transport.json('messages', { body: { model: MODEL, max_tokens: 1, messages: [] } })).rejects.toThrow(
      AuthenticationError,
    );
    expect(seen).toHaveLength(0);
  });

  it('never shows the secret key, the session token or the key id: not in errors, not in log lines', async () => {
    // A server that echoes what it got, credentials included.
    const baseURL = await start(() => ({
      status: 403,
      body: { message: `The security token ${SESSION_TOKEN} with key ${ACCESS_KEY_ID} and ${SECRET} is invalid` },
    }));
    const records: unknown[] = [];
    const record = (message: string, fields?: Record<string, unknown>) => void records.push({ message, fields });
    const logger: Logger = { debug: record, info: record, warn: record, error: record };
    const transport = new Transport({
      provider: bedrock({
        region: 'us-east-1',
        credentials: () => ({ accessKeyId: ACCESS_KEY_ID, secretAccessKey: SECRET, sessionToken: SESSION_TOKEN }),
      }),
      baseURL,
      logLevel: 'debug',
      logBodies: true,
      logger,
    });
    const error = await transport
      .json('messages', { body: { model: MODEL, max_tokens: 1, messages: [] } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthenticationError);
    for (const secret of [SECRET, SESSION_TOKEN, ACCESS_KEY_ID]) expectNoSecret(error, secret);
    const logged = JSON.stringify(records);
    expect(records.length).toBeGreaterThan(0);
    for (const secret of [SECRET, SESSION_TOKEN, ACCESS_KEY_ID]) expect(logged).not.toContain(secret);
  });

  it('a credentials function that throws is an AuthenticationError that does not quote what it said', async () => {
    const baseURL = await start();
    const transport = new Transport({
      provider: bedrock({
        region: 'us-east-1',
        credentials: () => {
          throw new Error('sso expired');
        },
      }),
      baseURL,
    });
    await expect(transport.json('messages', { body: { model: MODEL, max_tokens: 1, messages: [] } })).rejects.toThrow(
      /Could not get AWS credentials: sso expired/,
    );
    expect(seen).toHaveLength(0);
  });
});

describe("bedrock()'s stream framing: AWS event-stream frames to Anthropic SSE events", () => {
  const framing = bedrock({ region: 'us-east-1' }).streamFraming;
  const chunkOf = (event: unknown) => bedrockEventFrame('chunk', { bytes: Buffer.from(JSON.stringify(event)).toString('base64') });
  async function decode(frames: Uint8Array[], secrets: readonly string[] = []) {
    if (!framing) throw new Error('bedrock() has a stream framing');
    const out: unknown[] = [];
    try {
      const body = (async function* () {
        yield* frames;
      })();
      for await (const batch of framing.decode(body, secrets)) out.push(...batch);
    } catch (error) {
      return { out, error };
    }
    return { out, error: undefined };
  }

  it('reads chunk frames as the Anthropic events they carry', async () => {
    const { out, error } = await decode([chunkOf({ type: 'ping' }), chunkOf({ type: 'message_stop' })]);
    expect(error).toBeUndefined();
    expect(out).toEqual([
      { event: 'ping', data: '{"type":"ping"}' },
      { event: 'message_stop', data: '{"type":"message_stop"}' },
    ]);
  });

  it('an exception frame is an ApiError named by its exception, its text redacted', async () => {
    const { out, error } = await decode([chunkOf({ type: 'ping' }), bedrockExceptionFrame('validationException', `bad key ${SECRET}`)], [SECRET]);
    expect(out).toHaveLength(1);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ code: 'validationException', status: undefined });
    expectNoSecret(error, SECRET);
  });

  it('reads Converse event frames as SSE events named by their :event-type, the payload the data', async () => {
    const delta = { contentBlockIndex: 0, delta: { text: 'Hi' } };
    const { out, error } = await decode([bedrockEventFrame('contentBlockDelta', delta), bedrockEventFrame('metadata', { usage: {} })]);
    expect(error).toBeUndefined();
    expect(out).toEqual([
      { event: 'contentBlockDelta', data: JSON.stringify(delta) },
      { event: 'metadata', data: '{"usage":{}}' },
    ]);
  });

  it('an error frame, an unknown message type, a chunk that is not base64 JSON, an event of no known type: typed errors', async () => {
    const errorFrame = eventStreamFrame({
      ':message-type': { type: 'string', value: 'error' },
      ':error-code': { type: 'string', value: 'InternalFailure' },
      ':error-message': { type: 'string', value: 'it broke' },
    });
    expect((await decode([errorFrame])).error).toMatchObject({ name: 'ApiError', code: 'InternalFailure', message: 'InternalFailure: it broke' });
    const odd = eventStreamFrame({ ':message-type': { type: 'string', value: 'gossip' } });
    expect((await decode([odd])).error).toBeInstanceOf(ProtocolError);
    expect((await decode([bedrockEventFrame('chunk', { bytes: '%%%' })])).error).toBeInstanceOf(ProtocolError);
    expect((await decode([bedrockEventFrame('gossip', { bytes: '' })])).error).toBeInstanceOf(ProtocolError);
  });

  it('a corrupt or truncated body is a ProtocolError', async () => {
    const frame = chunkOf({ type: 'ping' });
    expect((await decode([frame.subarray(0, frame.length - 1)])).error).toMatchObject({ name: 'ProtocolError', message: expect.stringContaining('ended inside a message') });
    const bad = frame.slice();
    bad[20] = (bad[20] ?? 0) ^ 1;
    expect((await decode([bad])).error).toMatchObject({ name: 'ProtocolError', message: expect.stringContaining('CRC') });
  });
});

/**
 * Provider upstreams are reached through core's Transport: a retryable answer before the headers (503) is retried and
 * the client gets the answer; a refusal of the request (400) is not, and reaches the client as a 4xx in its own
 * protocol's error shape with no key in it; and a preset's declared protocol, not its auth style, picks the codec.
 * Each upstream is a real node:http server on 127.0.0.1 that answers from a script, one entry per request.
 */
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { type ProviderPreset, vertex } from '@ai4ts/core';
import { type GatewayOptions, type ListeningGateway, listenGateway } from '@ai4ts/gateway';
import { sendSse, serve, sseText } from '@ai4ts/test-kit';
import { afterEach, describe, expect, it } from 'vitest';

const UPSTREAM_KEY = 'sk-upstream-transport-7f3a9c';

interface Seen {
  path: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
}

interface Upstream {
  /** Its API root, `http://127.0.0.1:PORT/v1`. */
  root: string;
  seen: Seen[];
  close(): Promise<void>;
}

type Answer = (res: ServerResponse) => void;

/** An upstream that answers its n-th request with `script[n]` (the last entry once the script runs out). */
async function startUpstream(script: Answer[]): Promise<Upstream> {
  const seen: Seen[] = [];
  const server = await serve((req, res, n) => {
    seen.push({ path: req.url ?? '', headers: req.headers, body: JSON.parse(server.bodies[n - 1] ?? '') as Record<string, unknown> });
    const answer = script[Math.min(n, script.length) - 1];
    answer?.(res);
  });
  return { root: server.baseURL, seen, close: server.close };
}

/** One Chat Completions chunk of choice 0. */
const chunk = (delta: unknown, finish: string | null) => ({
  id: 'c1',
  object: 'chat.completion.chunk',
  created: 0,
  model: 'm',
  choices: [{ index: 0, delta, finish_reason: finish }],
});

/** A Chat Completions stream answering `text`. */
const chatAnswer =
  (text: string): Answer =>
  (res) => {
    sendSse(res, sseText([chunk({ role: 'assistant', content: text }, null), chunk({}, 'stop'), '[DONE]']));
  };

/** A Messages stream answering `text`. */
const messagesAnswer =
  (text: string): Answer =>
  (res) => {
    sendSse(
      res,
      sseText(
        [
          {
            type: 'message_start',
            message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'm', content: [], stop_reason: null, usage: { input_tokens: 3, output_tokens: 0 } },
          },
          { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
          { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } },
          { type: 'content_block_stop', index: 0 },
          { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 2 } },
          { type: 'message_stop' },
        ],
        { named: true },
      ),
    );
  };

const status =
  (code: number, body: unknown, headers: Record<string, string> = {}): Answer =>
  (res) => {
    res.writeHead(code, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const server of open.splice(0).reverse()) await server.close();
});

async function gatewayOf(options: GatewayOptions): Promise<ListeningGateway> {
  const gateway = await listenGateway(options);
  open.push(gateway);
  return gateway;
}

async function upstreamOf(script: Answer[]): Promise<Upstream> {
  const upstream = await startUpstream(script);
  open.push(upstream);
  return upstream;
}

/** A non-streaming Chat Completions request to the gateway. */
function askChat(gateway: ListeningGateway): Promise<Response> {
  return fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'Hi' }] }),
  });
}

const FAST_RETRY = { maxRetries: 2, backoff: { initialMs: 5, maxMs: 20 } };

describe('provider upstreams through core Transport', () => {
  it('retries an upstream 503 and the client gets the answer', async () => {
    const upstream = await upstreamOf([
      status(503, { error: { message: 'overloaded' } }, { 'retry-after': '0' }),
      chatAnswer('Hello after a retry'),
    ]);
    const gateway = await gatewayOf({
      upstream: upstream.root,
      upstreamProtocol: 'chat',
      upstreamToken: UPSTREAM_KEY,
      upstreamRetry: FAST_RETRY,
    });
    const response = await askChat(gateway);
    expect(response.status).toBe(200);
    const body = (await response.json()) as { choices: Array<{ message: { content: string } }> };
    expect(body.choices[0]?.message.content).toBe('Hello after a retry');
    expect(upstream.seen.map((request) => request.path)).toEqual(['/v1/chat/completions', '/v1/chat/completions']);
    expect(upstream.seen[1]?.headers.authorization).toBe(`Bearer ${UPSTREAM_KEY}`);
  });

  it('does not retry an upstream 400: the client gets a 400 in its protocol shape, with no key in it', async () => {
    const upstream = await upstreamOf([
      status(400, { type: 'error', error: { type: 'invalid_request_error', message: `max_tokens too large for key ${UPSTREAM_KEY}` } }),
    ]);
    const gateway = await gatewayOf({
      upstream: upstream.root,
      upstreamProtocol: 'messages',
      upstreamToken: UPSTREAM_KEY,
      upstreamRetry: FAST_RETRY,
    });
    const response = await fetch(`${gateway.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] }),
    });
    const text = await response.text();
    expect(response.status).toBe(400);
    expect(JSON.parse(text)).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    expect(text).toContain('max_tokens too large');
    expect(text).not.toContain(UPSTREAM_KEY);
    expect(upstream.seen).toHaveLength(1);
    expect(upstream.seen[0]?.headers['x-api-key']).toBe(UPSTREAM_KEY);
  });

  it("a preset's declared protocol picks the upstream codec, whatever its auth style", async () => {
    const upstream = await upstreamOf([messagesAnswer('Hello from Messages')]);
    const preset: ProviderPreset = {
      name: 'bearer-messages',
      baseURL: upstream.root,
      apiKeyEnv: [],
      auth: 'bearer',
      protocol: 'messages',
      quirks: { streamOptions: false },
    };
    const gateway = await gatewayOf({ provider: preset, upstreamToken: UPSTREAM_KEY, upstreamRetry: FAST_RETRY });
    const response = await askChat(gateway);
    expect(response.status).toBe(200);
    const body = (await response.json()) as { choices: Array<{ message: { content: string } }> };
    expect(body.choices[0]?.message.content).toBe('Hello from Messages');
    const [request] = upstream.seen;
    expect(request?.path).toBe('/v1/messages');
    expect(request?.headers.authorization).toBe(`Bearer ${UPSTREAM_KEY}`);
    expect(request?.headers['anthropic-version']).toBe('2023-06-01');
    expect(request?.body).toMatchObject({ model: 'm', max_tokens: expect.any(Number), stream: true });

    // Without a declared protocol a preset speaks Chat Completions.
    const chatUpstream = await upstreamOf([chatAnswer('Hello from Chat')]);
    const { protocol: _, ...undeclared } = { ...preset, baseURL: chatUpstream.root };
    const chatGateway = await gatewayOf({ provider: undeclared, upstreamToken: UPSTREAM_KEY });
    expect(((await (await askChat(chatGateway)).json()) as { choices: Array<{ message: { content: string } }> }).choices[0]?.message.content).toBe(
      'Hello from Chat',
    );
    expect(chatUpstream.seen[0]?.path).toBe('/v1/chat/completions');
  });

  // The gateway's redaction reads each target's secrets when it uses them: an access token fetched (and renewed)
  // while the gateway runs is scrubbed like a key.
  it('reaches Claude on Vertex AI with an access token: streamRawPredict, the token never in the answer', async () => {
    const TOKEN = 'ya29.vertex-claude-token-81c2';
    const upstream = await upstreamOf([messagesAnswer(`Hello from Vertex, ${TOKEN}`)]);
    const preset = vertex({ project: 'p', location: 'us-east5', publisher: 'anthropic' });
    const provider = { ...preset, baseURL: `${upstream.root}/projects/p/locations/us-east5/publishers/anthropic` };
    const gateway = await gatewayOf({ routes: [{ model: '*', provider, accessToken: () => TOKEN }] });
    const response = await askChat(gateway);
    expect(response.status).toBe(200);
    const content = ((await response.json()) as { choices: Array<{ message: { content: string } }> }).choices[0]?.message.content;
    expect(content).toMatch(/^Hello from Vertex, /);
    expect(content).not.toContain(TOKEN);
    const seen = upstream.seen[0];
    expect(seen?.path).toBe('/v1/projects/p/locations/us-east5/publishers/anthropic/models/m:streamRawPredict');
    expect(seen?.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(seen?.body).toMatchObject({ anthropic_version: 'vertex-2023-10-16', stream: true });
    expect(seen?.body).not.toHaveProperty('model');
  });

  // The codecs make their listeners through the protocol's definition, with the upstream preset's quirks: a daemon
  // that ends with [DONE] and no finish_reason is whole for a preset that says so, and cut short for one that does not.
  it("the upstream preset's stream quirks reach its protocol's listener", async () => {
    const noFinishReason: Answer = (res) =>
      sendSse(res, sseText([chunk({ role: 'assistant', content: 'no finish reason' }, null), '[DONE]']));
    const preset = (baseURL: string, doneWithoutFinishReason: boolean): ProviderPreset => ({
      name: 'daemon',
      baseURL,
      apiKeyEnv: [],
      auth: 'none',
      protocol: 'chat',
      quirks: { streamOptions: false, doneWithoutFinishReason },
    });
    const lenient = await gatewayOf({ provider: preset((await upstreamOf([noFinishReason])).root, true) });
    const answered = await askChat(lenient);
    expect(answered.status).toBe(200);
    expect(((await answered.json()) as { choices: Array<{ message: { content: string }; finish_reason: string }> }).choices[0]).toMatchObject({
      message: { content: 'no finish reason' },
      finish_reason: 'stop',
    });
    const strict = await gatewayOf({ provider: preset((await upstreamOf([noFinishReason])).root, false), upstreamRetry: { maxRetries: 0 } });
    expect((await askChat(strict)).status).toBeGreaterThanOrEqual(500);
  });

  // As the SDK's stream handles: a stream that failed before its first event is asked for again (nothing reached the
  // client yet), one that failed after is not.
  it('retries an upstream that fails before its first event: a close, then an in-stream overload', async () => {
    const overloaded: Answer = (res) =>
      sendSse(res, sseText([{ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }], { named: true }));
    const upstream = await upstreamOf([(res) => sendSse(res, ''), overloaded, messagesAnswer('Hello on the third try')]);
    const gateway = await gatewayOf({
      upstream: upstream.root,
      upstreamProtocol: 'messages',
      upstreamToken: UPSTREAM_KEY,
      upstreamRetry: FAST_RETRY,
    });
    const response = await askChat(gateway);
    expect(response.status).toBe(200);
    const body = (await response.json()) as { choices: Array<{ message: { content: string } }> };
    expect(body.choices[0]?.message.content).toBe('Hello on the third try');
    expect(upstream.seen).toHaveLength(3);
  });

  it('does not retry an upstream that fails after its first event, nor past its budget', async () => {
    const cut: Answer = (res) =>
      sendSse(res, sseText([chunk({ role: 'assistant', content: 'half an ans' }, null)]));
    const cutUpstream = await upstreamOf([cut, chatAnswer('never asked for')]);
    const cutGateway = await gatewayOf({ upstream: cutUpstream.root, upstreamProtocol: 'chat', upstreamRetry: FAST_RETRY });
    expect((await askChat(cutGateway)).status).toBeGreaterThanOrEqual(500);
    expect(cutUpstream.seen).toHaveLength(1);

    const silent = await upstreamOf([(res) => sendSse(res, '')]);
    const silentGateway = await gatewayOf({ upstream: silent.root, upstreamProtocol: 'chat', upstreamRetry: FAST_RETRY });
    expect((await askChat(silentGateway)).status).toBeGreaterThanOrEqual(500);
    expect(silent.seen).toHaveLength(FAST_RETRY.maxRetries + 1);

    // The retries before the headers and before the first event share one budget: 2 retries, 3 requests in all.
    const empty: Answer = (res) => sendSse(res, '');
    const mixed = await upstreamOf([status(503, { error: { message: 'busy' } }, { 'retry-after': '0' }), empty, empty, chatAnswer('too late')]);
    const mixedGateway = await gatewayOf({ upstream: mixed.root, upstreamProtocol: 'chat', upstreamRetry: FAST_RETRY });
    expect((await askChat(mixedGateway)).status).toBeGreaterThanOrEqual(500);
    expect(mixed.seen).toHaveLength(FAST_RETRY.maxRetries + 1);
  });
});


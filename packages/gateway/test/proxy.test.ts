import { request as httpRequest, type IncomingMessage } from 'node:http';
import { createGateway, type ListeningGateway, listenGateway, type GatewayOptions } from '@ai4ts/gateway';
import { readerOf, sendSse, sleep, SSE_HEADERS, sseFrame } from '@ai4ts/test-kit';
import { afterEach, describe, expect, it } from 'vitest';
import { NAMED_ANSWER, TYPED_ANSWER } from '../../bridge/test/helpers.js';
import { type Daemon, readChunks, startDaemon } from './helpers.js';

const open: Array<{ close(): Promise<void> }> = [];

afterEach(async () => {
  for (const server of open.splice(0).reverse()) await server.close();
});

type Script = Parameters<typeof startDaemon>[0];

async function daemonOf(script: Script): Promise<Daemon> {
  const daemon = await startDaemon(script);
  open.push(daemon);
  return daemon;
}

async function proxyOf(options: GatewayOptions): Promise<ListeningGateway> {
  const proxy = await listenGateway(options);
  open.push(proxy);
  return proxy;
}

/** A scripted daemon and the proxy in front of it (typed dialect unless told otherwise). */
async function setup(script: Script, options: Partial<GatewayOptions> = {}) {
  const daemon = await daemonOf(script);
  const proxy = await proxyOf({ upstream: daemon.url, dialect: 'typed', ...options });
  const chat = (body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${proxy.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  return { daemon, proxy, chat };
}

const ASK = { model: 'daemon-1', messages: [{ role: 'user', content: 'Weather in Paris?' }] };

const streamOfResponse = async (response: Response) => readChunks(await response.text());

describe('POST /v1/chat/completions, typed dialect', () => {
  it('streams live: text, reasoning, daemon tools in the vendor field, usage summed, session ids, [DONE]', async () => {
    const { daemon, chat } = await setup((res) => sendSse(res, TYPED_ANSWER), {
      upstreamToken: 'up-secret',
      auth: 'client-secret',
    });
    const response = await chat(
      { ...ASK, stream: true, stream_options: { include_usage: true }, user: 'req-session' },
      { authorization: 'Bearer client-secret' },
    );
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(response.headers.get('x-session-id')).toBe('req-session');
    const { chunks, done, text, reasoning } = await streamOfResponse(response);
    expect(done).toBe(true);
    expect(text).toBe('It is 18C in Paris.');
    expect(reasoning).toBe('Let me check. Now answer.');
    expect(chunks.some((c) => c.choices?.[0]?.delta.tool_calls)).toBe(false);
    expect(chunks.filter((c) => c.choices?.[0]?.delta.daemon_tools)).toHaveLength(3); // the call, its result, all
    expect(chunks.at(-2)?.choices?.[0]?.finish_reason).toBe('stop');
    expect(chunks.at(-1)).toMatchObject({
      choices: [],
      usage: { prompt_tokens: 30, completion_tokens: 12, total_tokens: 42 },
      session_id: 'daemon-session',
    });
    expect(chunks.every((c) => c.model === 'daemon-1')).toBe(true);

    expect(daemon.requests).toHaveLength(1);
    const [upstream] = daemon.requests;
    expect(upstream?.method).toBe('POST');
    expect(upstream?.body).toEqual({ message: 'Weather in Paris?', session_id: 'req-session' });
    expect(upstream?.headers.authorization).toBe('Bearer up-secret');
    expect(JSON.stringify(upstream)).not.toContain('client-secret');
  });

  it('aggregates a non-stream request into one completion; the header and field carry the daemon session id', async () => {
    const { chat } = await setup((res) => sendSse(res, TYPED_ANSWER));
    const response = await chat({ ...ASK, stream: false, user: 'req-session' });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-session-id')).toBe('daemon-session');
    const completion = await response.json();
    expect(completion).toMatchObject({
      object: 'chat.completion',
      model: 'daemon-1',
      session_id: 'daemon-session',
      choices: [
        {
          index: 0,
          finish_reason: 'stop',
          message: {
            role: 'assistant',
            content: 'It is 18C in Paris.',
            reasoning_content: 'Let me check. Now answer.',
            daemon_tools: [
              { id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}', output: '18C', is_error: false },
            ],
          },
        },
      ],
      usage: { prompt_tokens: 30, completion_tokens: 12, total_tokens: 42 },
    });
    expect(completion.choices[0].message.tool_calls).toBeUndefined();
  });

  it('sends metadata.session_id over user, joins the last user message text parts, and no session when none', async () => {
    const { daemon, chat } = await setup((res) =>
      sendSse(res, sseFrame({ type: 'text', content: 'ok' }) + sseFrame({ type: 'done' })),
    );
    const messages = [
      { role: 'user', content: 'old question' },
      { role: 'assistant', content: 'old answer' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'line one' },
          { type: 'image_url', image_url: { url: 'x' } },
          { type: 'text', text: 'line two' },
        ],
      },
    ];
    await (await chat({ model: 'm', messages, user: 'u', metadata: { session_id: 'meta' } })).json();
    const streamed = await chat({ ...ASK, stream: true });
    expect(streamed.headers.get('x-session-id')).toBeNull();
    const { chunks, done } = await streamOfResponse(streamed);
    expect(done).toBe(true);
    expect(chunks.at(-1)?.session_id).toBeUndefined();
    expect(daemon.requests.map((r) => r.body)).toEqual([
      { message: 'line one\nline two', session_id: 'meta' },
      { message: 'Weather in Paris?' },
    ]);
  });
});

describe('POST /v1/chat/completions, named dialect', () => {
  it('invents a UUID session id when the request has none, sends it, and returns it', async () => {
    const { daemon, chat } = await setup((res) => sendSse(res, NAMED_ANSWER), { dialect: 'named', upstreamToken: 'up' });
    const streamed = await chat({ ...ASK, stream: true, stream_options: { include_usage: true } });
    const header = streamed.headers.get('x-session-id');
    expect(header).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const { chunks, done, text } = await streamOfResponse(streamed);
    expect(done).toBe(true);
    expect(text).toBe('Hello, world');
    expect(chunks.at(-1)).toMatchObject({ session_id: header, choices: [{ finish_reason: 'stop' }] });
    expect(chunks.some((c) => c.usage)).toBe(false);

    const plain = await chat({ ...ASK, user: 'named-session' });
    expect(plain.headers.get('x-session-id')).toBe('named-session');
    expect(await plain.json()).toMatchObject({
      session_id: 'named-session',
      choices: [{ message: { content: 'Hello, world' } }],
    });
    expect(daemon.requests.map((r) => r.body)).toEqual([
      { session_id: header, message: 'Weather in Paris?', attachments: null },
      { session_id: 'named-session', message: 'Weather in Paris?', attachments: null },
    ]);
    expect(daemon.requests[0]?.headers.authorization).toBe('Bearer up');
  });

  it('answers an error right after start with an HTTP error in OpenAI shape', async () => {
    const { chat } = await setup(
      (res) => sendSse(res, sseFrame({ message_id: 'm' }, 'start') + sseFrame({ error: 'overloaded', type: 'busy' }, 'error')),
      { dialect: 'named' },
    );
    for (const stream of [true, false]) {
      const response = await chat({ ...ASK, stream });
      expect(response.status).toBe(502);
      expect(await response.json()).toEqual({
        error: { message: 'overloaded', type: 'upstream_error', param: null, code: 'busy' },
      });
    }
  });
});

describe('failures', () => {
  it('fails after output began with an error chunk and no [DONE], even when done follows', async () => {
    const { chat } = await setup((res) =>
      sendSse(
        res,
        sseFrame({ type: 'text', content: 'Part' }) +
          sseFrame({ type: 'error', message: 'crashed' }) +
          sseFrame({ type: 'done' }),
      ),
    );
    const { chunks, done, text } = await streamOfResponse(await chat({ ...ASK, stream: true }));
    expect(done).toBe(false);
    expect(text).toBe('Part');
    expect(chunks.at(-1)).toEqual({ error: { message: 'crashed', type: 'upstream_error', param: null, code: null } });
    expect((await chat(ASK)).status).toBe(502);
  });

  it('reports a daemon that dies mid-stream as an error, not a silent cut', async () => {
    const { chat } = await setup((res) => {
      res.writeHead(200, SSE_HEADERS);
      res.write(sseFrame({ type: 'text', content: 'Going' }));
      setTimeout(() => res.destroy(), 20);
    });
    const { chunks, done, text } = await streamOfResponse(await chat({ ...ASK, stream: true }));
    expect(done).toBe(false);
    expect(text).toBe('Going');
    expect(chunks.at(-1)).toMatchObject({ error: { type: 'upstream_error', code: 'upstream_connection_error' } });
    expect((await chat(ASK)).status).toBe(502);
  });

  it('reports a clean end without done as stream_incomplete', async () => {
    const { chat } = await setup((res) => sendSse(res, sseFrame({ type: 'text', content: 'Half' })));
    const { chunks, done } = await streamOfResponse(await chat({ ...ASK, stream: true }));
    expect(done).toBe(false);
    expect(chunks.at(-1)).toMatchObject({ error: { code: 'stream_incomplete' } });
    const plain = await chat(ASK);
    expect(plain.status).toBe(502);
    expect(await plain.json()).toMatchObject({ error: { code: 'stream_incomplete' } });
  });

  it('maps upstream HTTP errors to 502, and passes 429 through with Retry-After', async () => {
    let status = 500;
    const { chat } = await setup((res) => {
      res.writeHead(status, { 'content-type': 'application/json', ...(status === 429 ? { 'retry-after': '12' } : {}) });
      res.end(JSON.stringify({ error: { message: status === 429 ? 'slow down' : 'daemon exploded' } }));
    });
    const failed = await chat({ ...ASK, stream: true });
    expect(failed.status).toBe(502);
    expect(await failed.json()).toMatchObject({
      error: { message: 'The upstream answered 500 daemon exploded', type: 'upstream_error' },
    });
    status = 429;
    const limited = await chat({ ...ASK, stream: true });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('12');
    expect(await limited.json()).toMatchObject({ error: { type: 'rate_limit_error', code: 'rate_limit_exceeded' } });
  });

  it('answers 502 when the upstream is dead', async () => {
    const dead = await startDaemon((res) => sendSse(res, TYPED_ANSWER));
    await dead.close();
    const proxy = await proxyOf({ upstream: dead.url, dialect: 'typed' });
    const response = await fetch(`${proxy.url}/v1/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({ ...ASK, stream: true }),
    });
    expect(response.status).toBe(502);
    expect(await response.json()).toMatchObject({ error: { code: 'upstream_connection_error' } });
  });
});

describe('requests', () => {
  it('checks bearer auth on both routes, and lists the model', async () => {
    const { daemon, proxy, chat } = await setup((res) => sendSse(res, TYPED_ANSWER), {
      auth: ['one', 'two'],
      model: 'my-daemon',
    });
    const models = (headers: Record<string, string>) => fetch(`${proxy.url}/v1/models`, { headers });
    const refused: Array<Record<string, string>> = [
      {},
      { authorization: 'Bearer nope' },
      { authorization: 'Basic two' },
    ];
    for (const headers of refused) {
      const denied = await models(headers);
      expect(denied.status).toBe(401);
      expect(await denied.json()).toMatchObject({ error: { type: 'invalid_request_error', code: 'invalid_api_key' } });
      expect((await chat(ASK, headers)).status).toBe(401);
    }
    const listed = await models({ authorization: 'Bearer two' });
    expect(await listed.json()).toEqual({
      object: 'list',
      data: [{ id: 'my-daemon', object: 'model', created: 0, owned_by: 'ai4ts-bridge' }],
    });
    expect((await chat(ASK, { authorization: 'Bearer one' })).status).toBe(200);
    expect(daemon.requests).toHaveLength(1);
  });

  it('answers invalid bodies with OpenAI-shaped 400s, without calling the daemon', async () => {
    const { daemon, chat } = await setup((res) => sendSse(res, TYPED_ANSWER));
    const cases: Array<[unknown, string | null]> = [
      ['{not json', null],
      [{ model: 'm', messages: [] }, 'messages'],
      [{ model: 'm', messages: [{ role: 'system', content: 'be nice' }] }, 'messages'],
      [{ messages: ASK.messages }, 'model'],
      [{ model: 'm', messages: 'hi' }, 'messages'],
      [{ ...ASK, stream: 'yes' }, 'stream'],
      [{ model: 'm', messages: [{ role: 'user', content: 42 }] }, 'messages[0].content'],
    ];
    for (const [body, param] of cases) {
      const response = await chat(body);
      expect(response.status).toBe(400);
      const { error } = await response.json();
      expect(error).toMatchObject({ type: 'invalid_request_error', param });
      expect(error.message).toEqual(expect.any(String));
    }
    expect(daemon.requests).toHaveLength(0);
  });

  it('answers unknown routes with 404 and wrong methods with 405', async () => {
    const { proxy } = await setup((res) => sendSse(res, TYPED_ANSWER));
    expect((await fetch(`${proxy.url}/v1/audio/speech`, { method: 'POST' })).status).toBe(404);
    expect((await fetch(`${proxy.url}/v1/chat/completions`)).status).toBe(405);
  });

  it('keeps CORS off unless configured', async () => {
    const { daemon, proxy, chat } = await setup((res) => sendSse(res, TYPED_ANSWER));
    const plain = await chat(ASK, { origin: 'http://evil.example' });
    expect(plain.headers.get('access-control-allow-origin')).toBeNull();
    expect((await fetch(`${proxy.url}/v1/chat/completions`, { method: 'OPTIONS' })).status).toBe(405);
    const withCors = await proxyOf({ upstream: daemon.url, dialect: 'typed', cors: 'http://app.example' });
    const preflight = await fetch(`${withCors.url}/v1/chat/completions`, { method: 'OPTIONS' });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('http://app.example');
    expect(preflight.headers.get('access-control-allow-headers')).toContain('authorization');
    const allowed = await fetch(`${withCors.url}/v1/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({ ...ASK, stream: true }),
    });
    expect(allowed.headers.get('access-control-allow-origin')).toBe('http://app.example');
    expect(allowed.headers.get('access-control-expose-headers')).toContain('x-session-id');
    expect((await streamOfResponse(allowed)).done).toBe(true);
  });
});

/** A raw node:http POST (fetch cannot leave a body unread on purpose or drop the socket at a chosen point). */
function rawPost(url: string, body: unknown): { response: Promise<IncomingMessage>; destroy: () => void } {
  const req = httpRequest(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
  });
  const response = new Promise<IncomingMessage>((resolve, reject) => {
    req.on('response', resolve);
    req.on('error', reject);
  });
  response.catch(() => {});
  req.end(JSON.stringify(body));
  return { response, destroy: () => req.destroy() };
}

describe('disconnects and backpressure', () => {
  it('aborts the upstream request when a streaming client disconnects', async () => {
    const { daemon, proxy } = await setup((res) => {
      res.writeHead(200, SSE_HEADERS);
      res.write(sseFrame({ type: 'text', content: 'first' })); // then never ends
    });
    const { response, destroy } = rawPost(proxy.url, { ...ASK, stream: true });
    const res = await response;
    res.on('error', () => {});
    await new Promise((resolve) => res.once('data', resolve));
    destroy();
    await daemon.cut; // the daemon saw its socket close before it ended the answer
  });

  it('aborts the upstream request when a non-stream client disconnects', async () => {
    let received: () => void = () => {};
    const requested = new Promise<void>((resolve) => {
      received = resolve;
    });
    const { daemon, proxy } = await setup((res) => {
      res.writeHead(200, SSE_HEADERS);
      res.write(sseFrame({ type: 'text', content: 'slow' }));
      received();
    });
    const { destroy } = rawPost(proxy.url, ASK);
    await requested;
    destroy();
    await daemon.cut;
  });

  it('stalls the upstream read while the client does not read (bounded buffering)', { timeout: 60_000 }, async () => {
    const EVENTS = 768;
    const content = 'x'.repeat(64 * 1024);
    const event = sseFrame({ type: 'text', content });
    const state = { written: 0, finished: false };
    const { proxy } = await setup(async (res) => {
      res.writeHead(200, SSE_HEADERS);
      for (let i = 0; i < EVENTS; i++) {
        if (res.destroyed) return;
        const more = res.write(event);
        state.written += event.length;
        if (!more) await new Promise((resolve) => res.once('drain', resolve));
      }
      res.end(sseFrame({ type: 'done' }));
      state.finished = true;
    });
    const total = EVENTS * event.length;
    const res = await rawPost(proxy.url, { ...ASK, stream: true }).response; // paused: nobody reads the body yet
    // Wait until the daemon makes no progress for a while (or finishes, which would mean unbounded buffering).
    let last = -1;
    let still = 0;
    while (!state.finished && still < 5) {
      await sleep(50);
      still = state.written === last ? still + 1 : 0;
      last = state.written;
    }
    expect(state.finished).toBe(false);
    // Socket buffers hold a few MB between daemon and client; a proxy that buffered would have read all 48 MB.
    expect(state.written).toBeLessThan(total / 2);

    // Now read: everything arrives, and the daemon gets to finish.
    let received = 0;
    let pending = '';
    let done = false;
    res.setEncoding('utf8');
    for await (const piece of res as AsyncIterable<string>) {
      const text = pending + piece;
      const end = text.lastIndexOf('\n\n');
      if (end < 0) {
        pending = text;
        continue;
      }
      const { chunks, done: last } = readChunks(text.slice(0, end + 2));
      for (const chunk of chunks) received += chunk.choices?.[0]?.delta.content?.length ?? 0;
      done ||= last;
      pending = text.slice(end + 2);
    }
    expect(done).toBe(true);
    expect(state.finished).toBe(true);
    expect(received).toBe(EVENTS * content.length);
  });
});

describe('the fetch handler', () => {
  it('serves the same routes, streaming and not', async () => {
    const daemon = await daemonOf((res) => sendSse(res, TYPED_ANSWER));
    // A token of realistic length: every token is scrubbed from all the proxy sends, so 't' would cut into the text.
    const handler = createGateway({ upstream: daemon.url, dialect: 'typed', auth: 'tok-fetch-9d2e' });
    const request = (body: unknown) =>
      new Request('http://proxy.local/v1/chat/completions', {
        method: 'POST',
        headers: { authorization: 'Bearer tok-fetch-9d2e', 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const streamed = await handler.fetch(request({ ...ASK, stream: true, user: 's' }));
    expect(streamed.headers.get('x-session-id')).toBe('s');
    const { done, text } = await streamOfResponse(streamed);
    expect(done).toBe(true);
    expect(text).toBe('It is 18C in Paris.');
    const plain = await handler.fetch(request(ASK));
    expect(await plain.json()).toMatchObject({ choices: [{ message: { content: 'It is 18C in Paris.' } }] });
    expect((await handler.fetch(new Request('http://proxy.local/v1/models'))).status).toBe(401);
  });

  it('aborts the upstream request when the response body is cancelled', async () => {
    const daemon = await daemonOf((res) => {
      res.writeHead(200, SSE_HEADERS);
      res.write(sseFrame({ type: 'text', content: 'first' }));
    });
    const handler = createGateway({ upstream: daemon.url, dialect: 'typed' });
    const response = await handler.fetch(
      new Request('http://proxy.local/v1/chat/completions', {
        method: 'POST',
        body: JSON.stringify({ ...ASK, stream: true }),
      }),
    );
    const reader = readerOf(response);
    await reader.read();
    await reader.cancel();
    await daemon.cut;
  });
});

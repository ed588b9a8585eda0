/**
 * No token in any reply, header or thrown error: a client sending a wrong proxy token, and a daemon that echoes the
 * upstream token it was sent back in every kind of failure (HTTP error bodies, a 429, error events before and after
 * output began), through both server adapters, the official client, and the dialect reader itself.
 */
import type { ServerResponse } from 'node:http';
import { inspect } from 'node:util';
import {
  createGateway,
  type ListeningGateway,
  listenGateway,
  type GatewayOptions,
} from '@ai4ts/gateway';
import { typedEventDialect } from '@ai4ts/bridge';
import { Ai4tsError } from '@ai4ts/core';
import OpenAI from 'openai';
import { sendSse, sseFrame } from '@ai4ts/test-kit';
import { afterEach, describe, expect, it } from 'vitest';
import { type Daemon, startDaemon } from './helpers.js';

const PROXY_TOKEN = 'proxy-token-7f3a9c';
const WRONG_TOKEN = 'wrong-token-b41e02';
const UPSTREAM_KEY = 'sk-upstream-d5c81e';
const SECRETS = [PROXY_TOKEN, WRONG_TOKEN, UPSTREAM_KEY];

const MESSAGES = [{ role: 'user' as const, content: 'hi' }];
const ASK = { model: 'daemon', messages: MESSAGES };

/** Every way the daemon fails, each quoting the Authorization header it received. */
const FAILURES = {
  'a 401 JSON body': (res: ServerResponse, echo: string) => {
    res.writeHead(401, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: `Invalid key: ${echo}`, type: 'auth', code: echo } }));
  },
  'a 500 text body': (res: ServerResponse, echo: string) => {
    res.writeHead(500, { 'content-type': 'text/plain' });
    res.end(`upstream refused ${echo}`);
  },
  'a 429 body': (res: ServerResponse, echo: string) => {
    res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '2' });
    res.end(JSON.stringify({ error: { message: `slow down, ${echo}` } }));
  },
  'an error event before output': (res: ServerResponse, echo: string) => {
    sendSse(res, sseFrame({ type: 'error', message: `bad key ${echo}`, code: 'auth', detail: { header: [echo] } }));
  },
  'an error event after output': (res: ServerResponse, echo: string) => {
    sendSse(res, sseFrame({ type: 'text', content: 'Hel' }) + sseFrame({ type: 'error', message: `bad key ${echo}` }));
  },
  'a 503 quoting it in its headers': (res: ServerResponse, echo: string) => {
    res.writeHead(503, { 'content-type': 'text/plain', 'x-echo': echo, 'www-authenticate': `Bearer error="${echo}"` });
    res.end('unavailable');
  },
  'a 429 quoting it in Retry-After': (res: ServerResponse, echo: string) => {
    res.writeHead(429, { 'content-type': 'application/json', 'retry-after': echo });
    res.end('{}');
  },
  // Valid JSON in which the key is only visible once parsed: scrubbing the raw text would miss it.
  'a JSON error body spelling it in \\u escapes': (res: ServerResponse, echo: string) => {
    res.writeHead(401, { 'content-type': 'application/json' });
    res.end(`{"error":{"message":"Invalid key: ${unicodeEscaped(echo)}","code":"${unicodeEscaped(echo)}"}}`);
  },
  'an error event spelling it in \\u escapes': (res: ServerResponse, echo: string) => {
    sendSse(res, sseFrame(`{"type":"error","message":"bad key ${unicodeEscaped(echo)}"}`));
  },
  'an event that is not JSON, quoting it': (res: ServerResponse, echo: string) => {
    sendSse(res, sseFrame(`oops ${echo}`));
  },
} as const;

/** Every character as a JSON `\uXXXX` escape. */
function unicodeEscaped(text: string): string {
  return [...text].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
}

type Failure = keyof typeof FAILURES;

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const server of open.splice(0).reverse()) await server.close();
});

/** A daemon failing the chosen way, and the proxy options in front of it. */
async function daemonFailing(failure: { current: Failure }): Promise<{ daemon: Daemon; options: GatewayOptions }> {
  const daemon = await startDaemon((res, request) =>
    FAILURES[failure.current](res, String(request.headers.authorization)),
  );
  open.push(daemon);
  return {
    daemon,
    options: { upstream: daemon.url, dialect: 'typed', auth: PROXY_TOKEN, upstreamToken: UPSTREAM_KEY },
  };
}

/** Fails the test if any token appears in the text. */
function expectNoSecret(where: string, text: string): void {
  for (const secret of SECRETS) expect(text.includes(secret), `${secret} in ${where}: ${text}`).toBe(false);
}

/** A reply's status line, headers and whole body, as one text. */
async function replyText(response: Response): Promise<string> {
  const headers = [...response.headers].map(([name, value]) => `${name}: ${value}`).join('\n');
  return `${response.status}\n${headers}\n\n${await response.text()}`;
}

/** An error with everything it holds: message, stack, cause, partial, body and headers. */
function errorText(error: unknown): string {
  return inspect(error, { depth: 10, showHidden: true });
}

describe('no token leaves the proxy', () => {
  it('a wrong proxy token gets a 401 that names no token, and never reaches the daemon', async () => {
    const { daemon, options } = await daemonFailing({ current: 'a 401 JSON body' });
    const proxy: ListeningGateway = await listenGateway(options);
    open.push(proxy);
    const handler = createGateway(options);
    const init = (stream: boolean): RequestInit => ({
      method: 'POST',
      headers: { authorization: `Bearer ${WRONG_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ...ASK, stream }),
    });
    for (const stream of [true, false]) {
      const viaNode = await fetch(`${proxy.url}/v1/chat/completions`, init(stream));
      expect(viaNode.status).toBe(401);
      expectNoSecret('the node reply', await replyText(viaNode));
      const viaFetch = await handler.fetch(new Request('http://proxy.local/v1/chat/completions', init(stream)));
      expect(viaFetch.status).toBe(401);
      expectNoSecret('the fetch reply', await replyText(viaFetch));
    }
    const client = new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: WRONG_TOKEN, maxRetries: 0 });
    const thrown = await client.chat.completions.create({ model: 'daemon', messages: MESSAGES }).catch((e: unknown) => e);
    expect(thrown).toBeInstanceOf(OpenAI.AuthenticationError);
    expectNoSecret('the client error', errorText(thrown));
    expect(daemon.requests).toHaveLength(0);
  });

  it.each(Object.keys(FAILURES) as Failure[])('a daemon echoing the upstream key in %s', async (kind) => {
    const failure = { current: kind };
    const { daemon, options } = await daemonFailing(failure);
    const proxy = await listenGateway(options);
    open.push(proxy);
    const handler = createGateway(options);
    const init = (stream: boolean): RequestInit => ({
      method: 'POST',
      headers: { authorization: `Bearer ${PROXY_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ...ASK, stream }),
    });

    for (const stream of [true, false]) {
      const viaNode = await fetch(`${proxy.url}/v1/chat/completions`, init(stream));
      expectNoSecret(`the node reply (stream: ${stream})`, await replyText(viaNode));
      const viaFetch = await handler.fetch(new Request('http://proxy.local/v1/chat/completions', init(stream)));
      expectNoSecret(`the fetch reply (stream: ${stream})`, await replyText(viaFetch));
    }
    // The daemon did get the key, and did quote it: the scrubbing is what kept it out.
    expect(daemon.requests.every((r) => r.headers.authorization === `Bearer ${UPSTREAM_KEY}`)).toBe(true);

    const client = new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: PROXY_TOKEN, maxRetries: 0 });
    const plain = await client.chat.completions.create({ model: 'daemon', messages: MESSAGES }).catch((e: unknown) => e);
    expectNoSecret('the client error', errorText(plain));
    const streamed = await (async () => {
      const stream = await client.chat.completions.create({ model: 'daemon', messages: MESSAGES, stream: true });
      for await (const _ of stream);
    })().catch((e: unknown) => e);
    expect(streamed).toBeInstanceOf(Error);
    expectNoSecret('the client stream error', errorText(streamed));

    // The reader itself, given the token as a secret, throws errors without it.
    const response = await fetch(daemon.url, {
      method: 'POST',
      headers: { authorization: `Bearer ${UPSTREAM_KEY}` },
      body: '{}',
    });
    let read: unknown;
    try {
      for await (const _ of typedEventDialect.read(response, { secrets: [UPSTREAM_KEY] }));
    } catch (error) {
      read = error;
    }
    expect(read).toBeInstanceOf(Ai4tsError);
    expectNoSecret('the reader error', errorText(read));
  });
});

describe('no token leaves the proxy in a successful answer either', () => {
  it('a daemon quoting the key in its text, reasoning, a tool result and its session id', async () => {
    const daemon = await startDaemon((res, request) => {
      const echo = String(request.headers.authorization);
      sendSse(res, 
        sseFrame({ type: 'reasoning', content: `thinking about ${echo}` }) +
          sseFrame({ type: 'tool_start', id: 'call_1', name: 'whoami', arguments: JSON.stringify({ key: echo }) }) +
          sseFrame({ type: 'tool_result', id: 'call_1', name: 'whoami', output: { [echo]: echo }, success: true }) +
          sseFrame({ type: 'text', content: `your key is ${echo}` }) +
          sseFrame({ type: 'done', session_id: echo }),
      );
    });
    open.push(daemon);
    const options: GatewayOptions = {
      upstream: daemon.url,
      dialect: 'typed',
      auth: PROXY_TOKEN,
      upstreamToken: UPSTREAM_KEY,
    };
    const proxy = await listenGateway(options);
    open.push(proxy);
    const handler = createGateway(options);
    const init = (stream: boolean): RequestInit => ({
      method: 'POST',
      headers: { authorization: `Bearer ${PROXY_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ...ASK, stream }),
    });
    for (const stream of [true, false]) {
      const viaNode = await fetch(`${proxy.url}/v1/chat/completions`, init(stream));
      expect(viaNode.status).toBe(200);
      const nodeText = await replyText(viaNode);
      expectNoSecret(`the node answer (stream: ${stream})`, nodeText);
      expect(nodeText).toContain('your key is Bearer [redacted]');
      const viaFetch = await handler.fetch(new Request('http://proxy.local/v1/chat/completions', init(stream)));
      expectNoSecret(`the fetch answer (stream: ${stream})`, await replyText(viaFetch));
    }
    const client = new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: PROXY_TOKEN, maxRetries: 0 });
    const { data, response } = await client.chat.completions.create({ model: 'daemon', messages: MESSAGES }).withResponse();
    expectNoSecret('the client completion', JSON.stringify(data));
    expectNoSecret('the session header', String(response.headers.get('x-session-id')));
  });
});

/**
 * Fallbacks between a route's upstreams: a 503, a 429, a refused connection or a stalled first event moves the request
 * to the next upstream, whose answer reaches the client intact (streamed and not), with `x-ai4ts-upstream` and
 * `x-ai4ts-attempts`; once output started nothing moves (the client sees the in-stream error); a refusal of the
 * request (400) is the client's and is not sent elsewhere; a Messages request falls back to a Chat upstream through
 * the codecs, `x-ai4ts-dropped` naming what that upstream was not sent. Every upstream is a node:http server.
 */
import { readChunks } from './helpers.js';
import {
  askChat,
  chatAnswer,
  chatText,
  cutAnswer,
  gatewayOf,
  heldAnswer,
  messagesAnswer,
  NO_RETRY,
  refusingRoot,
  status,
  upstreamOf,
} from './fallback-helpers.js';
import { describe, expect, it } from 'vitest';

const KEY_A = 'sk-first-upstream-key-1d9e';
const KEY_B = 'sk-second-upstream-key-77c0';

describe('fallback before the first event', () => {
  it('moves on after a 503, and the second upstream answers (not streamed)', async () => {
    const a = await upstreamOf(() => status(503, { error: { message: `overloaded, key ${KEY_A}` } }));
    const b = await upstreamOf(() => chatAnswer('Hello from B'));
    const gateway = await gatewayOf({
      routes: [
        {
          model: '*',
          upstreams: [
            { upstream: a.root, protocol: 'chat', upstreamToken: KEY_A },
            { upstream: b.root, protocol: 'chat', upstreamToken: KEY_B, name: 'backup' },
          ],
        },
      ],
      upstreamRetry: NO_RETRY,
    });
    const response = await askChat(gateway);
    expect(response.status).toBe(200);
    expect(response.headers.get('x-ai4ts-upstream')).toBe('backup');
    expect(response.headers.get('x-ai4ts-attempts')).toBe('2');
    expect(await chatText(response)).toBe('Hello from B');
    expect([a.bodies.length, b.bodies.length]).toEqual([1, 1]);
  });

  it('moves on after a 429, and the second upstream streams its answer whole', async () => {
    const a = await upstreamOf(() => status(429, { error: { message: 'slow down' } }, { 'retry-after': '30' }));
    const b = await upstreamOf(() => chatAnswer('Streamed from B'));
    const gateway = await gatewayOf({
      routes: [
        { model: '*', upstreams: [{ upstream: a.root, protocol: 'chat' }, { upstream: b.root, protocol: 'chat' }] },
      ],
      upstreamRetry: NO_RETRY,
    });
    const response = await askChat(gateway, true);
    expect(response.status).toBe(200);
    expect(response.headers.get('x-ai4ts-upstream')).toBe(`chat@${b.host}`);
    expect(response.headers.get('x-ai4ts-attempts')).toBe('2');
    const { text, done } = readChunks(await response.text());
    expect([text, done]).toEqual(['Streamed from B', true]);
  });

  it('moves on from an upstream that refuses the connection', async () => {
    const b = await upstreamOf(() => chatAnswer('B was reachable'));
    const gateway = await gatewayOf({
      routes: [
        {
          model: '*',
          upstreams: [
            { upstream: await refusingRoot(), protocol: 'chat', name: 'down' },
            { upstream: b.root, protocol: 'chat', name: 'up' },
          ],
        },
      ],
      upstreamRetry: NO_RETRY,
    });
    const response = await askChat(gateway, true);
    expect([response.status, response.headers.get('x-ai4ts-upstream'), response.headers.get('x-ai4ts-attempts')]).toEqual([
      200,
      'up',
      '2',
    ]);
    expect(readChunks(await response.text()).text).toBe('B was reachable');
  });

  it('moves on from an upstream whose first event does not come within the first-event timeout', async () => {
    let release!: () => void;
    const never = new Promise<void>((resolve) => {
      release = resolve;
    });
    const a = await upstreamOf(() => heldAnswer('too late', never));
    const b = await upstreamOf(() => chatAnswer('B in time'));
    const gateway = await gatewayOf({
      routes: [
        { model: '*', upstreams: [{ upstream: a.root, protocol: 'chat', name: 'stalled' }, { upstream: b.root, protocol: 'chat', name: 'b' }] },
      ],
      upstreamRetry: NO_RETRY,
      upstreamTimeouts: { firstEvent: 200 },
    });
    for (const stream of [true, false]) {
      const response = await askChat(gateway, stream);
      expect([response.status, response.headers.get('x-ai4ts-upstream'), response.headers.get('x-ai4ts-attempts')]).toEqual([
        200,
        'b',
        '2',
      ]);
      const text = stream ? readChunks(await response.text()).text : await chatText(response);
      expect(text).toBe('B in time');
    }
    release();
  });

  it('runs an upstream’s own retries first, then falls back', async () => {
    const a = await upstreamOf(() => status(503, undefined, { 'retry-after': '0' }));
    const b = await upstreamOf(() => chatAnswer('after the retries'));
    const gateway = await gatewayOf({
      routes: [{ model: '*', upstreams: [{ upstream: a.root, protocol: 'chat' }, { upstream: b.root, protocol: 'chat' }] }],
      upstreamRetry: { maxRetries: 2, backoff: { initialMs: 1, maxMs: 5 } },
    });
    const response = await askChat(gateway);
    expect(await chatText(response)).toBe('after the retries');
    expect(response.headers.get('x-ai4ts-attempts')).toBe('2');
    expect(a.bodies).toHaveLength(3);
  });

  it('answers the last failure when every upstream fails, naming the last one asked and no key', async () => {
    const a = await upstreamOf(() => status(503, { error: { message: `down, key ${KEY_A}` } }));
    const b = await upstreamOf(() => status(502, { error: { message: `down too, key ${KEY_B}` } }));
    const gateway = await gatewayOf({
      routes: [
        {
          model: '*',
          upstreams: [
            { upstream: a.root, protocol: 'chat', upstreamToken: KEY_A, name: 'a' },
            { upstream: b.root, protocol: 'chat', upstreamToken: KEY_B, name: 'b' },
          ],
        },
      ],
      upstreamRetry: NO_RETRY,
    });
    for (const stream of [false, true]) {
      const response = await askChat(gateway, stream);
      const text = await response.text();
      expect([response.status, response.headers.get('x-ai4ts-upstream'), response.headers.get('x-ai4ts-attempts')]).toEqual([
        502,
        'b',
        '2',
      ]);
      expect(text).toContain('down too');
      expect(text).not.toContain(KEY_A);
      expect(text).not.toContain(KEY_B);
    }
  });
});

describe('the upstream named, never its URL', () => {
  it('an upstream URL with credentials is named by its kind and host in the header, the log and the error', async () => {
    const PASSWORD = 'url-password-5e2b90';
    const b = await upstreamOf(() => chatAnswer('unused'));
    const withCredentials = b.root.replace('http://', `http://user:${PASSWORD}@`);
    const logs: unknown[] = [];
    const gateway = await gatewayOf({
      routes: [{ model: '*', upstreams: [{ upstream: withCredentials, protocol: 'chat' }] }],
      upstreamRetry: NO_RETRY,
      log: (entry) => logs.push(entry),
    });
    // fetch refuses a URL with credentials: the one upstream fails, and its failure is answered.
    const response = await askChat(gateway);
    const text = await response.text();
    expect([response.status, response.headers.get('x-ai4ts-upstream'), response.headers.get('x-ai4ts-attempts')]).toEqual([
      502,
      `chat@${b.host}`,
      '1',
    ]);
    expect(JSON.stringify([text, [...response.headers], logs])).not.toContain(PASSWORD);
    expect(logs).toMatchObject([{ upstream: `chat@${b.host}`, attempts: 1 }]);
  });
});

describe('no fallback', () => {
  it('once output started: the client sees the in-stream error, the next upstream is never asked', async () => {
    const a = await upstreamOf(() => cutAnswer('Half an ans'));
    const b = await upstreamOf(() => chatAnswer('must not be mixed in'));
    const logs: unknown[] = [];
    const gateway = await gatewayOf({
      routes: [{ model: '*', upstreams: [{ upstream: a.root, protocol: 'chat', name: 'a' }, { upstream: b.root, protocol: 'chat' }] }],
      upstreamRetry: NO_RETRY,
      log: (entry) => logs.push(entry),
    });
    const response = await askChat(gateway, true);
    expect([response.status, response.headers.get('x-ai4ts-upstream'), response.headers.get('x-ai4ts-attempts')]).toEqual([
      200,
      'a',
      '1',
    ]);
    const { text, done, chunks } = readChunks(await response.text());
    expect(text).toBe('Half an ans');
    expect(done).toBe(false);
    expect(chunks.at(-1)?.error).toBeDefined();
    expect(b.bodies).toHaveLength(0);
    expect(logs).toMatchObject([{ upstream: 'a', attempts: 1, error: expect.any(String) }]);
  });

  it('after a refusal of the request itself (400): it is the client’s, in its own protocol’s shape', async () => {
    const a = await upstreamOf(() => status(400, { error: { message: 'max_tokens is too large', type: 'invalid_request_error' } }));
    const b = await upstreamOf(() => chatAnswer('must not be asked'));
    const gateway = await gatewayOf({
      routes: [{ model: '*', upstreams: [{ upstream: a.root, protocol: 'chat', name: 'a' }, { upstream: b.root, protocol: 'chat' }] }],
      upstreamRetry: NO_RETRY,
    });
    const response = await askChat(gateway);
    expect([response.status, response.headers.get('x-ai4ts-attempts')]).toEqual([400, '1']);
    expect(await response.text()).toContain('max_tokens is too large');
    expect(b.bodies).toHaveLength(0);
  });
});

describe('fallback across protocols', () => {
  it('a Messages request falls back to a Chat upstream; x-ai4ts-dropped names what only the Chat upstream lost', async () => {
    const a = await upstreamOf(() => status(529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }));
    const b = await upstreamOf(() => chatAnswer('Chat speaking Messages'));
    const gateway = await gatewayOf({
      routes: [
        {
          model: 'claude-*',
          upstreams: [
            { upstream: a.root, protocol: 'messages', name: 'anthropic' },
            { upstream: b.root, protocol: 'chat', name: 'openai-compatible' },
          ],
        },
      ],
      upstreamRetry: NO_RETRY,
    });
    const response = await fetch(`${gateway.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'claude-x', max_tokens: 50, top_k: 5, stream: true, messages: [{ role: 'user', content: 'Hi' }] }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-ai4ts-upstream')).toBe('openai-compatible');
    expect(response.headers.get('x-ai4ts-dropped')).toBe('top_k');
    const text = await response.text();
    expect(text).toContain('event: message_start');
    expect(text).toContain('"text":"Chat speaking Messages"');
    expect(text).toContain('event: message_stop');
    expect(a.bodies[0]).toMatchObject({ top_k: 5 });
    expect(b.bodies[0]).not.toHaveProperty('top_k');
  });

  it('a Chat request falls back to a Messages upstream', async () => {
    const a = await upstreamOf(() => status(500));
    const b = await upstreamOf(() => messagesAnswer('Messages speaking Chat'));
    const gateway = await gatewayOf({
      routes: [{ model: '*', upstreams: [{ upstream: a.root, protocol: 'chat' }, { upstream: b.root, protocol: 'messages', name: 'claude' }] }],
      upstreamRetry: NO_RETRY,
    });
    const response = await askChat(gateway);
    expect(response.headers.get('x-ai4ts-upstream')).toBe('claude');
    expect(await chatText(response)).toBe('Messages speaking Chat');
  });
});

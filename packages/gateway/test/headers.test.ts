/**
 * Session ids that are not valid header values (characters above U+00FF, CR/LF) from `user`, `metadata.session_id`
 * or the daemon's `done.session_id`: both handlers answer, streaming or not, with `x-session-id` percent-encoded
 * (docs/proxy.md), and an answer whose headers cannot be sent still ends and cancels its source.
 */
import { sseResponse, writeSse } from '@ai4ts/bridge';
import { createGateway, type GatewayOptions, listenGateway } from '@ai4ts/gateway';
import OpenAI from 'openai';
import { sendSse, serve, sseFrame } from '@ai4ts/test-kit';
import { afterEach, describe, expect, it } from 'vitest';
import { readChunks, serveFetchHandler, startDaemon } from './helpers.js';

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const server of open.splice(0).reverse()) await server.close();
});

/** Ids that node:http and fetch's Headers refuse as they are, and how the proxy writes each. */
const IDS = [
  { id: 'josé-用户', encoded: 'jos%C3%A9-%E7%94%A8%E6%88%B7' },
  { id: 'a\r\nset-cookie: x=1', encoded: 'a%0D%0Aset-cookie:%20x=1' },
  { id: '50%\u{1F600}', encoded: '50%25%F0%9F%98%80' },
];

const DAEMON_ID = 'démon\n会话';
const DAEMON_ID_ENCODED = 'd%C3%A9mon%0A%E4%BC%9A%E8%AF%9D';

/** A daemon answering text then done with {@link DAEMON_ID}, and each handler in front of it over 127.0.0.1. */
async function answeringDaemon() {
  const daemon = await startDaemon((res) => {
    sendSse(res, sseFrame({ type: 'text', content: 'Hello' }) + sseFrame({ type: 'done', session_id: DAEMON_ID }));
  });
  open.push(daemon);
  return daemon;
}

async function proxies(): Promise<Array<{ adapter: string; url: string; rejections: () => unknown[] }>> {
  const daemon = await answeringDaemon();
  const options: GatewayOptions = { upstream: daemon.url, dialect: 'typed' };
  const node = await listenGateway(options);
  open.push(node);
  const fetchServer = await serveFetchHandler(createGateway(options).fetch);
  open.push(fetchServer);
  return [
    { adapter: 'node', url: node.url, rejections: () => [] },
    { adapter: 'fetch', url: fetchServer.url, rejections: () => fetchServer.rejections },
  ];
}

const ASK = { model: 'daemon', messages: [{ role: 'user' as const, content: 'hi' }] };

describe('x-session-id values that cannot be sent as they are', () => {
  it('the official client streams the answer through both handlers, the request id encoded', async () => {
    for (const { adapter, url, rejections } of await proxies())
      for (const { id, encoded } of IDS) {
        const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'none', maxRetries: 0, timeout: 5000 });
        const { data, response } = await client.chat.completions
          .create({ ...ASK, stream: true, user: id })
          .withResponse();
        let text = '';
        for await (const chunk of data) text += chunk.choices[0]?.delta.content ?? '';
        expect(text, `${adapter} ${JSON.stringify(id)}`).toBe('Hello');
        expect(response.headers.get('x-session-id')).toBe(encoded);
        expect(decodeURIComponent(encoded)).toBe(id);
        expect(rejections()).toEqual([]);
      }
  });

  it('raw fetch, streaming and not, user and metadata.session_id: the header encoded, the JSON raw', async () => {
    for (const { adapter, url, rejections } of await proxies())
      for (const { id, encoded } of IDS)
        for (const ask of [
          { ...ASK, user: id },
          { ...ASK, metadata: { session_id: id } },
        ]) {
          const post = (stream: boolean) =>
            fetch(`${url}/v1/chat/completions`, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({ ...ask, stream }),
              signal: AbortSignal.timeout(5000),
            });
          const streamed = await post(true);
          expect(streamed.status, adapter).toBe(200);
          expect(streamed.headers.get('x-session-id')).toBe(encoded);
          const { text, done, chunks } = readChunks(await streamed.text());
          expect({ text, done }).toEqual({ text: 'Hello', done: true });
          expect(chunks.at(-1)?.session_id).toBe(DAEMON_ID); // JSON carries any text as is

          // Non-stream: the daemon's own id, which is not sendable either.
          const whole = await post(false);
          expect(whole.status, adapter).toBe(200);
          expect(whole.headers.get('x-session-id')).toBe(DAEMON_ID_ENCODED);
          expect(await whole.json()).toMatchObject({
            session_id: DAEMON_ID,
            choices: [{ message: { content: 'Hello' } }],
          });
          expect(rejections()).toEqual([]);
        }
  });

  it('the fetch handler called directly resolves (no ByteString rejection)', async () => {
    const handler = createGateway({ upstream: (await answeringDaemon()).url, dialect: 'typed' });
    for (const stream of [true, false]) {
      const response = await handler.fetch(
        new Request('http://proxy.local/v1/chat/completions', {
          method: 'POST',
          body: JSON.stringify({ ...ASK, stream, user: 'josé-用户' }),
        }),
      );
      expect(response.status).toBe(200);
      expect(response.headers.get('x-session-id')).toBe(stream ? 'jos%C3%A9-%E7%94%A8%E6%88%B7' : DAEMON_ID_ENCODED);
      await response.text();
    }
  });
});

describe('an SSE answer whose headers cannot be sent', () => {
  it('writeSse ends the connection and closes its source instead of leaving the client without a status line', async () => {
    let closed!: () => void;
    const sourceClosed = new Promise<void>((resolve) => {
      closed = resolve;
    });
    // An iterator object: a generator not yet started would skip its finally on return().
    const source = {
      [Symbol.asyncIterator]: () => ({
        next: async () => ({ done: false as const, value: { data: 'never sent' } }),
        return: async () => {
          closed();
          return { done: true as const, value: undefined };
        },
      }),
    };
    const failures: unknown[] = [];
    const server = await serve((_req, res) => {
      writeSse(res, source, { headers: { 'x-session-id': 'josé-用户' } }).catch((error: unknown) =>
        failures.push(error),
      );
    });
    open.push(server);
    const outcome = await fetch(server.url, { signal: AbortSignal.timeout(5000) }).then(
      () => 'answered',
      (error: unknown) => (error instanceof Error && error.name === 'TimeoutError' ? 'hung' : 'connection closed'),
    );
    expect(outcome).toBe('connection closed');
    await sourceClosed;
    expect(failures).toHaveLength(1);
  });

  it('sseResponse throws before opening its source', () => {
    let opened = false;
    const make = () =>
      sseResponse(
        () => {
          opened = true;
          return (async function* () {})();
        },
        { headers: { 'x-session-id': 'josé-用户' } },
      );
    expect(make).toThrow(TypeError);
    expect(opened).toBe(false);
  });
});

/**
 * Upstream timeouts over real sockets: a daemon that stalls before its headers, before its first event or between
 * two events gets the client a clean error naming the phase (a 504 before output; an error chunk and the end of the
 * stream after), and the daemon's request is cancelled.
 */
import type { ServerResponse } from 'node:http';
import { createGateway, listenGateway, type GatewayOptions } from '@ai4ts/gateway';
import { sleep, SSE_HEADERS, sseFrame, startSse } from '@ai4ts/test-kit';
import { afterEach, describe, expect, it } from 'vitest';
import { type Daemon, readChunks, serveFetchHandler, startDaemon } from './helpers.js';

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const server of open.splice(0).reverse()) await server.close();
});

type Phase = 'headers' | 'first_event' | 'idle';
/** The timeout under test: short, so that the test is quick; the error's code and message name the phase it hit. */
const SHORT_MS = 250;
/**
 * The timeouts of a proxy that tests `phase`: the others a minute, so that a loaded machine (a daemon slow to send
 * its headers) cannot trip a phase the test is not about.
 */
function timeoutsFor(phase: Phase) {
  const long = { headersMs: 60_000, firstEventMs: 60_000, idleMs: 60_000 };
  return { ...long, [phase === 'headers' ? 'headersMs' : phase === 'first_event' ? 'firstEventMs' : 'idleMs']: SHORT_MS };
}

const stallBeforeHeaders = () => {};
const stallBeforeFirstEvent = (res: ServerResponse) => {
  startSse(res);
};
const stallAfterText = (res: ServerResponse) => {
  res.writeHead(200, SSE_HEADERS);
  res.write(sseFrame({ type: 'text', content: 'Hello' }));
};

async function proxyFor(
  script: (res: ServerResponse) => void,
  phase: Phase,
  adapter: 'node' | 'fetch' = 'node',
): Promise<{ daemon: Daemon; url: string }> {
  const daemon = await startDaemon(script);
  open.push(daemon);
  const options: GatewayOptions = { upstream: daemon.url, dialect: 'typed', upstreamTimeouts: timeoutsFor(phase) };
  const server = adapter === 'node' ? await listenGateway(options) : await serveFetchHandler(createGateway(options).fetch);
  open.push(server);
  return { daemon, url: server.url };
}

function ask(url: string, stream: boolean): Promise<Response> {
  return fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    body: JSON.stringify({ model: 'daemon', messages: [{ role: 'user', content: 'hi' }], stream }),
  });
}

describe('upstream timeouts', () => {
  const beforeOutput = [
    { phase: 'headers', script: stallBeforeHeaders, text: 'response headers' },
    { phase: 'first_event', script: stallBeforeFirstEvent, text: 'the first event' },
  ] as const;
  for (const { phase, script, text } of beforeOutput)
    for (const stream of [false, true])
      it(`a stall before ${phase} is a 504 naming the phase (${stream ? 'stream' : 'non-stream'}), the daemon cut`, async () => {
        const { daemon, url } = await proxyFor(script, phase);
        const response = await ask(url, stream);
        expect(response.status).toBe(504);
        expect(await response.json()).toEqual({
          error: {
            message: `Timed out after ${SHORT_MS} ms waiting for ${text}`,
            type: 'upstream_error',
            param: null,
            code: `upstream_timeout_${phase}`,
          },
        });
        await daemon.cut; // the proxy closed its request to the daemon
      });

  it('a stall between events ends a stream with an error chunk naming the phase, no [DONE], the daemon cut', async () => {
    for (const adapter of ['node', 'fetch'] as const) {
      const { daemon, url } = await proxyFor(stallAfterText, 'idle', adapter);
      const response = await ask(url, true);
      expect(response.status).toBe(200);
      const { chunks, done, text } = readChunks(await response.text()); // the body ends
      expect(text).toBe('Hello');
      expect(done).toBe(false);
      expect(chunks.at(-1)?.error).toEqual({
        message: `Timed out after ${SHORT_MS} ms waiting for the next event`,
        type: 'upstream_error',
        param: null,
        code: 'upstream_timeout_idle',
      });
      await daemon.cut;
    }
  });

  it('events that keep coming within the idle timeout never trip it, however long the stream lasts', async () => {
    // Six gaps of 100 ms: each well within the 250 ms idle timeout, 600 ms in all (one timer serves the stream).
    const daemon = await startDaemon(async (res) => {
      res.writeHead(200, SSE_HEADERS);
      for (let i = 0; i < 6; i++) {
        res.write(sseFrame({ type: 'text', content: `${i}` }));
        await sleep(100);
      }
      res.end(sseFrame({ type: 'done' }));
    });
    open.push(daemon);
    const proxy = await listenGateway({ upstream: daemon.url, dialect: 'typed', upstreamTimeouts: timeoutsFor('idle') });
    open.push(proxy);
    const { done, text } = readChunks(await (await ask(proxy.url, true)).text());
    expect(text).toBe('012345');
    expect(done).toBe(true);
  });

  it('a stall between events is a 504 for a non-stream request', async () => {
    const { daemon, url } = await proxyFor(stallAfterText, 'idle');
    const response = await ask(url, false);
    expect(response.status).toBe(504);
    expect(await response.json()).toMatchObject({ error: { code: 'upstream_timeout_idle' } });
    await daemon.cut;
  });

  it('0 turns a timeout off, and a bad value is refused when the proxy is created', async () => {
    expect(() => createGateway({ upstream: 'http://127.0.0.1:9', dialect: 'typed', upstreamTimeouts: { idleMs: -1 } })).toThrow(
      RangeError,
    );
    const daemon = await startDaemon((res) => {
      stallAfterText(res);
      setTimeout(() => res.end(sseFrame({ type: 'done' })), 300);
    });
    open.push(daemon);
    const proxy = await listenGateway({
      upstream: daemon.url,
      dialect: 'typed',
      upstreamTimeouts: { ...timeoutsFor('idle'), idleMs: 0 },
    });
    open.push(proxy);
    const { done, text } = readChunks(await (await ask(proxy.url, true)).text());
    expect(done).toBe(true);
    expect(text).toBe('Hello');
  });
});

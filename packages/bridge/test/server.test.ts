import { request as httpRequest, type IncomingMessage, ServerResponse } from 'node:http';
import { SSE_HEADERS, sseResponse, writeSse } from '@ai4ts/bridge';
import { parseSse, type SseMessage } from '@ai4ts/sse';
import { closeAll, readerOf, serve } from '@ai4ts/test-kit';
import { afterEach, describe, expect, it, vi } from 'vitest';

afterEach(closeAll);

function get(url: string): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => httpRequest(url, resolve).on('error', reject).end());
}

/** A promise with its resolver. */
function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

describe('sseResponse', () => {
  it('streams the messages with the SSE headers', async () => {
    async function* events(): AsyncGenerator<SseMessage> {
      yield { event: 'a', data: '1' };
      yield { data: 'two\nlines' };
    }
    const response = sseResponse(events(), { headers: { 'x-session-id': 's' } });
    for (const [name, value] of Object.entries(SSE_HEADERS)) expect(response.headers.get(name)).toBe(value);
    expect(response.headers.get('x-session-id')).toBe('s');
    const received = [];
    for await (const event of parseSse(response)) received.push(event);
    expect(received).toEqual([
      { event: 'a', data: '1' },
      { event: 'message', data: 'two\nlines' },
    ]);
  });

  it('sends heartbeat comments while the source is idle', async () => {
    const release = deferred();
    async function* events(): AsyncGenerator<SseMessage> {
      await release.promise;
      yield { data: 'late' };
    }
    const reader = readerOf(sseResponse(events(), { heartbeatMs: 5 }));
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toBe(': ping\n\n');
    release.resolve();
    let rest = '';
    for (let r = await reader.read(); !r.done; r = await reader.read()) rest += new TextDecoder().decode(r.value);
    expect(rest.replaceAll(': ping\n\n', '')).toBe('data: late\n\n');
  });

  it('aborts the source signal and stops the source when the client cancels', async () => {
    const stopped = deferred<boolean>();
    let signal: AbortSignal | undefined;
    const response = sseResponse((s) => {
      signal = s;
      return (async function* () {
        try {
          yield { data: 'first' };
          await new Promise((_, reject) => s.addEventListener('abort', () => reject(s.reason)));
        } finally {
          stopped.resolve(true);
        }
      })();
    });
    const reader = readerOf(response);
    await reader.read();
    await reader.cancel('bye');
    expect(signal?.aborted).toBe(true);
    expect(await stopped.promise).toBe(true);
  });

  it('errors the body when the source throws (never a clean end)', async () => {
    async function* events(): AsyncGenerator<SseMessage> {
      yield { data: 'one' };
      throw new Error('source broke');
    }
    const text = sseResponse(events()).text();
    await expect(text).rejects.toThrow('source broke');
  });
});

describe('writeSse', () => {
  it('writes the headers and the messages, then ends', async () => {
    const { url } = await serve((_req, res) => {
      void writeSse(
        res,
        (async function* () {
          yield { data: 'a' };
          yield { event: 'x', data: 'b', id: '2' };
        })(),
      );
    });
    const res = await get(url);
    expect(res.statusCode).toBe(200);
    for (const [name, value] of Object.entries(SSE_HEADERS)) expect(res.headers[name]).toBe(value);
    let body = '';
    for await (const chunk of res) body += chunk;
    expect(body).toBe('data: a\n\nevent: x\nid: 2\ndata: b\n\n');
  });

  it('sends the messages a source has ready at once as one write', async () => {
    const writes: unknown[] = [];
    const { url } = await serve((_req, res) => {
      vi.spyOn(res, 'write').mockImplementation(function (this: ServerResponse, ...args: Parameters<ServerResponse['write']>) {
        writes.push(args[0]);
        return ServerResponse.prototype.write.apply(this, args);
      });
      void writeSse(
        res,
        (async function* () {
          yield { data: 'a' };
          yield { data: 'b' };
          yield { data: 'c' };
          await new Promise((resolve) => setTimeout(resolve, 1));
          yield { data: 'd' };
        })(),
      );
    });
    const res = await get(url);
    let body = '';
    for await (const chunk of res) body += chunk;
    expect(body).toBe('data: a\n\ndata: b\n\ndata: c\n\ndata: d\n\n');
    expect(writes).toEqual(['data: a\n\ndata: b\n\ndata: c\n\n']); // 'd' went out with the end
  });

  it('answers its status line while the source has nothing yet', async () => {
    let release!: () => void;
    const { url } = await serve((_req, res) => {
      void writeSse(
        res,
        (async function* () {
          await new Promise<void>((resolve) => {
            release = resolve;
          });
          yield { data: 'late' };
        })(),
      );
    });
    const res = await get(url);
    expect(res.statusCode).toBe(200);
    release();
    let body = '';
    for await (const chunk of res) body += chunk;
    expect(body).toBe('data: late\n\n');
  });

  it('sends heartbeats, and aborts the source when the client disconnects', async () => {
    const aborted = deferred<unknown>();
    const finished = deferred();
    const { url } = await serve((_req, res) => {
      void writeSse(
        res,
        (signal) =>
          (async function* () {
            yield { data: 'hello' };
            await new Promise((_, reject) =>
              signal.addEventListener('abort', () => {
                aborted.resolve(signal.reason);
                reject(signal.reason);
              }),
            );
          })(),
        { heartbeatMs: 5 },
      ).then(finished.resolve);
    });
    const res = await get(url);
    let body = '';
    for await (const chunk of res) {
      body += chunk;
      if (body.includes(': ping')) break; // leaving the loop destroys the socket
    }
    expect(body.startsWith('data: hello\n\n')).toBe(true);
    expect(await aborted.promise).toBeInstanceOf(Error);
    await finished.promise;
  });

  it('destroys the connection when the source throws mid-stream, and rejects', async () => {
    const result = deferred<unknown>();
    const { url } = await serve((_req, res) => {
      writeSse(
        res,
        (async function* () {
          yield { data: 'one' };
          throw new Error('source broke');
        })(),
      ).catch(result.resolve);
    });
    const res = await get(url);
    const reading = (async () => {
      let body = '';
      for await (const chunk of res) body += chunk;
      return body;
    })();
    await expect(reading).rejects.toThrow(/aborted|socket hang up/);
    expect(await result.promise).toMatchObject({ message: 'source broke' });
  });
});

import type { IncomingMessage, ServerResponse } from 'node:http';
import { connectSse, isRetryableStatus, type SseEvent, SseError } from '@ai4ts/sse';
import { afterEach, describe, expect, it } from 'vitest';
import { closeAll, closed, SSE_HEADERS, serve, sleep } from '@ai4ts/test-kit';

afterEach(closeAll);

interface Seen {
  method: string | undefined;
  lastEventId: string | undefined;
  accept: string | undefined;
  custom: string | undefined;
  body: string;
}

/** A server that answers request n (1-based) with `script[n - 1]`, and records what each request carried. */
async function scripted(script: ((res: ServerResponse, req: IncomingMessage) => void | Promise<void>)[]) {
  const seen: Seen[] = [];
  const server = await serve(async (req, res, n) => {
    const body = server.bodies[n - 1] ?? '';
    seen.push({
      method: req.method,
      lastEventId: req.headers['last-event-id'] as string | undefined,
      accept: req.headers.accept,
      custom: req.headers['x-custom'] as string | undefined,
      body,
    });
    const step = script[n - 1];
    if (step) await step(res, req);
    else {
      res.writeHead(204);
      res.end();
    }
  });
  return { url: server.url, seen };
}

const stream = (text: string, end = true) => (res: ServerResponse) => {
  res.writeHead(200, SSE_HEADERS);
  if (end) res.end(text);
  else res.write(text);
};

const collect = async (events: AsyncIterable<SseEvent>) => {
  const out: SseEvent[] = [];
  for await (const event of events) out.push(event);
  return out;
};

/** A reconnection delay the tests could never wait out: reconnecting at all proves the server's retry: won. */
const NEVER = { delay: 600_000 };

describe('connectSse', () => {
  it('reconnects after a clean close, sends Last-Event-ID, honours retry:, skips replayed ids, stops on 204', async () => {
    const { url, seen } = await scripted([
      stream('retry: 5\nid: 1\ndata: a\n\nid: 2\ndata: b\n\n'),
      stream('id: 2\ndata: b again\n\nid: 3\ndata: c\n\ndata: no id\n\n'),
    ]);
    const events = await collect(connectSse(url, { retry: NEVER }));
    expect(events).toStrictEqual([
      { event: 'message', data: 'a', id: '1' },
      { event: 'message', data: 'b', id: '2' },
      { event: 'message', data: 'c', id: '3' },
      { event: 'message', data: 'no id' },
    ]);
    expect(seen.map((s) => s.lastEventId)).toEqual([undefined, '2', '3']);
    expect(seen.every((s) => s.accept === 'text/event-stream')).toBe(true);
  });

  it('reconnects after the socket is destroyed mid-event, dropping the broken event', async () => {
    const { url, seen } = await scripted([
      (res) => {
        res.writeHead(200, SSE_HEADERS);
        res.write('retry: 5\nid: 1\ndata: a\n\nid: 2\ndata: bro');
        setTimeout(() => res.socket?.destroy(), 20);
      },
      stream('id: 2\ndata: b\n\n'),
    ]);
    const events = await collect(connectSse(url, { retry: NEVER }));
    expect(events.map((e) => e.data)).toEqual(['a', 'b']);
    expect(seen.map((s) => s.lastEventId)).toEqual([undefined, '1', '2']);
  });

  it('with reconnectOnClose false, a clean close ends it and only a broken body reconnects', async () => {
    const { url, seen } = await scripted([
      (res) => {
        res.writeHead(200, SSE_HEADERS);
        res.write('retry: 5\nid: 1\ndata: a\n\nid: 2\ndata: bro');
        setTimeout(() => res.socket?.destroy(), 20);
      },
      stream('id: 2\ndata: b\n\n'),
      stream('id: 3\ndata: never read\n\n'),
    ]);
    const events = await collect(connectSse(url, { retry: { ...NEVER, reconnectOnClose: false } }));
    expect(events.map((e) => e.data)).toEqual(['a', 'b']);
    expect(seen.map((s) => s.lastEventId)).toEqual([undefined, '1']);
  });

  it('stops sending Last-Event-ID after the server resets the id with an empty one', async () => {
    const { url, seen } = await scripted([stream('retry: 1\nid: 1\ndata: a\n\n'), stream('id\ndata: b\n\n')]);
    const events = await collect(connectSse(url, { retry: NEVER }));
    expect(events).toStrictEqual([
      { event: 'message', data: 'a', id: '1' },
      { event: 'message', data: 'b', id: '' },
    ]);
    expect(seen.map((s) => s.lastEventId)).toEqual([undefined, '1', undefined]);
  });

  it('replays method, headers and body on every attempt', async () => {
    const { url, seen } = await scripted([stream('retry: 1\ndata: x\n\n')]);
    const events = await collect(
      connectSse(url, { method: 'POST', headers: { 'x-custom': 'yes' }, body: '{"q":1}', retry: NEVER }),
    );
    expect(events.map((e) => e.data)).toEqual(['x']);
    expect(seen).toHaveLength(2);
    for (const s of seen) expect(s).toMatchObject({ method: 'POST', custom: 'yes', body: '{"q":1}' });
  });

  it('keeps a caller-set Accept header', async () => {
    const { url, seen } = await scripted([]);
    await collect(connectSse(url, { headers: { accept: 'text/event-stream, */*' } }));
    expect(seen.map((s) => s.accept)).toEqual(['text/event-stream, */*']);
  });

  it('retries 5xx with backoff, then reads the stream', async () => {
    const fail = (res: ServerResponse) => {
      res.writeHead(503);
      res.end('busy');
    };
    const { url, seen } = await scripted([fail, fail, stream('data: ok\n\n')]);
    const events = await collect(connectSse(url, { retry: { delay: 2 } }));
    expect(events.map((e) => e.data)).toEqual(['ok']);
    expect(seen).toHaveLength(4);
  });

  it.each([409, 501])('retries %i now (one status rule with @ai4ts/core), then reads the stream', async (status) => {
    const fail = (res: ServerResponse) => {
      res.writeHead(status);
      res.end();
    };
    const { url, seen } = await scripted([fail, stream('data: ok\n\n')]);
    const events = await collect(connectSse(url, { retry: { delay: 1, maxAttempts: 2 } }));
    expect(events.map((e) => e.data)).toEqual(['ok']);
    expect(seen).toHaveLength(3);
  });

  it('gives up on 5xx after maxAttempts with SseError http_error', async () => {
    const fail = (res: ServerResponse) => {
      res.writeHead(500);
      res.end();
    };
    const { url, seen } = await scripted([fail, fail, fail, fail]);
    const error = await collect(connectSse(url, { retry: { delay: 1, maxAttempts: 3 } })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SseError);
    expect(error).toMatchObject({ code: 'http_error', status: 500 });
    expect(seen).toHaveLength(3);
  });

  it('a 404 is final: SseError http_error at once', async () => {
    const { url, seen } = await scripted([
      (res) => {
        res.writeHead(404);
        res.end('no such stream');
      },
    ]);
    await expect(collect(connectSse(url, { retry: { delay: 1 } }))).rejects.toMatchObject({
      name: 'SseError',
      code: 'http_error',
      status: 404,
    });
    expect(seen).toHaveLength(1);
  });

  it('a 200 that is not text/event-stream is final', async () => {
    const { url, seen } = await scripted([
      (res) => {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<html>login</html>');
      },
    ]);
    await expect(collect(connectSse(url))).rejects.toMatchObject({ code: 'http_error', status: 200 });
    expect(seen).toHaveLength(1);
  });

  it('gives up on a refused connection after maxAttempts with SseError network_error', async () => {
    const server = await serve(() => {});
    const url = server.url;
    await server.close();
    const error = await collect(connectSse(url, { retry: { delay: 1, maxAttempts: 2 } })).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'SseError', code: 'network_error' });
    expect((error as SseError).cause).toBeInstanceOf(Error);
  });

  it('counts closes without any event as failures', async () => {
    const empty = stream(': nothing here\n\n');
    const { url, seen } = await scripted([empty, empty, empty]);
    await expect(collect(connectSse(url, { retry: { delay: 1, maxAttempts: 3 } }))).rejects.toMatchObject({
      code: 'network_error',
    });
    expect(seen).toHaveLength(3);
  });

  it('an abort mid-stream stops it with an AbortError and closes the connection', async () => {
    let gone!: Promise<void>;
    const { url } = await scripted([
      (res) => {
        gone = closed(res);
        stream('data: a\n\n', false)(res);
      },
    ]);
    const controller = new AbortController();
    const consume = async () => {
      for await (const _ of connectSse(url, { signal: controller.signal })) setTimeout(() => controller.abort(), 5);
    };
    await expect(consume()).rejects.toMatchObject({ name: 'AbortError' });
    await gone;
  });

  it('an abort during the wait between connections stops it', async () => {
    const { url, seen } = await scripted([stream('data: a\n\n')]);
    const controller = new AbortController();
    const consume = async () => {
      for await (const _ of connectSse(url, { signal: controller.signal, retry: NEVER })) {
        setTimeout(() => controller.abort(), 20);
      }
    };
    await expect(consume()).rejects.toMatchObject({ name: 'AbortError' });
    expect(seen).toHaveLength(1);
  });

  it('a consumer that breaks closes the connection and does not reconnect', async () => {
    let gone!: Promise<void>;
    const { url, seen } = await scripted([
      (res) => {
        gone = closed(res);
        stream('retry: 1\ndata: a\n\n', false)(res);
      },
    ]);
    for await (const event of connectSse(url)) {
      expect(event.data).toBe('a');
      break;
    }
    await gone;
    await sleep(20);
    expect(seen).toHaveLength(1);
  });
});

describe('isRetryableStatus', () => {
  it('retries 408, 409, 429 and every 5xx, nothing else', () => {
    const statuses = [200, 204, 301, 400, 401, 403, 404, 405, 408, 409, 410, 413, 422, 429, 451, 500, 501, 502, 503, 504, 505, 529, 599];
    expect(statuses.filter(isRetryableStatus)).toEqual([408, 409, 429, 500, 501, 502, 503, 504, 505, 529, 599]);
  });
});

import { parseSse, type SseEvent, SseError } from '@ai4ts/sse';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, describe, expect, it } from 'vitest';
import { closeAll, closed, SSE_HEADERS, serve, sleep } from '@ai4ts/test-kit';

afterEach(closeAll);

const collect = async (events: AsyncIterable<SseEvent>) => {
  const out: SseEvent[] = [];
  for await (const event of events) out.push(event);
  return out;
};

/** A server that sends `first`, then stalls until the client goes away; `gone` resolves then. */
async function stallingServer(first = 'data: one\n\n') {
  let gone!: Promise<void>;
  const ready = new Promise<void>((resolve) => {
    void serve((_req, res) => {
      gone = closed(res);
      res.writeHead(200, SSE_HEADERS);
      res.write(first);
    }).then((s) => {
      server = s;
      resolve();
    });
  });
  let server!: Awaited<ReturnType<typeof serve>>;
  await ready;
  return { url: server.url, gone: () => gone };
}

describe('parseSse over a real socket', () => {
  it('yields events as they arrive, in chunks cut anywhere', async () => {
    const server = await serve(async (_req, res) => {
      res.writeHead(200, SSE_HEADERS);
      for (const piece of ['data: hel', 'lo\n', '\nevent: done\r', '\ndata: 世', '界\n\n']) {
        res.write(piece);
        await sleep(5);
      }
      res.end();
    });
    const stream = parseSse(await fetch(server.url));
    expect(await collect(stream)).toStrictEqual([
      { event: 'message', data: 'hello' },
      { event: 'done', data: '世界' },
    ]);
    expect(stream.incomplete).toBe(false);
  });

  it('tells when the stream ended inside an event', async () => {
    const server = await serve((_req, res) => {
      res.writeHead(200, SSE_HEADERS);
      res.end('data: a\n\ndata: {"partial"');
    });
    const stream = parseSse(await fetch(server.url));
    expect(await collect(stream)).toStrictEqual([{ event: 'message', data: 'a' }]);
    expect(stream.incomplete).toBe(true);
  });

  it('cancels the body when the consumer breaks', async () => {
    const { url, gone } = await stallingServer();
    for await (const event of parseSse(await fetch(url))) {
      expect(event.data).toBe('one');
      break;
    }
    await gone();
  });

  it('cancels the body when the consumer throws', async () => {
    const { url, gone } = await stallingServer();
    const consume = async () => {
      for await (const _ of parseSse(await fetch(url))) throw new Error('consumer failed');
    };
    await expect(consume()).rejects.toThrow('consumer failed');
    await gone();
  });

  it('an abort mid-read rejects with an AbortError and cancels the body', async () => {
    const { url, gone } = await stallingServer();
    const controller = new AbortController();
    const seen: string[] = [];
    const consume = async () => {
      for await (const event of parseSse(await fetch(url), { signal: controller.signal })) {
        seen.push(event.data);
        setTimeout(() => controller.abort(), 10); // abort while the next read is pending
      }
    };
    const error = await consume().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DOMException);
    expect((error as DOMException).name).toBe('AbortError');
    expect(seen).toEqual(['one']);
    await gone();
  });

  it("an abort rethrows the signal's own reason", async () => {
    const { url, gone } = await stallingServer();
    const controller = new AbortController();
    const reason = new Error('user left');
    const stream = parseSse(await fetch(url), { signal: controller.signal });
    const iterator = stream[Symbol.asyncIterator]();
    expect((await iterator.next()).value).toEqual({ event: 'message', data: 'one' });
    const pending = iterator.next();
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
    await gone();
  });

  it('an already aborted signal reads nothing and cancels the body', async () => {
    const { url, gone } = await stallingServer();
    const response = await fetch(url);
    await expect(collect(parseSse(response, { signal: AbortSignal.abort() }))).rejects.toMatchObject({
      name: 'AbortError',
    });
    await gone();
  });

  it('an oversized event rejects with SseError and cancels the body', async () => {
    const { url, gone } = await stallingServer(`data: ok\n\ndata: ${'x'.repeat(5000)}`);
    const seen: string[] = [];
    const consume = async () => {
      for await (const event of parseSse(await fetch(url), { maxEventSize: 1000 })) seen.push(event.data);
    };
    await expect(consume()).rejects.toMatchObject({ name: 'SseError', code: 'event_too_large' });
    expect(seen).toEqual(['ok']);
    await gone();
  });
});

describe('parseSse sources', () => {
  it('reads a ReadableStream and cancels it when the consumer breaks', async () => {
    let cancelled: unknown = 'not cancelled';
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('data: a\n\ndata: b\n\n'));
      },
      cancel(reason) {
        cancelled = reason;
      },
    });
    for await (const event of parseSse(body)) {
      expect(event.data).toBe('a');
      break;
    }
    expect(cancelled).toBeUndefined();
    expect(body.locked).toBe(false);
  });

  it('reads an async iterable of text and bytes and returns it when the consumer breaks', async () => {
    let returned = false;
    async function* source() {
      try {
        yield 'data: a\n';
        yield new TextEncoder().encode('\ndata: b\n\n');
        yield 'data: never\n\n';
      } finally {
        returned = true;
      }
    }
    const seen: string[] = [];
    for await (const event of parseSse(source())) {
      seen.push(event.data);
      if (event.data === 'b') break;
    }
    expect(seen).toEqual(['a', 'b']);
    expect(returned).toBe(true);
  });

  it('an abort interrupts an async iterable that stalls', async () => {
    const controller = new AbortController();
    async function* stalls() {
      yield 'data: a\n\n';
      await new Promise(() => {});
    }
    const seen: string[] = [];
    const consume = async () => {
      for await (const event of parseSse(stalls(), { signal: controller.signal })) {
        seen.push(event.data);
        setTimeout(() => controller.abort(new SseError('stop', { code: 'network_error' })), 5);
      }
    };
    await expect(consume()).rejects.toMatchObject({ message: 'stop' });
    expect(seen).toEqual(['a']);
  });

  it('an abort that comes once a chunk was read still delivers that chunk first', async () => {
    const controller = new AbortController();
    const body = new ReadableStream<Uint8Array>({
      start(stream) {
        stream.enqueue(new TextEncoder().encode('data: a\n\n'));
      },
      pull() {
        controller.abort(); // called as the first read's chunk is on its way
      },
    });
    const seen: string[] = [];
    const consume = async () => {
      for await (const event of parseSse(body, { signal: controller.signal })) seen.push(event.data);
    };
    await expect(consume()).rejects.toMatchObject({ name: 'AbortError' });
    expect(seen).toEqual(['a']);
  });

  it('a read with a signal keeps none of the chunks it has read while the stream goes on', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const read: Array<WeakRef<Uint8Array>> = [];
    async function* endless() {
      for (let i = 0; ; i++) {
        const chunk = new TextEncoder().encode(`data: ${i}\n\n`);
        read.push(new WeakRef(chunk));
        yield chunk;
      }
    }
    const events = parseSse(endless(), { signal: new AbortController().signal })[Symbol.asyncIterator]();
    for (let i = 0; i < 200; i++) await events.next();
    await sleep(0); // WeakRef targets stay alive until the end of the job that made them
    gc();
    // The last chunk or two may still be referenced by the read in progress; the first 190 must be gone.
    expect(read.slice(0, 190).filter((ref) => ref.deref() !== undefined)).toHaveLength(0);
    await events.return?.();
  });

  it('a Response without a body has no events', async () => {
    const stream = parseSse(new Response(null, { status: 204 }));
    expect(await collect(stream)).toEqual([]);
    expect(stream.incomplete).toBe(false);
  });
});

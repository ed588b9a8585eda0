/**
 * Serving SSE: `sseResponse` for fetch-style servers, `writeSse` for node:http. Both flush each message as it is
 * produced, pull the next one only when the client has taken the last (a paused client stalls the source), send
 * comment heartbeats while idle, and abort the source when the client goes away.
 */
import type { ServerResponse } from 'node:http';
import { encodeSse, type SseMessage } from '@ai4ts/sse';

/** The headers of an SSE response: no caching, no proxy buffering (`X-Accel-Buffering: no` for nginx). */
export const SSE_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
};

/** How often an idle stream sends a heartbeat comment, by default. */
export const DEFAULT_HEARTBEAT_MS = 15_000;

const HEARTBEAT = ': ping\n\n';

/**
 * The messages to send: an async iterable, or a function that makes one from a signal that aborts when the client
 * disconnects (pass it to your upstream `fetch` so that a departed client cancels the upstream request).
 */
export type SseMessageSource = AsyncIterable<SseMessage> | ((signal: AbortSignal) => AsyncIterable<SseMessage>);

/** Options of {@link sseResponse} and {@link writeSse}. */
export interface SseServeOptions {
  /** Milliseconds between heartbeat comments (`: ping`); 0 turns them off. Default 15000. */
  heartbeatMs?: number;
  /** Extra response headers (they may override the SSE ones). */
  headers?: Record<string, string>;
  /** Default 200. */
  status?: number;
}

/**
 * A fetch `Response` streaming `events` as SSE. The body pulls one message at a time; cancelling it (the client
 * left) aborts the source's signal and returns its iterator. A source that throws errors the body, so the client
 * sees a broken stream, never a clean end.
 */
export function sseResponse(events: SseMessageSource, init: SseServeOptions = {}): Response {
  // Headers first: ones that cannot be sent throw here, before the source is opened.
  const headers = new Headers({ ...SSE_HEADERS, ...init.headers });
  const controller = new AbortController();
  const iterator = open(events, controller.signal);
  const encoder = new TextEncoder();
  const heartbeatMs = init.heartbeatMs ?? DEFAULT_HEARTBEAT_MS;
  let timer: ReturnType<typeof setInterval> | undefined;
  const body = new ReadableStream<Uint8Array>({
    start(stream) {
      if (heartbeatMs > 0)
        timer = setInterval(() => {
          // Only into an empty queue: a client that is not reading needs no heartbeat.
          if ((stream.desiredSize ?? 0) > 0) stream.enqueue(encoder.encode(HEARTBEAT));
        }, heartbeatMs);
    },
    async pull(stream) {
      try {
        const next = await iterator.next();
        if (next.done) {
          clearInterval(timer);
          stream.close();
        } else stream.enqueue(encoder.encode(encodeSse(next.value)));
      } catch (error) {
        clearInterval(timer);
        stream.error(error);
      }
    },
    cancel(reason) {
      clearInterval(timer);
      controller.abort(reason);
      iterator.return?.().catch(() => {});
    },
  });
  return new Response(body, { status: init.status ?? 200, headers });
}

/**
 * Streams `events` as SSE on a node:http response: writes the headers, flushes each message, waits for 'drain'
 * when the socket is full before pulling the next, and sends heartbeats while idle. When the client disconnects it
 * aborts the source's signal and returns its iterator. Resolves when the response ended or the client left; if the
 * source throws, the connection is destroyed (never a clean end) and the promise rejects with that error.
 */
export async function writeSse(
  res: ServerResponse,
  events: SseMessageSource,
  options: SseServeOptions = {},
): Promise<void> {
  const controller = new AbortController();
  const onClose = () => {
    if (!res.writableFinished) controller.abort(new Error('The client disconnected'));
  };
  res.on('close', onClose);
  const iterator = open(events, controller.signal);
  const out = new BatchedWrites(res);
  let timer: ReturnType<typeof setInterval> | undefined;
  try {
    // Inside the try: headers that cannot be sent make writeHead throw, and that must still end the response and
    // close the source, never leave the client waiting for a status line.
    if (!res.headersSent) {
      res.writeHead(options.status ?? 200, { ...SSE_HEADERS, ...closeIfAsked(res), ...options.headers });
      // Sent at the end of this tick: with the first messages when they are ready by then (one packet, not two).
      out.flushSoon();
    }
    const heartbeatMs = options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS;
    if (heartbeatMs > 0)
      timer = setInterval(() => {
        if (!res.writableNeedDrain && !res.destroyed && out.idle) res.write(HEARTBEAT);
      }, heartbeatMs);
    for (;;) {
      const next = await iterator.next();
      if (next.done || res.destroyed) break;
      if (!out.write(encodeSse(next.value))) await drained(res);
    }
    if (!res.destroyed) res.end(out.take());
  } catch (error) {
    if (controller.signal.aborted) return;
    out.flush();
    res.destroy();
    throw error;
  } finally {
    clearInterval(timer);
    res.off('close', onClose);
    if (res.destroyed) iterator.return?.().catch(() => {});
  }
}

/**
 * `Connection: close` when the request asked for it: node:http keeps a connection open whenever the response
 * sets `Connection: keep-alive`, whatever the client said.
 */
function closeIfAsked(res: ServerResponse): Record<string, string> {
  const connection = res.req?.headers.connection;
  return connection !== undefined && /(^|,)\s*close\s*($|,)/i.test(connection) ? { connection: 'close' } : {};
}

function open(events: SseMessageSource, signal: AbortSignal): AsyncIterator<SseMessage> {
  return (typeof events === 'function' ? events(signal) : events)[Symbol.asyncIterator]();
}

/** Text held back for one write is flushed at once past this many characters (a bound on what waits). */
const BATCH_CHARS = 64 * 1024;

/**
 * The messages a source produces in one go (the events of one upstream chunk arrive in one run of microtasks) sent
 * as one write at the next tick: one chunked-encoding frame and one string to copy instead of one per message,
 * which was the largest part of the proxy's CPU time. Nothing waits longer than the tick it was produced in.
 */
class BatchedWrites {
  readonly #res: ServerResponse;
  #pending = '';
  #scheduled = false;
  /** Something went out: the headers, or a write. */
  #sent = false;
  readonly #tick = () => {
    this.#scheduled = false;
    const res = this.#res;
    if (!this.flush() && !this.#sent && !res.destroyed && !res.writableEnded) res.flushHeaders();
    this.#sent = true;
  };

  constructor(res: ServerResponse) {
    this.#res = res;
  }

  /** Nothing is held back. */
  get idle(): boolean {
    return this.#pending === '';
  }

  /** Queues `text` for this tick's write; false when the socket wants a 'drain' before more. */
  write(text: string): boolean {
    this.#pending += text;
    if (this.#pending.length >= BATCH_CHARS) this.flush();
    else this.flushSoon();
    return !this.#res.writableNeedDrain;
  }

  /** Flushes at the next tick (the headers alone when nothing was written by then). */
  flushSoon(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    process.nextTick(this.#tick);
  }

  /** Writes what is held back, if anything and the response is still open; whether it wrote. */
  flush(): boolean {
    const text = this.take();
    const res = this.#res;
    if (text === '' || res.destroyed || res.writableEnded) return false;
    res.write(text);
    this.#sent = true;
    return true;
  }

  /** What is held back, no longer held (for the response's last write). */
  take(): string {
    const text = this.#pending;
    this.#pending = '';
    return text;
  }
}

function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/**
 * Where resumable streams are kept while they run and for a while after: the SSE messages of each stream, in order,
 * numbered from 1. A client that reconnects reads the messages after the last one it saw, then the live rest. The
 * in-memory store serves one process; the Redis store (redis-store.ts) serves several behind a load balancer.
 */
import type { SseMessage } from '@ai4ts/sse';
import { HttpError } from '../proxy/context.js';

/** What a stream store offers the gateway. */
export interface StreamStore {
  /** Opens a stream. */
  create(id: string): Promise<void>;
  /** Appends message number `seq` (1, 2, ... in order) of stream `id`. */
  append(id: string, seq: number, message: SseMessage): Promise<void>;
  /** Nothing more will be appended: readers end once they have every message. */
  end(id: string): Promise<void>;
  /**
   * The messages after number `after`, then each one as it is appended, until the end. Throws a
   * `streamGone` HttpError when the stream is unknown, expired or lost, or when the messages asked for were
   * dropped (over `maxEvents`). Aborting `signal` ends the read quietly.
   */
  read(id: string, after: number, signal: AbortSignal): AsyncIterable<SseMessage>;
  /** Whether the store can serve (for `/readyz`). */
  ready(): Promise<boolean>;
  /** Releases timers and connections. */
  close(): Promise<void>;
}

/** Limits of a store. */
export interface StreamStoreOptions {
  /** Milliseconds a stream is kept after its last message. Default 600000 (10 minutes). */
  ttlMs?: number;
  /** Messages kept per stream; older ones are dropped, and resuming before them is refused. Default 10000. */
  maxEvents?: number;
}

export const DEFAULT_STREAM_TTL_MS = 600_000;
export const DEFAULT_STREAM_MAX_EVENTS = 10_000;

/** The 404 for a stream the store does not have (never existed, expired, or lost with the store's data). */
export function streamGone(id: string, why = 'is unknown, expired or was lost'): HttpError {
  return new HttpError(404, {
    message: `The stream ${id} ${why}; send the request again`,
    type: 'invalid_request_error',
    param: null,
    code: 'stream_not_found',
  });
}

interface MemoryStream {
  messages: SseMessage[];
  /** The number of `messages[0]`. */
  first: number;
  ended: boolean;
  wake: Set<() => void>;
  timer: ReturnType<typeof setTimeout> | undefined;
}

/** Streams in this process's memory, bounded by `maxEvents` per stream and expired `ttlMs` after their last message. */
export class MemoryStreamStore implements StreamStore {
  readonly #streams = new Map<string, MemoryStream>();
  readonly #ttlMs: number;
  readonly #maxEvents: number;

  constructor(options: StreamStoreOptions = {}) {
    this.#ttlMs = options.ttlMs ?? DEFAULT_STREAM_TTL_MS;
    this.#maxEvents = options.maxEvents ?? DEFAULT_STREAM_MAX_EVENTS;
  }

  async create(id: string): Promise<void> {
    this.#streams.set(id, { messages: [], first: 1, ended: false, wake: new Set(), timer: undefined });
    this.#touch(id);
  }

  async append(id: string, seq: number, message: SseMessage): Promise<void> {
    const stream = this.#streams.get(id);
    if (!stream) return;
    stream.messages.push(message);
    if (stream.messages.length > this.#maxEvents) {
      stream.messages.shift();
      stream.first++;
    }
    if (stream.first + stream.messages.length - 1 !== seq) throw new RangeError(`Stream ${id}: message ${seq} out of order`);
    this.#touch(id);
    this.#wake(stream);
  }

  async end(id: string): Promise<void> {
    const stream = this.#streams.get(id);
    if (!stream) return;
    stream.ended = true;
    this.#wake(stream);
  }

  async *read(id: string, after: number, signal: AbortSignal): AsyncGenerator<SseMessage> {
    const stream = this.#streams.get(id);
    if (!stream) throw streamGone(id);
    let next = after + 1;
    for (;;) {
      if (next < stream.first) throw streamGone(id, `no longer holds message ${next}`);
      while (next < stream.first + stream.messages.length) {
        const message = stream.messages[next - stream.first];
        next++;
        if (message) yield message;
      }
      // Ended, or expired: a reader past the last message is done.
      if (stream.ended || signal.aborted) return;
      await new Promise<void>((resolve) => {
        const done = () => {
          stream.wake.delete(done);
          signal.removeEventListener('abort', done);
          resolve();
        };
        stream.wake.add(done);
        signal.addEventListener('abort', done, { once: true });
      });
    }
  }

  async ready(): Promise<boolean> {
    return true;
  }

  async close(): Promise<void> {
    for (const stream of this.#streams.values()) {
      clearTimeout(stream.timer);
      stream.ended = true;
      this.#wake(stream);
    }
    this.#streams.clear();
  }

  #touch(id: string): void {
    const stream = this.#streams.get(id);
    if (!stream) return;
    clearTimeout(stream.timer);
    stream.timer = setTimeout(() => {
      stream.ended = true;
      this.#wake(stream);
      this.#streams.delete(id);
    }, this.#ttlMs);
    stream.timer.unref?.();
  }

  #wake(stream: MemoryStream): void {
    for (const wake of [...stream.wake]) wake();
  }
}

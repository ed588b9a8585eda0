/**
 * The in-memory stream store: one process's resumable streams, bounded per stream, in all (bytes and streams), and
 * expired after their last message.
 */
import type { SseMessage } from '@ai4ts/sse';
import type { HttpError } from '../http/errors.js';
import {
  DEFAULT_STREAM_MAX_EVENTS,
  DEFAULT_STREAM_TTL_MS,
  eventPastEnd,
  type StreamInfo,
  type StreamStore,
  type StreamStoreOptions,
  storeFailed,
  streamGone,
} from './store.js';

/** Options of a {@link MemoryStreamStore}. */
export interface MemoryStreamStoreOptions extends StreamStoreOptions {
  /** Characters of message text kept in all streams together. Default 67108864 (64 MiB). */
  maxBytes?: number;
  /** Streams kept at once, live and finished. Default 1000. */
  maxStreams?: number;
}

export const DEFAULT_STORE_MAX_BYTES = 64 * 1024 * 1024;
export const DEFAULT_STORE_MAX_STREAMS = 1000;

interface MemoryStream {
  info: StreamInfo;
  messages: SseMessage[];
  /** The number of `messages[0]`. */
  first: number;
  bytes: number;
  ended: boolean;
  failure: HttpError | undefined;
  wake: Set<() => void>;
  timer: ReturnType<typeof setTimeout> | undefined;
}

function sizeOf(message: SseMessage): number {
  return message.data.length + (message.event?.length ?? 0) + (message.id?.length ?? 0);
}

/**
 * Streams in this process's memory, bounded by `maxEvents` per stream, `maxBytes` and `maxStreams` in all, and
 * expired `ttlMs` after their last message. Past a bound the oldest finished streams go first; when only live ones
 * are left, a new stream (or a live one's next message) is refused with a 503.
 */
export class MemoryStreamStore implements StreamStore {
  /** In creation order: the first finished one is the oldest. */
  readonly #streams = new Map<string, MemoryStream>();
  readonly #ttlMs: number;
  readonly #maxEvents: number;
  readonly #maxBytes: number;
  readonly #maxStreams: number;
  #bytes = 0;

  constructor(options: MemoryStreamStoreOptions = {}) {
    this.#ttlMs = options.ttlMs ?? DEFAULT_STREAM_TTL_MS;
    this.#maxEvents = options.maxEvents ?? DEFAULT_STREAM_MAX_EVENTS;
    this.#maxBytes = options.maxBytes ?? DEFAULT_STORE_MAX_BYTES;
    this.#maxStreams = options.maxStreams ?? DEFAULT_STORE_MAX_STREAMS;
  }

  /** Characters of message text held now. */
  get bytes(): number {
    return this.#bytes;
  }

  /** Streams held now. */
  get size(): number {
    return this.#streams.size;
  }

  async create(id: string, info: StreamInfo): Promise<void> {
    if (!this.#fits(1, 0)) throw storeFailed(`holds its maximum of ${this.#maxStreams} streams`);
    this.#streams.set(id, {
      info,
      messages: [],
      first: 1,
      bytes: 0,
      ended: false,
      failure: undefined,
      wake: new Set(),
      timer: undefined,
    });
    this.#touch(id);
  }

  async append(id: string, seq: number, message: SseMessage): Promise<void> {
    const stream = this.#streams.get(id);
    if (!stream) return;
    const size = sizeOf(message);
    if (!this.#fits(0, size)) throw storeFailed(`holds its maximum of ${this.#maxBytes} bytes`);
    stream.messages.push(message);
    this.#grow(stream, size);
    if (stream.messages.length > this.#maxEvents) {
      const dropped = stream.messages.shift();
      if (dropped) this.#grow(stream, -sizeOf(dropped));
      stream.first++;
    }
    if (stream.first + stream.messages.length - 1 !== seq) throw new RangeError(`Stream ${id}: message ${seq} out of order`);
    this.#touch(id);
    this.#wake(stream);
  }

  async end(id: string, failure?: HttpError): Promise<void> {
    const stream = this.#streams.get(id);
    if (!stream) return;
    stream.ended = true;
    stream.failure = failure;
    this.#wake(stream);
  }

  async info(id: string): Promise<StreamInfo | undefined> {
    return this.#streams.get(id)?.info;
  }

  async *read(id: string, after: number, signal: AbortSignal): AsyncGenerator<SseMessage> {
    const stream = this.#streams.get(id);
    if (!stream) throw streamGone(id);
    const last = stream.first + stream.messages.length - 1;
    if (stream.ended && after > last) throw eventPastEnd(id, last);
    let next = after + 1;
    for (;;) {
      if (next < stream.first) throw streamGone(id, `no longer holds message ${next}`);
      while (next < stream.first + stream.messages.length) {
        const message = stream.messages[next - stream.first];
        next++;
        if (message) yield message;
      }
      if (signal.aborted) return;
      if (stream.failure) throw stream.failure;
      // Ended, or expired: a reader past the last message is done.
      if (stream.ended) return;
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
    this.#bytes = 0;
  }

  /** Whether `streams` more streams and `bytes` more bytes fit, once finished streams are evicted, oldest first. */
  #fits(streams: number, bytes: number): boolean {
    const over = () => this.#streams.size + streams > this.#maxStreams || this.#bytes + bytes > this.#maxBytes;
    for (const [id, stream] of this.#streams) {
      if (!over()) break;
      if (stream.ended) this.#drop(id, stream);
    }
    return !over();
  }

  #grow(stream: MemoryStream, bytes: number): void {
    stream.bytes += bytes;
    this.#bytes += bytes;
  }

  #drop(id: string, stream: MemoryStream): void {
    clearTimeout(stream.timer);
    stream.ended = true;
    this.#wake(stream);
    this.#bytes -= stream.bytes;
    this.#streams.delete(id);
  }

  #touch(id: string): void {
    const stream = this.#streams.get(id);
    if (!stream) return;
    clearTimeout(stream.timer);
    stream.timer = setTimeout(() => this.#drop(id, stream), this.#ttlMs);
    stream.timer.unref?.();
  }

  #wake(stream: MemoryStream): void {
    for (const wake of [...stream.wake]) wake();
  }
}

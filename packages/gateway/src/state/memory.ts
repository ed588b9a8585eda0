/** The in-memory stream store: one process's resumable streams, bounded per stream and expired after their last message. */
import type { SseMessage } from '@ai4ts/sse';
import {
  DEFAULT_STREAM_MAX_EVENTS,
  DEFAULT_STREAM_TTL_MS,
  streamGone,
  type StreamStore,
  type StreamStoreOptions,
} from './store.js';

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

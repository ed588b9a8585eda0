/**
 * A response body read as SSE events, with the stream execution limits: a wait for the first event, a wait
 * between events, and the caller's abort. Every way out (end, break, throw, abort, timeout) cancels the body,
 * which releases the connection.
 */
import { parseSse, type SseEvent, type SseEventStream } from '@ai4ts/sse';
import { Ai4tsError, TimeoutError } from '../errors.js';
import { abortError, redactEvent, toAi4tsError } from '../internal/fail.js';
import { eachEvent } from '../source.js';

/** SSE events of one response; iterate it (or its `batches()`) once. */
export interface SseStream extends AsyncIterable<SseEvent>, Pick<SseEventStream, 'batches'> {
  /** The HTTP response (status and headers); its body belongs to the iterator. */
  readonly response: Response;
  /** Read after the iteration ended: true when the body stopped inside an event block, which was discarded. */
  readonly incomplete: boolean;
}

/** Limits applied while the body is read. */
export interface StreamLimits {
  signal?: AbortSignal | undefined;
  /** ms from the response headers until the first event. */
  firstTokenTimeout?: number | undefined;
  /** ms between two events. */
  idleTimeout?: number | undefined;
  /** Redacted from every event's data before anyone reads it (the API key a server may echo). */
  secrets?: readonly (string | undefined)[] | undefined;
}

/** Wraps a response whose body is SSE. The body is not touched until iteration begins. */
export function readSseStream(response: Response, limits: StreamLimits = {}): SseStream {
  let parsed: SseEventStream | undefined;
  return {
    response,
    get incomplete() {
      return parsed?.incomplete ?? false;
    },
    batches() {
      if (parsed) throw new Ai4tsError('This stream was already iterated: a response body can be read once');
      const body = response.body ?? new ReadableStream<Uint8Array>({ start: (c) => c.close() });
      // We hold the reader ourselves so a timeout or an abort can cancel the body even while a read is pending.
      const reader = body.getReader();
      parsed = parseSse(chunksOf(reader));
      return batches(parsed, reader, limits);
    },
    [Symbol.asyncIterator]() {
      return eachEvent(this.batches());
    },
  };
}

/** The reader as an async iterable whose `return()` (the parser letting go early) cancels the body. */
function chunksOf(reader: ReadableStreamDefaultReader<Uint8Array>): AsyncIterable<Uint8Array> {
  return {
    [Symbol.asyncIterator]: () => ({
      next: () => reader.read() as Promise<IteratorResult<Uint8Array>>,
      return: async () => {
        reader.cancel().catch(() => undefined);
        return { done: true, value: undefined };
      },
    }),
  };
}

/**
 * The events a chunk at a time, with the limits: the timers are armed once per chunk that completes events, not
 * per event (the idle limit is the longest wait for the next event either way).
 */
async function* batches(
  parsed: SseEventStream,
  reader: ReadableStreamDefaultReader<Uint8Array>,
  limits: StreamLimits,
): AsyncGenerator<SseEvent[], void, undefined> {
  const { signal, firstTokenTimeout, idleTimeout, secrets } = limits;
  // Not awaited: some bodies (mocked ones) never settle a cancel, and nothing may hang on it.
  const cancel = () => void reader.cancel().catch(() => undefined);
  const source = parsed.batches();
  const watch = new Watch(signal, cancel);
  let phase: 'first_token' | 'idle' = 'first_token';
  let timeout = firstTokenTimeout;
  try {
    for (;;) {
      // Fast path: with no limit and no signal there is nothing to race.
      const next =
        timeout === undefined && !signal ? await source.next() : await watch.wait(source.next(), phase, timeout);
      if (next.done) return;
      yield secrets ? next.value.map((event) => redactEvent(event, secrets)) : next.value;
      phase = 'idle';
      timeout = idleTimeout;
    }
  } catch (error) {
    throw toAi4tsError(error, { signal });
  } finally {
    watch.dispose();
    cancel();
    // The parser may still be inside a read we abandoned; let it finish on its own, quietly.
    source.return?.().catch(() => undefined);
  }
}

/** Races each read against the current timeout and the caller's signal, without a listener per read. */
class Watch {
  #reject: ((error: Error) => void) | undefined;
  readonly #signal: AbortSignal | undefined;
  readonly #cancel: () => void;
  readonly #onAbort = () => {
    this.#cancel();
    this.#reject?.(abortError(this.#signal as AbortSignal));
  };

  constructor(signal: AbortSignal | undefined, cancel: () => void) {
    this.#signal = signal;
    this.#cancel = cancel;
    signal?.addEventListener('abort', this.#onAbort, { once: true });
  }

  wait<T>(read: Promise<T>, phase: 'first_token' | 'idle', timeout: number | undefined): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.#signal?.aborted) return reject(abortError(this.#signal));
      this.#reject = reject;
      const timer =
        timeout === undefined
          ? undefined
          : setTimeout(() => {
              this.#cancel();
              reject(new TimeoutError(phase, timeout));
            }, timeout);
      read.then(
        (value) => {
          clearTimeout(timer);
          resolve(value);
        },
        (error: unknown) => {
          clearTimeout(timer);
          reject(error);
        },
      );
    });
  }

  dispose(): void {
    this.#reject = undefined;
    this.#signal?.removeEventListener('abort', this.#onAbort);
  }
}

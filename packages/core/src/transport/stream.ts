/**
 * A response body read as SSE events, with the stream execution limits: a wait for the first event, a wait
 * between events, and the caller's abort. Every way out (end, break, throw, abort, timeout) cancels the body,
 * which releases the connection.
 */
import { connectSse, parseSse, SseError, type SseEvent, type SseEventStream } from '@ai4ts/sse';
import { Ai4tsError, ConnectionError, TimeoutError } from '../errors.js';
import { abortError, redactEvent, toAi4tsError } from '../internal/fail.js';
import type { StreamFraming } from './providers.js';
import { follow } from '../internal/signal.js';
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

/**
 * How a stream the server can resume is read again after its connection is cut (a network error mid-body; a clean
 * end is the stream's end): `request` (a GET with the call's headers) sent with `Last-Event-ID`, through
 * @ai4ts/sse's `connectSse`.
 */
export interface StreamResume {
  request: Request;
  fetch: (input: string | URL | Request, init?: RequestInit) => Promise<Response>;
  /** Reconnections in a row that may bring no event before the cut is final. */
  maxAttempts: number;
  /** The wait before a reconnection, then the cap of its backoff, in ms. */
  delay: number;
  maxDelay: number;
  /** Called before each reconnection (the number of reconnections so far, this one included). */
  onResume: (resumes: number) => void;
}

/**
 * Wraps a response whose body is SSE. The body is not touched until iteration begins. With `resume`, a cut body
 * is read on from where it broke: each event is yielded once, whatever the number of connections.
 */
export function readSseStream(response: Response, limits: StreamLimits = {}, resume?: StreamResume): SseStream {
  let parsed: SseEventStream | undefined;
  let started = false;
  return {
    response,
    get incomplete() {
      return parsed?.incomplete ?? false;
    },
    batches() {
      if (started) throw new Ai4tsError('This stream was already iterated: a response body can be read once');
      started = true;
      if (resume) return resuming(response, resume, limits);
      const body = response.body ?? new ReadableStream<Uint8Array>({ start: (c) => c.close() });
      // We hold the reader ourselves so a timeout or an abort can cancel the body even while a read is pending.
      const reader = body.getReader();
      parsed = parseSse(chunksOf(reader));
      const cancel = () => void reader.cancel().catch(() => undefined);
      return batches(parsed.batches(), cancel, limits);
    },
    [Symbol.asyncIterator]() {
      return eachEvent(this.batches());
    },
  };
}

/**
 * Wraps a response whose body is not SSE (Bedrock's AWS event-stream frames), read into SSE events by the preset's
 * {@link StreamFraming}. The same limits, cancellation and redaction as {@link readSseStream}; never resumed.
 */
export function readFramedStream(response: Response, framing: StreamFraming, limits: StreamLimits = {}): SseStream {
  let started = false;
  return {
    response,
    incomplete: false,
    batches() {
      if (started) throw new Ai4tsError('This stream was already iterated: a response body can be read once');
      started = true;
      const body = response.body ?? new ReadableStream<Uint8Array>({ start: (c) => c.close() });
      const reader = body.getReader();
      const cancel = () => void reader.cancel().catch(() => undefined);
      const secrets = (limits.secrets ?? []).filter((secret): secret is string => secret !== undefined);
      return batches(framing.decode(chunksOf(reader), secrets)[Symbol.asyncIterator](), cancel, limits);
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
 * The events of `response` and of the connections that resume it, through `connectSse`: its first fetch is the
 * response already open, each later one a reconnection. A reconnection that fails for good is a ConnectionError.
 */
function resuming(
  response: Response,
  resume: StreamResume,
  limits: StreamLimits,
): AsyncGenerator<SseEvent[], void, undefined> {
  const stop = new AbortController();
  const release = follow(limits.signal, stop);
  const signal = stop.signal;
  let resumes = -1;
  const events = connectSse(resume.request, {
    signal,
    retry: { delay: resume.delay, maxDelay: resume.maxDelay, maxAttempts: resume.maxAttempts, reconnectOnClose: false },
    fetch: (input, init) => {
      if (++resumes === 0) return Promise.resolve(response);
      resume.onResume(resumes);
      return resume.fetch(input, init);
    },
  });
  // batches() calls this however the stream ends: it stops the reconnections and lets go of the caller's signal.
  const done = () => {
    release();
    stop.abort();
  };
  return batches(resumed(events), done, limits);
}

/** One event per batch; connectSse's final failure as the ConnectionError it is. */
async function* resumed(events: AsyncIterable<SseEvent>): AsyncGenerator<SseEvent[], void, undefined> {
  try {
    for await (const event of events) yield [event];
  } catch (error) {
    if (error instanceof SseError && (error.code === 'network_error' || error.code === 'http_error'))
      throw new ConnectionError(`The stream was cut and could not be resumed: ${error.message}`, { cause: error });
    throw error;
  }
}

/**
 * The events a chunk at a time, with the limits: the timers are armed once per chunk that completes events, not
 * per event (the idle limit is the longest wait for the next event either way). `cancel` releases the source.
 */
async function* batches(
  source: AsyncIterator<SseEvent[], void>,
  // Not awaited by its callers: some bodies (mocked ones) never settle a cancel, and nothing may hang on it.
  cancel: () => void,
  limits: StreamLimits,
): AsyncGenerator<SseEvent[], void, undefined> {
  const { signal, firstTokenTimeout, idleTimeout, secrets } = limits;
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
      if (this.#signal?.aborted) {
        // The read is abandoned, but it may still fail: Node 24's fetch errors the body with the abort's reason,
        // which would otherwise be an unhandled rejection.
        read.catch(() => undefined);
        return reject(abortError(this.#signal));
      }
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

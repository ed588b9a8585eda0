/**
 * What one client may cost the gateway: a request body of at most {@link MAX_BODY_BYTES}, and a share of the cap on
 * concurrent streams. Each streaming answer holds an upstream request, a socket and buffers, so past the cap a stream
 * request is answered 503 with Retry-After before the upstream is contacted.
 */
import { HttpError, invalid } from './errors.js';

/** Largest request body accepted. */
export const MAX_BODY_BYTES = 4 * 1024 * 1024;

/** The 413 for a body over {@link MAX_BODY_BYTES}. */
export function tooLarge(): HttpError {
  return new HttpError(413, invalid(`The request body exceeds ${MAX_BODY_BYTES} bytes`, null, 'request_too_large'));
}

/** Concurrent streams allowed by default. */
export const DEFAULT_MAX_CONCURRENT_STREAMS = 256;

/** Seconds a refused client is told to wait. */
const RETRY_AFTER_SECONDS = 1;

/** The streams in flight, counted against the cap. */
export class StreamSlots {
  readonly #max: number;
  #open = 0;

  constructor(max: number = DEFAULT_MAX_CONCURRENT_STREAMS) {
    if (!(max === Number.POSITIVE_INFINITY || (Number.isInteger(max) && max > 0)))
      throw new RangeError('maxConcurrentStreams must be a positive integer or Infinity');
    this.#max = max;
  }

  /** Streams in flight now. */
  get open(): number {
    return this.#open;
  }

  /**
   * Takes a slot, or throws the 503. The slot is given back once, by `release()` or when `signal` aborts (the client
   * left), whichever comes first.
   */
  take(signal: AbortSignal): StreamSlot {
    if (this.#open >= this.#max)
      throw new HttpError(
        503,
        {
          message: `The proxy is serving its maximum of ${this.#max} concurrent streams; retry later`,
          type: 'server_error',
          param: null,
          code: 'too_many_streams',
        },
        { 'retry-after': String(RETRY_AFTER_SECONDS) },
      );
    this.#open++;
    return new StreamSlot(() => this.#open--, signal);
  }
}

/** One stream's slot; see {@link StreamSlots.take}. */
export class StreamSlot {
  #free: (() => void) | undefined;
  readonly #signal: AbortSignal;
  readonly #onAbort = () => this.release();

  constructor(free: () => void, signal: AbortSignal) {
    this.#free = free;
    this.#signal = signal;
    if (signal.aborted) this.release();
    else signal.addEventListener('abort', this.#onAbort, { once: true });
  }

  /** Gives the slot back; later calls do nothing. */
  release(): void {
    const free = this.#free;
    this.#free = undefined;
    this.#signal.removeEventListener('abort', this.#onAbort);
    free?.();
  }
}

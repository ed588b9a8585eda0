/**
 * Upstream timeouts: how long the gateway waits for the upstream's response headers, for its first event, and between
 * two events. A wait that runs out cancels the upstream request and fails the answer with a TimeoutError naming
 * its phase, so a stalled upstream never holds a client (or a socket) until fetch's own 300 s defaults.
 */
import { TimeoutError, type TimeoutPhase } from '@ai4ts/core';
import { follow } from '@ai4ts/core/internal';

/** Milliseconds the gateway waits on its upstream; 0 waits forever. The shape of the SDK's stream timeouts. */
export interface UpstreamTimeouts {
  /** From sending the request until the upstream's response headers (connecting and retries included). Default 30000. */
  headers?: number;
  /** From the response headers until the upstream's first event. Default 120000. */
  firstEvent?: number;
  /** Between two events of the upstream (SSE comments do not count). Default 120000. */
  idle?: number;
  /** @deprecated Use `headers`; accepted for one release. */
  headersMs?: number;
  /** @deprecated Use `firstEvent`; accepted for one release. */
  firstEventMs?: number;
  /** @deprecated Use `idle`; accepted for one release. */
  idleMs?: number;
}

/** The timeouts with every default filled in. */
export type ResolvedUpstreamTimeouts = Readonly<Required<Pick<UpstreamTimeouts, 'headers' | 'firstEvent' | 'idle'>>>;

/** The defaults: AI4J's 30 s for headers; longer for events, since a daemon may think or run a tool silently. */
export const DEFAULT_UPSTREAM_TIMEOUTS: ResolvedUpstreamTimeouts = {
  headers: 30_000,
  firstEvent: 120_000,
  idle: 120_000,
};

/** Each timeout's deprecated name, read when the new one is not given. */
const DEPRECATED_NAMES = { headers: 'headersMs', firstEvent: 'firstEventMs', idle: 'idleMs' } as const;

/** The timeouts with defaults filled in; a negative or non-finite value is refused here, not at the first request. */
export function resolveUpstreamTimeouts(timeouts: UpstreamTimeouts = {}): ResolvedUpstreamTimeouts {
  const out = { ...DEFAULT_UPSTREAM_TIMEOUTS };
  for (const key of ['headers', 'firstEvent', 'idle'] as const) {
    const given = timeouts[key] === undefined ? DEPRECATED_NAMES[key] : key;
    const value = timeouts[given];
    if (value === undefined) continue;
    if (!Number.isFinite(value) || value < 0) throw new RangeError(`upstreamTimeouts.${given} must be 0 or more`);
    out[key] = value;
  }
  return out;
}

/**
 * The upstream side of one request: its own signal, which follows the client's and which a timeout aborts too (that
 * is what cancels the daemon's request and body).
 */
export class UpstreamWatch {
  readonly #controller = new AbortController();
  readonly #timeouts: ResolvedUpstreamTimeouts;

  constructor(client: AbortSignal, timeouts: ResolvedUpstreamTimeouts) {
    this.#timeouts = timeouts;
    follow(client, this.#controller);
  }

  /** Aborts when the client left or a wait ran out; its reason is then the TimeoutError. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** The TimeoutError that cancelled the upstream, if one did. */
  get timedOut(): TimeoutError | undefined {
    const { reason } = this.#controller.signal;
    return reason instanceof TimeoutError ? reason : undefined;
  }

  /** `work` (the upstream fetch) within the headers timeout. */
  headers<T>(work: Promise<T>): Promise<T> {
    return this.#within(work, 'headers', this.#timeouts.headers);
  }

  /**
   * The events within the first-event and idle timeouts. An iterator object rather than a generator: `return()`
   * reaches the source even before the first `next()`.
   *
   * One timer serves the whole stream, not one per event (a timer set and cleared per event was a few percent of the
   * proxy's CPU time): each wait moves the deadline forward, and a timer that fires before it sleeps again for what
   * is left. A wait only counts while the proxy waits on the daemon, never while its client is slow to read. A wait
   * that runs out aborts the upstream's signal, which stops the source's read (as every reader's signal does); its
   * failure is then the TimeoutError. So an event costs no promise of its own beyond the source's.
   */
  events<T>(source: AsyncIterable<T>): AsyncIterableIterator<T> {
    const inner = source[Symbol.asyncIterator]();
    let phase: TimeoutPhase = 'first_token';
    let ms = this.#timeouts.firstEvent;
    let deadline = 0;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let timerAt = 0;
    /** A wait on the source is in progress. */
    let waiting = false;
    const arm = (delay: number) => {
      timerAt = performance.now() + delay;
      timer = setTimeout(check, delay);
    };
    const check = () => {
      timer = undefined;
      if (!waiting) return;
      const left = deadline - performance.now();
      if (left > 0) return arm(left);
      this.#controller.abort(new TimeoutError(phase, ms));
    };
    const stop = () => {
      clearTimeout(timer);
      timer = undefined;
      waiting = false;
    };
    /** After an event, the waits are idle ones; after the end, no timer is left to hold the process. */
    const settled = (next: IteratorResult<T>): IteratorResult<T> => {
      waiting = false;
      if (next.done) stop();
      else if (phase === 'first_token') {
        phase = 'idle';
        ms = this.#timeouts.idle;
      }
      return next;
    };
    const failed = (error: unknown): never => {
      stop();
      throw this.timedOut ?? error;
    };
    const iterator: AsyncIterableIterator<T> = {
      [Symbol.asyncIterator]: () => iterator,
      next: () => {
        if (ms > 0) {
          deadline = performance.now() + ms;
          // A shorter wait than the one the timer was set for (the idle timeout after the first event's) sets it anew.
          if (timer !== undefined && deadline < timerAt) {
            clearTimeout(timer);
            timer = undefined;
          }
          if (timer === undefined) arm(ms);
          waiting = true;
        }
        return inner.next().then(settled, failed);
      },
      return: async () => {
        stop();
        await inner.return?.();
        return { done: true, value: undefined };
      },
    };
    return iterator;
  }

  #within<T>(work: Promise<T>, phase: TimeoutPhase, ms: number): Promise<T> {
    if (ms <= 0) return work;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        const error = new TimeoutError(phase, ms);
        this.#controller.abort(error);
        reject(error);
      }, ms);
      work.then(
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
}

/**
 * Upstream timeouts: how long the proxy waits for the daemon's response headers, for its first event, and between
 * two events. A wait that runs out cancels the upstream request and fails the answer with a TimeoutError naming
 * its phase, so a stalled daemon never holds a client (or a socket) until fetch's own 300 s defaults.
 */
import { TimeoutError, type TimeoutPhase } from '@ai4ts/core';

/** Milliseconds the proxy waits on the daemon; 0 waits forever. */
export interface UpstreamTimeouts {
  /** From sending the request until the daemon's response headers (connecting included). Default 30000. */
  headersMs?: number;
  /** From the response headers until the daemon's first event. Default 120000. */
  firstEventMs?: number;
  /** Between two events of the daemon (SSE comments do not count). Default 120000. */
  idleMs?: number;
}

/** The defaults: AI4J's 30 s for headers; longer for events, since a daemon may think or run a tool silently. */
export const DEFAULT_UPSTREAM_TIMEOUTS: Readonly<Required<UpstreamTimeouts>> = {
  headersMs: 30_000,
  firstEventMs: 120_000,
  idleMs: 120_000,
};

/** The timeouts with defaults filled in; a negative or non-finite value is refused here, not at the first request. */
export function resolveUpstreamTimeouts(timeouts: UpstreamTimeouts = {}): Required<UpstreamTimeouts> {
  const out = { ...DEFAULT_UPSTREAM_TIMEOUTS };
  for (const key of ['headersMs', 'firstEventMs', 'idleMs'] as const) {
    const value = timeouts[key];
    if (value === undefined) continue;
    if (!Number.isFinite(value) || value < 0) throw new RangeError(`upstreamTimeouts.${key} must be 0 or more`);
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
  readonly #timeouts: Required<UpstreamTimeouts>;

  constructor(client: AbortSignal, timeouts: Required<UpstreamTimeouts>) {
    this.#timeouts = timeouts;
    if (client.aborted) this.#controller.abort(client.reason);
    else client.addEventListener('abort', () => this.#controller.abort(client.reason), { once: true });
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
    return this.#within(work, 'headers', this.#timeouts.headersMs);
  }

  /**
   * The events within the first-event and idle timeouts. An iterator object rather than a generator: `return()`
   * reaches the source even before the first `next()`.
   */
  events<T>(source: AsyncIterable<T>): AsyncIterableIterator<T> {
    const inner = source[Symbol.asyncIterator]();
    let first = true;
    const iterator: AsyncIterableIterator<T> = {
      [Symbol.asyncIterator]: () => iterator,
      next: async () => {
        const next = first
          ? await this.#within(inner.next(), 'first_token', this.#timeouts.firstEventMs)
          : await this.#within(inner.next(), 'idle', this.#timeouts.idleMs);
        first = false;
        return next;
      },
      return: async () => {
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

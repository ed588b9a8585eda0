/** When to retry a request and how long to wait first. */
import { retryAfterMs } from '../errors.js';
import { abortError } from '../internal/fail.js';

/** Exponential backoff bounds; the {@link TransportOptions.backoff} option overrides them (tests use a few ms). */
export interface Backoff {
  /** Wait before the first retry, in ms (default 500). */
  initialMs?: number;
  /** Longest wait between attempts, in ms (default 8000). */
  maxMs?: number;
}

/** The backoff when none is given: 500 ms doubling up to 8 s. */
export const DEFAULT_BACKOFF: Required<Backoff> = { initialMs: 500, maxMs: 8000 };

/** A server asking for a longer wait than this is not retried: its error is thrown at once (see `retryAfterMs`). */
export const MAX_RETRY_AFTER_MS = 60_000;

/** 408, 409, 429 and every 5xx are worth another try; other statuses would fail the same way again. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/**
 * How long to wait before retry number `attempt + 1`: the server's `retry-after-ms` / `Retry-After` when it sent
 * one, else exponential backoff with jitter. Undefined when the server asks for more than {@link MAX_RETRY_AFTER_MS}.
 */
export function retryDelay(attempt: number, backoff: Backoff = {}, headers?: Headers): number | undefined {
  const asked = headers && retryAfterMs(headers);
  if (asked !== undefined) return asked <= MAX_RETRY_AFTER_MS ? asked : undefined;
  const { initialMs, maxMs } = { ...DEFAULT_BACKOFF, ...backoff };
  const delay = Math.min(initialMs * 2 ** attempt, maxMs);
  // Up to 25% less, so clients that failed together do not retry together.
  return delay * (1 - Math.random() * 0.25);
}

/** Waits `ms`, or rejects with {@link AbortError} as soon as `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortError(signal));
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortError(signal as AbortSignal));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}


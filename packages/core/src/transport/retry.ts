/**
 * The one retry policy of ai4ts: whether a failure is worth another attempt, and how long to wait first. The
 * Transport follows it before the response headers, a stream handle before the first event, each with one budget.
 *
 * The rule:
 * - at most `maxRetries` retries (default 2), so at most `maxRetries + 1` attempts;
 * - an HTTP answer is retried when `isRetryableStatus` (@ai4ts/sse) accepts its status: 408, 409, 429, any 5xx.
 *   That rule lives in @ai4ts/sse, below core, so `connectSse` reconnects on exactly the same statuses;
 * - any other failure is retried when {@link isRetryableBeforeFirstEvent} accepts it: nothing had arrived, and it
 *   may not happen again (a dropped connection, a first-event timeout, a provider's "overloaded" error frame);
 * - the wait is the server's `retry-after-ms` or `Retry-After` (seconds or an HTTP date) when it sent one, and a
 *   server asking for more than {@link MAX_RETRY_AFTER_MS} is not retried; otherwise exponential backoff from
 *   `backoff.initialMs` doubling up to `backoff.maxMs`, up to 25% less at random.
 */
import { isRetryableStatus } from '@ai4ts/sse';
import { type Ai4tsError, ApiError, ConnectionError, retryAfterMs, StreamIncompleteError, TimeoutError } from '../errors.js';
import { abortError } from '../internal/fail.js';

/** Exponential backoff bounds; the {@link TransportOptions.backoff} option overrides them (tests use a few ms). */
export interface Backoff {
  /** Wait before the first retry, in ms (default 500). */
  initialMs?: number;
  /** Longest wait between attempts, in ms (default 8000). */
  maxMs?: number;
}

/** A retry is about to happen: the failure it follows, its number (1 for the first retry), and the wait before it. */
export type OnRetry = (error: Ai4tsError, attempt: number, delayMs: number) => void;

/** How a {@link RetryPolicy} is set: the `maxRetries`, `backoff` and `onRetry` options of a Transport or a call. */
export interface RetryPolicyOptions {
  /** Retries after the first attempt (default 2); `0` never retries. */
  maxRetries?: number;
  /** Backoff when the server gives no Retry-After (default 500 ms doubling up to 8 s). */
  backoff?: Backoff;
  /** Called before each retry. */
  onRetry?: OnRetry;
}

/** Retries when none is given: 2, so at most 3 attempts. */
export const DEFAULT_MAX_RETRIES = 2;

/** The backoff when none is given: 500 ms doubling up to 8 s. */
export const DEFAULT_BACKOFF: Readonly<Required<Backoff>> = { initialMs: 500, maxMs: 8000 };

/** A server asking for a longer wait than this is not retried: its error is thrown at once (see `retryAfterMs`). */
export const MAX_RETRY_AFTER_MS = 60_000;

/** The share of a backoff that may be taken off at random, so clients that failed together do not retry together. */
const JITTER = 0.25;

/** The retry policy of one call (see the module comment); `Transport.streamRetry` gives a call's. */
export class RetryPolicy {
  /** Retries after the first attempt; `0` never retries. */
  readonly maxRetries: number;
  readonly backoff: Readonly<Required<Backoff>>;
  /** Told before each retry; undefined when nobody listens. */
  readonly onRetry: OnRetry | undefined;

  constructor(options: RetryPolicyOptions = {}) {
    this.maxRetries = options.maxRetries ?? DEFAULT_MAX_RETRIES;
    this.backoff = { ...DEFAULT_BACKOFF, ...options.backoff };
    this.onRetry = options.onRetry;
  }

  /**
   * The wait in ms before retry number `attempt + 1` (`attempt` retries were made so far) after `failure`, or
   * undefined when it is not retried: the budget is spent, the failure would happen again, or the server asks for
   * more than {@link MAX_RETRY_AFTER_MS}. An HTTP answer is judged as an {@link ApiError} with its status and
   * headers (its body need not be read).
   */
  retryDelay(failure: Ai4tsError, attempt: number): number | undefined {
    if (attempt >= this.maxRetries || !isRetryable(failure)) return undefined;
    const asked = failure instanceof ApiError && failure.headers ? retryAfterMs(failure.headers) : undefined;
    if (asked !== undefined) return asked <= MAX_RETRY_AFTER_MS ? asked : undefined;
    const { initialMs, maxMs } = this.backoff;
    return Math.min(initialMs * 2 ** attempt, maxMs) * (1 - Math.random() * JITTER);
  }
}

/** An HTTP answer by its status; anything else by {@link isRetryableBeforeFirstEvent}. Never once output arrived. */
function isRetryable(failure: Ai4tsError): boolean {
  if (failure.partial !== undefined) return false;
  if (failure instanceof ApiError && failure.status !== undefined) return isRetryableStatus(failure.status);
  return isRetryableBeforeFirstEvent(failure);
}

/**
 * In-stream error codes (or types) worth sending the request again for: the provider was busy or failed, as
 * Anthropic's `overloaded_error` / `api_error` / `rate_limit_error`, OpenAI's `server_error` /
 * `rate_limit_exceeded`, Google's `UNAVAILABLE` / `INTERNAL` / `RESOURCE_EXHAUSTED` / `DEADLINE_EXCEEDED` (Gemini),
 * Amazon Bedrock's in-stream exceptions `throttlingException` / `serviceUnavailableException` /
 * `internalServerException`, and HTTP-like numeric codes that `isRetryableStatus` accepts (vLLM's `"503"`).
 */
export const RETRYABLE_STREAM_ERROR_CODES: ReadonlySet<string> = new Set([
  'throttlingException',
  'serviceUnavailableException',
  'internalServerException',
  'overloaded_error',
  'api_error',
  'rate_limit_error',
  'server_error',
  'rate_limit_exceeded',
  'internal_server_error',
  'service_unavailable',
  'UNAVAILABLE',
  'INTERNAL',
  'RESOURCE_EXHAUSTED',
  'DEADLINE_EXCEEDED',
]);

/**
 * True for a stream failure that happened before anything arrived (no `partial`) and may not happen again: a
 * first-token timeout, a connection dropped or closed before the first event, or an in-stream error with a code in
 * {@link RETRYABLE_STREAM_ERROR_CODES}. Never after an event was received: what arrived would be shown twice.
 */
export function isRetryableBeforeFirstEvent(error: Ai4tsError): boolean {
  if (error.partial !== undefined) return false;
  if (error instanceof TimeoutError) return error.phase === 'first_token';
  if (error instanceof ConnectionError || error instanceof StreamIncompleteError) return true;
  // An ApiError with a status is an HTTP answer, which the Transport already retried.
  if (!(error instanceof ApiError) || error.status !== undefined) return false;
  return [error.code, error.type].some(
    (code) => code !== undefined && (RETRYABLE_STREAM_ERROR_CODES.has(code) || isRetryableStatus(Number(code))),
  );
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

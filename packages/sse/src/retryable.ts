/**
 * Which HTTP statuses are worth another try: 408, 409, 429 and every 5xx. Any other status would fail the same way
 * again.
 *
 * The one list for ai4ts: `connectSse` reconnects on these, and @ai4ts/core's `RetryPolicy` retries a request or a
 * stream on these. It lives here, not in core, because core depends on this package and this package depends on
 * nothing: the rule must sit in the lowest package that applies it.
 */

/** True for 408 (timeout), 409 (conflict, often a lock), 429 (rate limit) and every 5xx (the server failed). */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

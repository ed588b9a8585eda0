/**
 * What went wrong:
 * - `event_too_large`: one event block grew past `maxEventSize`; the stream was released. `partial` holds the
 *   events completed before that block in the same slice.
 * - `http_error`: `connectSse` got a status it does not retry (or ran out of attempts on one it does),
 *   or a 2xx whose Content-Type is not `text/event-stream`. `status` holds the status.
 * - `network_error`: `connectSse` ran out of attempts on connections that failed, broke or closed
 *   without an event. `cause` holds the last failure.
 */
import type { SseEvent } from './event.js';

export type SseErrorCode = 'event_too_large' | 'http_error' | 'network_error';

/** The one error type @ai4ts/sse throws itself (aborts rethrow the signal's reason unchanged). */
export class SseError extends Error {
  override name = 'SseError';
  readonly code: SseErrorCode;
  /** The HTTP status, for `http_error`. */
  readonly status: number | undefined;
  /** For `event_too_large`: the events the failing call completed before the oversized block. */
  readonly partial: SseEvent[] | undefined;

  constructor(
    message: string,
    options: { code: SseErrorCode; status?: number; cause?: unknown; partial?: SseEvent[] },
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = options.code;
    this.status = options.status;
    this.partial = options.partial;
  }
}

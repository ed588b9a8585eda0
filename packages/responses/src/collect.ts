/** A Responses stream, in any source form, to the final response object. */
import { collectInto, type ReadOptions, type StreamSource } from '@ai4ts/core';
import { ResponsesStreamListener } from './listener.js';
import type { ResponseObject } from './types.js';

/** Options of {@link collectResponse}: `signal` and `maxEventSize`, and the listener to feed. */
export interface CollectResponseOptions extends ReadOptions {
  /** The listener to feed, for live events (`content`, `tool_call.delta`, ...) or to inspect the trace afterwards. */
  listener?: ResponsesStreamListener | undefined;
}

/**
 * Reads a Responses SSE stream (a `Response`, a web stream, an async iterable of bytes or text, or the whole text)
 * to the final response object: status `completed`, or `incomplete` for a provider truncation.
 *
 * Rejects with `ApiError` for `response.failed` or an `error` event, `StreamIncompleteError` when the stream ends
 * without a terminal event, `ProtocolError` for data that is not JSON or an event over `maxEventSize`,
 * `ConnectionError` when the source breaks, `AbortError` when `signal` aborts; each carries the response received
 * so far as `partial`, the same whatever the form and chunking of the source. A `Response` with an error status
 * rejects with the typed `ApiError` of its body, without `partial`. Reading stops at the terminal event.
 */
export function collectResponse(source: StreamSource, options: CollectResponseOptions = {}): Promise<ResponseObject> {
  const { listener = new ResponsesStreamListener({ trace: false }), ...read } = options;
  return collectInto(source, listener, read);
}

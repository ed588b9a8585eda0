/** SSE bytes of a Responses stream to the final response object. */
import { AbortError, ApiError, ProtocolError } from '@ai4ts/core';
import { parseSse, SseError, type SseEvent } from '@ai4ts/sse';
import { ResponseStreamListener } from './listener.js';
import type { ResponseObject } from './types.js';

/** A Responses stream as bytes or text. */
export type ResponseSource = Response | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array | string> | string;

/** Options of {@link collectResponse}. */
export interface CollectResponseOptions {
  /** Stops reading and releases the body; the promise rejects with an AbortError carrying the partial response. */
  signal?: AbortSignal;
  /** The listener to feed, for live events (`content`, `tool_call.delta`, ...) or to inspect the trace afterwards. */
  listener?: ResponseStreamListener;
  /** Largest SSE event accepted, in characters (the SSE parser's default otherwise). */
  maxEventSize?: number;
}

/**
 * Reads a Responses SSE stream to the final response object (status `completed` or `incomplete`).
 *
 * Rejects with `ApiError` for `response.failed` or an `error` event, `StreamIncompleteError` when the stream ends
 * without a terminal event, `ProtocolError` for data that is not JSON, and the source's own error otherwise; each
 * carries the response received so far as `partial`. Events after the terminal one are kept in the listener's
 * trace and otherwise ignored. A `Response` with an error status rejects with the typed `ApiError` of its body.
 */
export async function collectResponse(
  source: ResponseSource,
  options: CollectResponseOptions = {},
): Promise<ResponseObject> {
  const { signal, maxEventSize, listener = new ResponseStreamListener() } = options;
  if (source instanceof Response && !source.ok) throw listener.fail(await httpError(source));
  const input = typeof source === 'string' ? once(source) : source;
  const sseOptions: { signal?: AbortSignal; maxEventSize?: number } = {};
  if (signal) sseOptions.signal = signal;
  if (maxEventSize !== undefined) sseOptions.maxEventSize = maxEventSize;
  return consumeResponseEvents(parseSse(input, sseOptions), listener, signal);
}

/**
 * Feeds SSE events into a listener until the source ends, then settles: the response object when a
 * `response.completed` or `response.incomplete` arrived, the listener's error otherwise.
 * A source that breaks after the terminal event does not undo a success. `signal` only names an abort as such.
 */
export async function consumeResponseEvents(
  source: AsyncIterable<SseEvent>,
  listener: ResponseStreamListener,
  signal?: AbortSignal,
): Promise<ResponseObject> {
  try {
    for await (const sse of source) {
      const data = sse.data;
      if (data === '[DONE]') listener.push(data);
      else if (data.trim() !== '') listener.push(parseData(data, listener));
    }
  } catch (error) {
    if (!isSuccess(listener)) throw listener.fail(sourceError(error, signal));
  }
  listener.end();
  if (listener.error) throw listener.error;
  return listener.response;
}

/** An abort as AbortError whatever its reason; an oversized event as the ProtocolError it is. */
function sourceError(error: unknown, signal: AbortSignal | undefined): unknown {
  if (signal?.aborted && !(error instanceof AbortError)) {
    return new AbortError('The Responses stream was aborted', { cause: signal.reason });
  }
  return error instanceof SseError ? new ProtocolError(error.message, { cause: error }) : error;
}

function isSuccess(listener: ResponseStreamListener): boolean {
  return listener.status === 'completed' || listener.status === 'incomplete';
}

/** JSON.parse, or a ProtocolError with the line; after the terminal event bad data is only kept as text. */
function parseData(data: string, listener: ResponseStreamListener): unknown {
  try {
    return JSON.parse(data);
  } catch (cause) {
    if (listener.settled) return data;
    throw new ProtocolError('The Responses stream sent data that is not JSON', { cause, line: data });
  }
}

/** The typed error of an HTTP error response, read from its body (JSON, or the text itself). */
async function httpError(response: Response): Promise<ApiError> {
  const text = await response.text().catch(() => '');
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON: ApiError reads the text.
  }
  return ApiError.fromResponse(response.status, body, response.headers);
}

async function* once(text: string): AsyncIterable<string> {
  yield text;
}

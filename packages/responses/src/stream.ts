/** The handle of one streamed Responses request, and `streamResponse`, the single step a tool loop repeats. */
import {
  EventStream,
  type RequestOptions,
  readInto,
  STREAM_EVENT_NAMES,
  type StreamEvent,
  type Transport,
} from '@ai4ts/core';
import { toAi4tsError } from '@ai4ts/core/internal';
import type { SseEvent } from '@ai4ts/sse';
import { ResponseStreamListener, type ResponseStreamEvents } from './listener.js';
import { RESPONSES_PATH, toRequestBody } from './request.js';
import type { ResponseCreateRequest, ResponseObject } from './types.js';

/** The per-request options of the Responses API (headers, query, `extraBody`, `signal`, timeouts, retries). */
export type ResponseRequestOptions = RequestOptions;

/** Opens the SSE events of one request; `signal` aborts it. */
export type OpenEvents = (signal: AbortSignal) => Promise<AsyncIterable<SseEvent>>;

/**
 * A streamed response in flight: core's {@link EventStream} over a {@link ResponseStreamListener}. It starts when
 * created and buffers its events; `.final()` alone is enough.
 *
 * - `for await (const event of stream)` yields the normalized events (`content`, `reasoning`, `tool_call.*`,
 *   `usage`, `finish`), then throws the stream's error if it failed.
 * - `stream.on(name, fn)` for the same events plus `event` (each raw Responses event), `unknown`, `warning` and
 *   `error`.
 * - `final()` resolves to the response (status `completed`, or `incomplete` for a truncation) or rejects with the
 *   typed error: its `partial` is the response so far, none for an error before the stream began (an HTTP status).
 */
export class ResponseStream extends EventStream<StreamEvent, ResponseObject, ResponseStreamEvents> {
  /** The state machine behind this stream: `response`, `events`, `lastEvent`, `functionCalls`, ... */
  readonly listener: ResponseStreamListener;

  /**
   * @param open Sends the request and resolves to its SSE events.
   * @param listener The listener to feed (a resumed stream passes one holding the trace so far).
   * @param signal The caller's signal; aborting it aborts the stream.
   */
  constructor(open: OpenEvents, listener = new ResponseStreamListener(), signal?: AbortSignal) {
    super(
      async (push, combined) => {
        for (const name of STREAM_EVENT_NAMES) listener.on(name, push);
        let events: AsyncIterable<SseEvent>;
        try {
          events = await open(combined);
        } catch (error) {
          throw listener.fail(toAi4tsError(error, { signal: combined }));
        }
        return readInto(events, listener, combined);
      },
      listener,
      signal,
    );
    this.listener = listener;
  }
}

/**
 * Starts one streamed `POST /responses` and returns its handle at once. Throws an `Ai4tsError` synchronously for
 * an invalid request; every other failure rejects `final()` (see {@link ResponseStream}).
 */
export function streamResponse(
  transport: Transport,
  request: ResponseCreateRequest,
  options: ResponseRequestOptions = {},
): ResponseStream {
  return streamBody(transport, toRequestBody(request), options);
}

/** {@link streamResponse} of a body already built by `toRequestBody` (the tool loop's steps). */
export function streamBody(
  transport: Transport,
  body: Record<string, unknown>,
  options: ResponseRequestOptions,
): ResponseStream {
  const streamed = { ...body, stream: true };
  return new ResponseStream(
    (signal) => transport.stream(RESPONSES_PATH, { method: 'POST', body: streamed, options: { ...options, signal } }),
    undefined,
    options.signal,
  );
}

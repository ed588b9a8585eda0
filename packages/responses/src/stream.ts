/** The handle of one streamed Responses request. */
import { ListenerStream } from '@ai4ts/core';
import { isRecord } from '@ai4ts/core/internal';
import type { ResponsesStreamEvents, ResponsesStreamListener } from './listener.js';
import type { ResponseObject } from './types.js';

/** Whether a value is a ResponseObject (a cheap shape check): narrows a middleware's `ModelResult`. */
export function isResponseObject(value: unknown): value is ResponseObject {
  return isRecord(value) && Array.isArray(value.output);
}

/**
 * A streamed response in flight: core's {@link ListenerStream} over a {@link ResponsesStreamListener}, with the
 * rules of every stream handle. It starts when created and buffers its events; `.final()` alone is enough.
 *
 * - `for await (const event of stream)` yields the normalized events (`content`, `reasoning`, `tool_call.*`,
 *   `usage`, `finish`), then throws the stream's error if it failed.
 * - `stream.on(name, fn)` for the same events plus `event` (each raw Responses event), `unknown`, `warning` and
 *   `error`.
 * - `final()` resolves to the response (status `completed`, or `incomplete` for a truncation) or rejects with the
 *   typed error: its `partial` is the response so far, none for an error before the stream began (an HTTP status).
 */
export class ResponsesStream extends ListenerStream<ResponsesStreamListener, ResponseObject, ResponsesStreamEvents> {}

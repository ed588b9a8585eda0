/** The handle of one streamed Responses request, and `streamResponse`, the single step a tool loop repeats. */
import { ListenerStream, type Transport } from '@ai4ts/core';
import { callOptionsOf, isRecord, type ModelProtocol } from '@ai4ts/core/internal';
import { ResponseStreamListener, type ResponseStreamEvents } from './listener.js';
import { RESPONSES_PATH, type ResponseRequestOptions, toWireRequest } from './request.js';
import { toChatUsage, toFinishReason } from './convert.js';
import type { ResponseCreateRequest, ResponseObject } from './types.js';

/** Whether a value is a ResponseObject (a cheap shape check): narrows a middleware's `ModelResult`. */
export function isResponseObject(value: unknown): value is ResponseObject {
  return isRecord(value) && Array.isArray(value.output);
}

/** How a span, a log line and the cost read a response. */
export const RESPONSES_PROTOCOL: ModelProtocol<ResponseObject> = {
  name: 'responses',
  summarize: (response) => ({
    id: response.id,
    model: response.model,
    finishReasons: [toFinishReason(response)],
    usage: response.usage ? toChatUsage(response.usage) : undefined,
    output: response.output,
  }),
  isResult: isResponseObject,
};

/**
 * A streamed response in flight: core's {@link ListenerStream} over a {@link ResponseStreamListener}, with the
 * rules of every stream handle. It starts when created and buffers its events; `.final()` alone is enough.
 *
 * - `for await (const event of stream)` yields the normalized events (`content`, `reasoning`, `tool_call.*`,
 *   `usage`, `finish`), then throws the stream's error if it failed.
 * - `stream.on(name, fn)` for the same events plus `event` (each raw Responses event), `unknown`, `warning` and
 *   `error`.
 * - `final()` resolves to the response (status `completed`, or `incomplete` for a truncation) or rejects with the
 *   typed error: its `partial` is the response so far, none for an error before the stream began (an HTTP status).
 */
export class ResponseStream extends ListenerStream<ResponseStreamListener, ResponseObject, ResponseStreamEvents> {}

/**
 * Starts one streamed `POST /responses` and returns its handle at once. Throws an `Ai4tsError` synchronously for
 * an invalid request; every other failure rejects `final()` (see {@link ResponseStream}).
 */
export function streamResponse(
  transport: Transport,
  request: ResponseCreateRequest,
  options: ResponseRequestOptions = {},
): ResponseStream {
  return streamWireBody(transport, toWireRequest(request), callOptionsOf(request, options));
}

/** {@link streamResponse} of a body already built by `toWireRequest` (the tool loop's steps). Not public. */
export function streamWireBody(
  transport: Transport,
  wire: Record<string, unknown>,
  options: ResponseRequestOptions,
): ResponseStream {
  const body = { ...wire, stream: true };
  const { signal, ...requestOptions } = options;
  const call = transport.call(RESPONSES_PROTOCOL, body, requestOptions);
  return new ResponseStream(
    new ResponseStreamListener(),
    (attempt) => transport.stream(RESPONSES_PATH, { body: call.body, options: { ...requestOptions, ...attempt }, watch: call }),
    signal,
    transport.streamRetry(requestOptions),
    call,
  );
}

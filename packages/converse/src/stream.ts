/** The handle of one streamed Converse request. */
import { ListenerStream } from '@ai4ts/core';
import { isRecord } from '@ai4ts/core/internal';
import type { ConverseStreamEvents, ConverseStreamListener } from './listener.js';
import type { ConverseResponse } from './types.js';

/**
 * Whether a value is a ConverseResponse (a cheap shape check: `output.message.content` an array): narrows a
 * middleware's `ModelResult`.
 */
export function isConverseResponse(value: unknown): value is ConverseResponse {
  return isRecord(value) && isRecord(value.output) && isRecord(value.output.message) && Array.isArray(value.output.message.content);
}

/**
 * A streaming Converse request in flight: core's {@link ListenerStream}, with the rules of every stream handle. It
 * starts when created and buffers its events from the first; every `for await` yields them all (content, reasoning,
 * tool calls, usage, finish); leaving a loop early aborts a running request; `final()` resolves to the response or
 * rejects with the typed error (`partial`: the response so far, none when the stream never started). The raw
 * `event` and `error` come through `on()`; `listener` holds the state at any moment.
 */
export class ConverseStream extends ListenerStream<ConverseStreamListener, ConverseResponse, ConverseStreamEvents> {}

/** The handle of one streamed Gemini request. */
import { ListenerStream } from '@ai4ts/core';
import { isRecord } from '@ai4ts/core/internal';
import type { GeminiStreamEvents, GeminiStreamListener } from './listener.js';
import type { GenerateContentResponse } from './types.js';

/**
 * Whether a value is a GenerateContentResponse (a cheap shape check: `candidates` an array, or a `promptFeedback`):
 * narrows a middleware's `ModelResult`.
 */
export function isGenerateContentResponse(value: unknown): value is GenerateContentResponse {
  return isRecord(value) && (Array.isArray(value.candidates) || isRecord(value.promptFeedback));
}

/**
 * A streaming Gemini request in flight: core's {@link ListenerStream}, with the rules of every stream handle. It
 * starts when created and buffers its events from the first; every `for await` yields them all (content, reasoning
 * for thoughts, tool calls, usage, finish); leaving a loop early aborts a running request; `final()` resolves to the
 * response or rejects with the typed error (`partial`: the response so far, none when the stream never started).
 * The raw `chunk` and `error` come through `on()`; `listener` holds the state at any moment.
 */
export class GeminiStream extends ListenerStream<GeminiStreamListener, GenerateContentResponse, GeminiStreamEvents> {}

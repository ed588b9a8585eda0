/** Reads a whole Gemini SSE stream (`streamGenerateContent?alt=sse`), in any form, to its final response. */
import { collectInto, type ReadOptions, type StreamSource } from '@ai4ts/core';
import { GeminiStreamListener } from './listener.js';
import type { GenerateContentResponse } from './types.js';

/** Options of {@link collectGemini}: `signal`, `maxEventSize`, and a listener to watch the events live. */
export interface CollectGeminiOptions extends ReadOptions {
  /** The listener to fold the chunks into; a fresh one by default. */
  listener?: GeminiStreamListener | undefined;
}

/**
 * Collects a Gemini stream (a fetch Response, a web stream, an async iterable of bytes or text, or the whole text)
 * into the final response; every form and every chunking gives the same result and the same `partial`.
 *
 * @throws (rejects with) ApiError for an `{ error }` chunk, PromptBlockedError for a blocked prompt,
 * StreamIncompleteError when the stream ended without a finishReason, ProtocolError for data that is not a Gemini
 * chunk, AbortError when `signal` aborts, ConnectionError when the source fails. Every such error's `partial` is the
 * response so far, none before the first chunk.
 */
export function collectGemini(source: StreamSource, options: CollectGeminiOptions = {}): Promise<GenerateContentResponse> {
  const { listener = new GeminiStreamListener({ trace: false }), ...read } = options;
  return collectInto(source, listener, read);
}

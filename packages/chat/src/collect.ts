/** Reading a whole Chat Completions SSE stream, in any {@link StreamSource} form, to its final completion. */
import { collectInto, type ReadOptions, type StreamSource } from '@ai4ts/core';
import { ChatStreamListener, type ChatStreamListenerOptions } from './listener.js';
import type { ChatCompletion } from './types.js';

/** Options of {@link collectChatCompletion}: the read options, `thinkTags`, and your own listener. */
export interface CollectChatCompletionOptions extends ReadOptions, ChatStreamListenerOptions {
  /** Your own listener, to receive events while collecting (its `thinkTags` setting wins). */
  listener?: ChatStreamListener | undefined;
}

/**
 * Reads a Chat Completions SSE stream (a Response, a web stream, an async iterable of bytes or text, or the whole
 * stream as one string) to its final completion. Every form and every chunking gives the same result.
 *
 * @throws StreamIncompleteError when the stream ends (or sends `[DONE]`) before every choice's finish_reason,
 *   ApiError for an error inside the stream, ProtocolError for data that is not JSON or an event over
 *   `maxEventSize`, ConnectionError when the source breaks, AbortError when `signal` aborts; each with `partial`,
 *   the completion so far (the listener's `completion`).
 */
export function collectChatCompletion(
  source: StreamSource,
  options: CollectChatCompletionOptions = {},
): Promise<ChatCompletion> {
  return collectInto(source, options.listener ?? new ChatStreamListener(options), options);
}

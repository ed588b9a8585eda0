/**
 * Reads a whole Messages SSE stream, in any form, to its final message.
 */
import { collectInto, type ReadOptions, type StreamSource } from '@ai4ts/core';
import { MessagesStreamListener } from './listener.js';
import type { Message } from './types.js';

/** Options of {@link collectMessage}: `signal`, `maxEventSize`, and a listener to watch the events live. */
export interface CollectMessageOptions extends ReadOptions {
  /** The listener to fold the events into; a fresh one by default. */
  listener?: MessagesStreamListener | undefined;
}

/**
 * Collects a Messages stream (a fetch Response, a web stream, an async iterable of bytes or text, or the whole
 * text) into the final message; every form and every chunking gives the same result and the same `partial`.
 *
 * @throws (rejects with) ApiError for an `error` event, StreamIncompleteError when message_stop never came,
 * ProtocolError for data that is not a Messages event or an event over `maxEventSize`, AbortError when `signal`
 * aborts, ConnectionError when the source fails (an Ai4tsError it throws keeps its class). Every such error's
 * `partial` is the message so far, none before message_start.
 */
export function collectMessage(source: StreamSource, options: CollectMessageOptions = {}): Promise<Message> {
  const { listener = new MessagesStreamListener({ trace: false }), ...read } = options;
  return collectInto(source, listener, read);
}

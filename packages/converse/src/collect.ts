/** Reads a whole Converse stream, as SSE events named by their `:event-type`, to its final response. */
import { collectInto, type ReadOptions, type StreamSource } from '@ai4ts/core';
import { ConverseStreamListener } from './listener.js';
import type { ConverseResponse } from './types.js';

/** Options of {@link collectConverse}: `signal`, `maxEventSize`, and a listener to watch the events live. */
export interface CollectConverseOptions extends ReadOptions {
  /** The listener to fold the events into; a fresh one by default. */
  listener?: ConverseStreamListener | undefined;
}

/**
 * Collects a Converse stream given as SSE (a fetch Response, a web stream, an async iterable of bytes or text, or the
 * whole text) into the final response. A Bedrock body itself is binary frames: `client.converse.stream` reads those.
 *
 * @throws (rejects with) StreamIncompleteError when the stream ended before `messageStop`, ProtocolError for data
 * that is not a Converse event, AbortError when `signal` aborts, ConnectionError when the source fails. Every such
 * error's `partial` is the response so far, none before the first event.
 */
export function collectConverse(source: StreamSource, options: CollectConverseOptions = {}): Promise<ConverseResponse> {
  const { listener = new ConverseStreamListener({ trace: false }), ...read } = options;
  return collectInto(source, listener, read);
}

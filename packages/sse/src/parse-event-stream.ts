import {
  EventStreamDecoder,
  type EventStreamDecoderOptions,
  EventStreamError,
  type EventStreamMessage,
} from './event-stream.js';
import { flatten, readBatches } from './parse.js';

/** What {@link parseEventStream} reads: a fetch Response, a web stream or any async iterable of bytes. */
export type EventStreamSource = Response | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>;

/** Options of {@link parseEventStream}. */
export interface ParseEventStreamOptions extends EventStreamDecoderOptions {
  /** Aborting stops the iteration with the signal's reason and cancels the source. */
  signal?: AbortSignal;
}

/**
 * Decodes a stream of AWS event-stream messages (`application/vnd.amazon.eventstream`). The source is released
 * however the iteration ends, as {@link parseSse}'s is. A corrupt or truncated stream rejects with
 * {@link EventStreamError} after the messages decoded before the fault.
 */
export function parseEventStream(
  source: EventStreamSource,
  options: ParseEventStreamOptions = {},
): AsyncGenerator<EventStreamMessage, void, undefined> {
  const decoder = new EventStreamDecoder(options);
  return flatten(readBatches(source, decoder, options.signal, eventStreamPartial));
}

function eventStreamPartial(error: unknown): EventStreamMessage[] | undefined {
  return error instanceof EventStreamError ? error.partial : undefined;
}

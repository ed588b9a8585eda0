/**
 * The one input type of every collector and reader: an SSE stream as a fetch Response, a web stream, an async
 * iterable of bytes or text, or the whole stream as one string. Every form goes through the same streaming decoder,
 * so the result and the `partial` of a failure never depend on the form or on how the bytes were cut.
 */
import { type ParseSseOptions, parseSse, type SseEvent } from '@ai4ts/sse';
import { MIN_SECRET_LENGTH, redactEvent } from './internal/fail.js';

/** An SSE stream in any of the forms ai4ts reads. */
export type StreamSource =
  | Response
  | ReadableStream<Uint8Array>
  | ReadableStream<string>
  | AsyncIterable<Uint8Array | string>
  | string;

/** Options of {@link sseEventsOf}: the decoder's, and the secrets to redact from every event's data. */
export interface SseEventsOptions extends ParseSseOptions {
  secrets?: readonly (string | undefined)[] | undefined;
}

/** The SSE events of a {@link StreamSource}; the source is released however the reading ends. */
export function sseEventsOf(source: StreamSource, options: SseEventsOptions = {}): AsyncIterable<SseEvent> {
  const { secrets, ...parse } = options;
  const events = parseSse(typeof source === 'string' ? once(source) : source, parse);
  return secrets?.some((secret) => secret && secret.length >= MIN_SECRET_LENGTH) ? redacted(events, secrets) : events;
}

async function* redacted(events: AsyncIterable<SseEvent>, secrets: readonly (string | undefined)[]) {
  for await (const event of events) yield redactEvent(event, secrets);
}

// A whole string is one chunk of the same decoder path, so an oversized event fails at the same place.
async function* once(text: string): AsyncGenerator<string> {
  yield text;
}

/**
 * The one input type of every collector and reader: an SSE stream as a fetch Response, a web stream, an async
 * iterable of bytes or text, or the whole stream as one string. Every form goes through the same streaming decoder,
 * so the result and the `partial` of a failure never depend on the form or on how the bytes were cut.
 */
import { type ParseSseOptions, parseSse, type SseEvent, type SseEventStream } from '@ai4ts/sse';
import { MIN_SECRET_LENGTH, redactEvent } from './internal/fail.js';

/** An SSE stream in any of the forms ai4ts reads. */
export type StreamSource =
  | Response
  | ReadableStream<Uint8Array>
  | ReadableStream<string>
  | AsyncIterable<Uint8Array | string>
  | string;

/** SSE events that can also be read a chunk's worth at a time, as @ai4ts/sse's `SseEventStream` can. */
export type SseBatches = AsyncIterable<SseEvent> & Pick<SseEventStream, 'batches'>;

/** Options of {@link sseEventsOf}: the decoder's, and the secrets to redact from every event's data. */
export interface SseEventsOptions extends ParseSseOptions {
  secrets?: readonly (string | undefined)[] | undefined;
}

/**
 * The SSE events of a {@link StreamSource}, readable one by one or a chunk at a time; the source is released
 * however the reading ends.
 */
export function sseEventsOf(source: StreamSource, options: SseEventsOptions = {}): SseBatches {
  const { secrets, ...parse } = options;
  const events = parseSse(typeof source === 'string' ? once(source) : source, parse);
  return secrets?.some((secret) => secret && secret.length >= MIN_SECRET_LENGTH) ? redacted(events, secrets) : events;
}

/** `events` with every secret redacted from their data, read either way (once). */
function redacted(events: SseBatches, secrets: readonly (string | undefined)[]): SseBatches {
  async function* batches(): AsyncGenerator<SseEvent[], void, undefined> {
    for await (const batch of events.batches()) yield batch.map((event) => redactEvent(event, secrets));
  }
  return { batches, [Symbol.asyncIterator]: () => eachEvent(batches()) };
}

/** Batches of events read one event at a time. */
export async function* eachEvent(batches: AsyncIterator<SseEvent[]>): AsyncGenerator<SseEvent, void, undefined> {
  try {
    for (let next = await batches.next(); !next.done; next = await batches.next()) yield* next.value;
  } finally {
    await batches.return?.();
  }
}

// A whole string is one chunk of the same decoder path, so an oversized event fails at the same place.
async function* once(text: string): AsyncGenerator<string> {
  yield text;
}

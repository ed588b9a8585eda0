/**
 * The listener contract every protocol follows (Chat Completions, Responses, Messages): a listener folds one
 * stream into the protocol's result and emits the normalized events while doing so. docs/protocols.md explains it.
 *
 * - `status`: `pending` (nothing yet), `streaming`, `completed` (the protocol's terminal event arrived; a
 *   provider's truncation such as `length`, `max_tokens` or a Responses `incomplete` is a finish reason of a
 *   completed stream), `failed` (an error event, bad data, a cut, an abort).
 * - `pushSse(event)` feeds one SSE event from the wire, `push(data)` one parsed protocol event. On bad server
 *   data or an in-stream error they record the typed error (status `failed`, an `error` event) and throw it.
 *   After `completed` or `failed` further input is ignored.
 * - `end()` says the input ended: it returns the final result, or records and throws the failure
 *   (StreamIncompleteError when the terminal event never came).
 * - `fail(error)` records a failure from outside (the network, an abort), gives it the partial result, and returns
 *   it to throw. Once failed, it returns the first error; once completed, it records nothing.
 * - `partial` is the result so far as soon as anything arrived; a failure before the first event has none.
 * - `reset()` puts every field back to its initial state, for a stream sent again after it failed before its
 *   first event. Handlers stay: they live on the listener's emitter, which the stream handle and the caller share.
 *
 * `ProtocolListener` (protocol-listener.ts) keeps this bookkeeping for the three protocols' listeners.
 */
import type { SseEvent } from '@ai4ts/sse';
import type { Ai4tsError } from './errors.js';
import { readErrorResponse, toAi4tsError } from './internal/fail.js';
import { type SseBatches, type StreamSource, sseEventsOf } from './source.js';

/** Where a listener's stream stands; the same four values and meanings in every protocol. */
export type ListenerStatus = 'pending' | 'streaming' | 'completed' | 'failed';

/** What every protocol listener offers; `Final` is the protocol's result (a completion, a response, a message). */
export interface StreamListener<Final> {
  readonly status: ListenerStatus;
  /** The error that failed the stream, once it failed. */
  readonly error: Ai4tsError | undefined;
  /** Feeds one SSE event as it came off the wire. Throws the recorded error on bad data or an error event. */
  pushSse(event: SseEvent): void;
  /** The input ended: the final result, or the recorded failure thrown. */
  end(): Final;
  /** Records a failure from outside the stream and returns it (with `partial`) to throw. */
  fail(error: unknown): Ai4tsError;
  /**
   * Back to the state of a new listener (status `pending`, nothing received, no error), its options and handlers
   * kept: the next attempt of a retried stream starts clean.
   */
  reset(): void;
}

/** Options of reading a source into a listener. */
export interface ReadOptions {
  /** Stops reading and releases the source; the read rejects with an AbortError carrying the partial. */
  signal?: AbortSignal | undefined;
  /** Largest SSE event accepted, in characters; a larger one is a ProtocolError. */
  maxEventSize?: number | undefined;
  /** Redacted from all server data before the listener sees it (the API key a server may echo). */
  secrets?: readonly (string | undefined)[] | undefined;
}

/**
 * Reads SSE events into `listener` until it completes or the events end, and returns its final result. The
 * events are released as soon as the listener completes. Every failure rejects with the listener's typed error,
 * `partial` attached. The one reading loop of every protocol, its service and its collector.
 *
 * Events that can be read a chunk at a time (see `SseBatches`: every stream ai4ts decodes) are pushed
 * synchronously, one `await` per chunk rather than one per event.
 */
export async function readInto<Final>(
  events: AsyncIterable<SseEvent>,
  listener: StreamListener<Final>,
  signal?: AbortSignal,
): Promise<Final> {
  const iterator = isBatched(events) ? events.batches() : oneByOne(events);
  let exhausted = false;
  try {
    reading: while (listener.status !== 'completed') {
      let next: IteratorResult<SseEvent[]>;
      try {
        next = await iterator.next();
      } catch (error) {
        exhausted = true;
        throw listener.fail(toAi4tsError(error, { signal }));
      }
      if (next.done) {
        exhausted = true;
        break;
      }
      for (const event of next.value) {
        // Throws the listener's recorded error, or an event handler's own error, unchanged.
        listener.pushSse(event);
        if (isCompleted(listener)) break reading;
      }
    }
  } finally {
    // Not awaited: nothing after the terminal event matters, and some bodies never settle a cancel.
    if (!exhausted) iterator.return?.()?.catch(() => undefined);
  }
  if (signal?.aborted && listener.status !== 'completed') throw listener.fail(toAi4tsError(signal.reason, { signal }));
  return listener.end();
}

// A function, not an inline test: the loop's condition narrowed `status`, which pushSse changes.
function isCompleted(listener: StreamListener<unknown>): boolean {
  return listener.status === 'completed';
}

function isBatched(events: AsyncIterable<SseEvent>): events is SseBatches {
  return 'batches' in events && typeof events.batches === 'function';
}

async function* oneByOne(events: AsyncIterable<SseEvent>): AsyncGenerator<SseEvent[], void, undefined> {
  for await (const event of events) yield [event];
}

/**
 * Reads a whole {@link StreamSource} (any form) into `listener`: {@link readInto} over its SSE events. A `Response`
 * with an error status rejects with the typed ApiError of its body instead (recorded by the listener).
 */
export async function collectInto<Final>(
  source: StreamSource,
  listener: StreamListener<Final>,
  options: ReadOptions = {},
): Promise<Final> {
  const { signal, maxEventSize, secrets } = options;
  if (source instanceof Response && !source.ok) throw listener.fail(await readErrorResponse(source, { signal, secrets }));
  let events: AsyncIterable<SseEvent>;
  try {
    events = sseEventsOf(source, { signal, maxEventSize, secrets });
  } catch (error) {
    throw listener.fail(toAi4tsError(error, { signal }));
  }
  return readInto(events, listener, signal);
}

/**
 * Reads a Messages SSE stream to its final message.
 */
import { AbortError, Ai4tsError, ConnectionError, ProtocolError } from '@ai4ts/core';
import { parseSse, type SseEvent } from '@ai4ts/sse';
import { MessagesStreamListener } from './listener.js';
import type { Message } from './types.js';

/** Options of {@link collectMessage}. */
export interface CollectMessageOptions {
  signal?: AbortSignal;
  /** Largest SSE event accepted, in characters (see `parseSse`). */
  maxEventSize?: number;
  /** A listener to fold the events into, to watch them live; a fresh one by default. */
  listener?: MessagesStreamListener;
}

/**
 * Collects a Messages stream (a fetch Response, its body, or any byte/text chunks) into the final message.
 * Rejects with ApiError for an `error` event, StreamIncompleteError when message_stop never came, ProtocolError for
 * data that is not JSON, AbortError when `signal` aborts, ConnectionError when the source fails; every such error
 * carries the message so far in `partial` (null before message_start).
 */
export function collectMessage(
  source: Response | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array | string>,
  options: CollectMessageOptions = {},
): Promise<Message> {
  const { signal, maxEventSize, listener = new MessagesStreamListener() } = options;
  return readMessageEvents(parseSse(source, { signal, maxEventSize }), listener, signal);
}

/**
 * Feeds SSE events into `listener` until message_stop, then releases the source and returns the message.
 * Errors from the source get the partial message before they are rethrown.
 */
export async function readMessageEvents(
  events: AsyncIterable<SseEvent>,
  listener: MessagesStreamListener,
  signal?: AbortSignal,
): Promise<Message> {
  const iterator = events[Symbol.asyncIterator]();
  let exhausted = false;
  try {
    while (listener.status !== 'completed') {
      let step: IteratorResult<SseEvent>;
      try {
        step = await iterator.next();
      } catch (error) {
        exhausted = true;
        throw listener.fail(fromSource(error, signal));
      }
      if (step.done) {
        exhausted = true;
        break;
      }
      listener.pushSse(step.value);
    }
  } finally {
    // Not awaited: cancelling some bodies never settles, and nothing after message_stop matters.
    if (!exhausted) iterator.return?.()?.catch(() => {});
  }
  if (signal?.aborted && listener.status !== 'completed') throw listener.fail(abortError(signal));
  return listener.end();
}

/** Turns what a source threw into an ai4ts error. */
export function fromSource(error: unknown, signal?: AbortSignal): Ai4tsError {
  if (error instanceof Ai4tsError) return error;
  if (signal?.aborted) return abortError(signal, error);
  const err = error as Error | undefined;
  if (err?.name === 'AbortError') return new AbortError('The request was aborted', { cause: error });
  // SseError: the stream broke the SSE format (for example an event over maxEventSize).
  if (err?.name === 'SseError') return new ProtocolError(err.message, { cause: error });
  return new ConnectionError(`The stream failed: ${err?.message ?? String(error)}`, { cause: error });
}

function abortError(signal: AbortSignal, cause: unknown = signal.reason): AbortError {
  return new AbortError('The request was aborted', { cause });
}

/**
 * SSE events of a Chat Completions stream to the final completion. Shared by `collectChatCompletion` (any byte
 * source) and the service (a Transport's stream): one place decides what ends a stream and what is an error.
 */
import {
  AbortError,
  Ai4tsError,
  ApiError,
  ConnectionError,
  ProtocolError,
  StreamIncompleteError,
} from '@ai4ts/core';
import { parseSse, SseError, type SseEvent } from '@ai4ts/sse';
import { ChatStreamListener, type ChatStreamListenerOptions } from './listener.js';
import type { ChatCompletion } from './types.js';

/** Bytes of a Chat Completions SSE stream, or the whole stream as one string. */
export type ChatStreamSource = Response | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array | string> | string;

export interface CollectChatCompletionOptions extends ChatStreamListenerOptions {
  /** Stops reading and releases the body; the promise rejects with AbortError (with `.partial`). */
  signal?: AbortSignal;
  /** Largest SSE event accepted, in characters; a larger one is a ProtocolError. */
  maxEventSize?: number;
  /** Your own listener, to receive events while collecting (its `thinkTags` setting wins). */
  listener?: ChatStreamListener;
}

/**
 * Reads a Chat Completions SSE stream to its final completion.
 *
 * Throws StreamIncompleteError when the stream ends before every choice's finish_reason, ApiError for an error
 * inside the stream, ProtocolError for unparseable data, AbortError when `signal` aborts; each with `.partial`,
 * the completion so far.
 */
export function collectChatCompletion(
  source: ChatStreamSource,
  options: CollectChatCompletionOptions = {},
): Promise<ChatCompletion> {
  const listener = options.listener ?? new ChatStreamListener(options);
  const { signal, maxEventSize } = options;
  const sseOptions: { signal?: AbortSignal; maxEventSize?: number } = {};
  if (signal) sseOptions.signal = signal;
  if (maxEventSize !== undefined) sseOptions.maxEventSize = maxEventSize;
  // A whole string goes through the same decoder path, so events before an oversized one still reach the listener.
  const input = typeof source === 'string' ? oneChunk(source) : source;
  return readChatEvents(parseSse(input, sseOptions), listener, signal);
}

async function* oneChunk(text: string): AsyncIterable<string> {
  yield text;
}

/**
 * Feeds SSE events into `listener` until `data: [DONE]` or the end of input, and returns the completion.
 * Every failure is emitted as `error` on the listener and thrown with `.partial` set to the completion so far.
 * This is the single-request reading step the service and the tool loop build on.
 */
export async function readChatEvents(
  events: AsyncIterable<SseEvent> | Iterable<SseEvent>,
  listener: ChatStreamListener,
  signal?: AbortSignal,
): Promise<ChatCompletion> {
  // Errors from push() are the listener's own (already recorded) or an event handler's: they pass through as-is.
  let pushing = false;
  try {
    for await (const event of events) {
      const data = event.data;
      if (event.event === 'error') throw listener.fail(ApiError.fromStreamError(parseOrText(data), undefined));
      if (data === '[DONE]') break;
      if (data === '') continue;
      let chunk: unknown;
      try {
        chunk = JSON.parse(data);
      } catch (cause) {
        throw listener.fail(new ProtocolError('The chat stream sent data that is not JSON', { line: data, cause }));
      }
      pushing = true;
      listener.push(chunk);
      pushing = false;
    }
  } catch (error) {
    if (pushing || error === listener.error) throw error;
    throw listener.fail(toAi4tsError(error, signal));
  }
  listener.end();
  if (listener.status !== 'complete') {
    throw listener.fail(new StreamIncompleteError('The chat stream ended before its finish_reason'));
  }
  return listener.completion;
}

/** Maps what broke a source to a typed error: ours pass through, an abort wins, the rest is the connection. */
export function toAi4tsError(error: unknown, signal: AbortSignal | undefined): Ai4tsError {
  if (error instanceof Ai4tsError) return error;
  if (signal?.aborted) return new AbortError('The chat stream was aborted', { cause: signal.reason });
  if (error instanceof SseError) return new ProtocolError(error.message, { cause: error });
  const message = error instanceof Error ? error.message : String(error);
  return new ConnectionError(`The chat stream broke: ${message}`, { cause: error });
}

function parseOrText(data: string): unknown {
  try {
    return JSON.parse(data);
  } catch {
    return data;
  }
}

/**
 * Reading a provider's answer with the protocol's own listener: the listener folds the SSE events and emits the
 * normalized events, which are handed on as bridge events the moment each SSE event is folded (nothing is buffered).
 */
import { type StreamEvent, type StreamListener, STREAM_EVENT_NAMES } from '@ai4ts/core';
import {
  type StreamEventSource,
  type ModelProtocol, readErrorResponse, readFramedStream, sseEventsOf, toAi4tsError } from '@ai4ts/core/internal';
import type { SseEvent } from '@ai4ts/sse';
import type { BridgeEvent } from '@ai4ts/bridge';
import type { CodecReadOptions } from './neutral.js';

/** Options of {@link readWithListener}. */
export interface ListenOptions extends CodecReadOptions {
  /**
   * Sees each SSE event before the listener, for what the normalized events do not carry (a thinking signature):
   * what it returns follows the event's normalized events.
   */
  peek?: (event: SseEvent) => BridgeEvent | BridgeEvent[] | undefined;
}

/**
 * The listener's normalized events for one upstream response, as they happen, then the protocol's summary of the
 * result to `options.summary`. A non-2xx response throws its typed ApiError (body scrubbed); an in-stream error, a
 * cut or bad data throws the listener's typed error.
 */
export async function* readWithListener<Final>(
  listener: StreamListener<Final> & StreamEventSource,
  protocol: ModelProtocol<Final>,
  response: Response,
  options: ListenOptions,
): AsyncGenerator<BridgeEvent> {
  const { signal, secrets, peek, summary, framing } = options;
  if (!response.ok)
    throw listener.fail(await readErrorResponse(response, { signal, secrets }));
  const queue: BridgeEvent[] = [];
  const push = (event: StreamEvent) => queue.push(event);
  for (const name of STREAM_EVENT_NAMES) listener.on(name, push);
  // A preset that streams other than SSE (Bedrock) turns its body into the protocol's SSE events.
  const framed = framing && response.headers.get('content-type')?.toLowerCase().startsWith(framing.contentType);
  const events = (framed ? readFramedStream(response, framing, { signal, secrets }) : sseEventsOf(response, { signal, secrets }))[
    Symbol.asyncIterator
  ]();
  try {
    while (listener.status !== 'completed') {
      let next: IteratorResult<SseEvent>;
      try {
        next = await events.next();
      } catch (error) {
        throw listener.fail(toAi4tsError(error, { signal }));
      }
      if (next.done) break;
      const extra = peek?.(next.value);
      listener.pushSse(next.value);
      yield* queue.splice(0);
      if (Array.isArray(extra)) yield* extra;
      else if (extra) yield extra;
    }
    const final = listener.end();
    summary?.(protocol.summarize(final));
  } finally {
    events.return?.()?.catch(() => undefined);
  }
}

/** One streamed Responses request, and the handle `stream()` returns for it. */
import type { NormalizedEvent, RequestInit_, SseStream, Transport } from '@ai4ts/core';
import type { EventEmitter } from 'eventemitter3';
import { consumeResponseEvents } from './collect.js';
import { type ResponseListenerEvents, ResponseStreamListener } from './listener.js';
import type { ResponseObject } from './types.js';

/** What iterating a {@link ResponseStream} yields: the normalized events, as for chat and messages streams. */
export type ResponseStreamItem = Exclude<NormalizedEvent, { type: 'error' | 'tool.result' }>;

const YIELDED = ['content', 'reasoning', 'tool_call.start', 'tool_call.delta', 'tool_call.done', 'usage', 'finish'] as const;

/**
 * Sends one streaming request and feeds its events into `listener` until the stream ends; resolves to the final
 * response with the terminal semantics of {@link consumeResponseEvents}. An error before the first byte (an HTTP
 * status, a refused connection) carries no partial; any later one carries the response so far.
 */
export async function runResponseStream(
  transport: Transport,
  path: string,
  init: RequestInit_,
  listener: ResponseStreamListener,
): Promise<ResponseObject> {
  let events: SseStream;
  try {
    events = await transport.stream(path, init);
  } catch (error) {
    throw listener.fail(error);
  }
  return consumeResponseEvents(events, listener, init.options?.signal);
}

type EventName = EventEmitter.EventNames<ResponseListenerEvents>;
type Handler<E extends EventName> = EventEmitter.EventListener<ResponseListenerEvents, E>;

/**
 * A streamed response in flight. It starts when created; `.final()` alone is enough to get the result, and a
 * failure nobody awaits is never an unhandled rejection.
 *
 * - `for await (const event of stream)` yields the normalized events (`content`, `reasoning`, `tool_call.*`,
 *   `usage`, `finish`; several loops may read it, each from the start), then throws the stream's error if it
 *   failed. Leaving a loop early aborts the request.
 * - `stream.on(name, fn)` for the same events plus `event` (each raw Responses event), `unknown`, `warning` and
 *   `error`, from {@link listener}.
 */
export class ResponseStream implements AsyncIterable<ResponseStreamItem> {
  /** The state machine behind this stream: `response`, `events`, `lastEvent`, `functionCalls`, ... */
  readonly listener: ResponseStreamListener;
  readonly #controller = new AbortController();
  readonly #final: Promise<ResponseObject>;
  readonly #received: ResponseStreamItem[] = [];
  #settled = false;
  #wake: (() => void) | undefined;

  /**
   * @param start Runs the request: given the listener to feed and the signal that `abort()` fires.
   * @param signal The caller's signal; aborting it aborts the stream.
   */
  constructor(
    start: (listener: ResponseStreamListener, signal: AbortSignal) => Promise<ResponseObject>,
    signal?: AbortSignal,
    listener: ResponseStreamListener = new ResponseStreamListener(),
  ) {
    this.listener = listener;
    const receive = (event: ResponseStreamItem) => {
      this.#received.push(event);
      this.#notify();
    };
    for (const name of YIELDED) listener.on(name, receive);
    const combined = signal ? AbortSignal.any([signal, this.#controller.signal]) : this.#controller.signal;
    // Started on a later tick: handlers attached right after `stream()` returns see every event.
    this.#final = Promise.resolve()
      .then(() => start(listener, combined))
      .finally(() => {
        this.#settled = true;
        this.#notify();
      });
    this.#final.catch(() => undefined);
  }

  /** The final response (status `completed` or `incomplete`); rejects with the typed error, `partial` attached. */
  final(): Promise<ResponseObject> {
    return this.#final;
  }

  /** Aborts the request and releases the connection; `final()` rejects with an AbortError carrying the partial. */
  abort(reason?: unknown): void {
    this.#controller.abort(reason);
  }

  /** Adds a listener for a normalized or raw event (see {@link ResponseListenerEvents}). */
  on<E extends EventName>(event: E, handler: Handler<E>): this {
    this.listener.on(event, handler);
    return this;
  }

  /** Adds a one-time listener. */
  once<E extends EventName>(event: E, handler: Handler<E>): this {
    this.listener.once(event, handler);
    return this;
  }

  /** Removes a listener. */
  off<E extends EventName>(event: E, handler?: Handler<E>): this {
    this.listener.off(event, handler);
    return this;
  }

  async *[Symbol.asyncIterator](): AsyncIterator<ResponseStreamItem> {
    let next = 0;
    let finished = false;
    try {
      for (;;) {
        if (next < this.#received.length) {
          yield this.#received[next++] as ResponseStreamItem;
          continue;
        }
        if (this.#settled) break;
        await new Promise<void>((resolve) => {
          const previous = this.#wake;
          this.#wake = () => {
            previous?.();
            resolve();
          };
        });
      }
      finished = true;
    } finally {
      if (!finished && !this.#settled) this.abort();
    }
    await this.#final;
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }
}

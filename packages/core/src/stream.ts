/**
 * The one stream handle. Every streamed thing in ai4ts (a Chat Completions, Responses or Messages request, and the
 * tool loop over any of them) is an {@link EventStream}; a protocol only adds its own state (its listener).
 *
 * The rules, the same for every handle:
 * - It starts when created and buffers its events from the first: nothing is lost between `stream()` and the first
 *   `for await`, and `final()` alone is enough.
 * - Every `for await` yields every event from the first, then ends (or throws the stream's error). Several loops
 *   may read one handle. Leaving a loop early (break, return, throw) aborts the stream if it is still running.
 * - `on` / `once` / `off` see the events live, raw protocol events included.
 * - A failure nobody awaits is never an unhandled rejection; `final()` rejects with an {@link Ai4tsError} whose
 *   `partial` holds what arrived.
 */
import type { SseEvent } from '@ai4ts/sse';
import type { EventEmitter } from 'eventemitter3';
import { type Ai4tsError, ApiError } from './errors.js';
import { type HandlersOf, STREAM_EVENT_NAMES, type StreamEvent } from './events.js';
import { toAi4tsError } from './internal/fail.js';
import { follow } from './internal/signal.js';
import { readInto, type StreamListener } from './listener.js';
import { type OnRetry, type RetryPolicy, sleep } from './transport/retry.js';
import type { ModelCall, ResponseInfo } from './observe/call.js';

/**
 * Runs the stream: call `push` with each event to yield, in order, and resolve to the final result. `signal`
 * aborts when the caller's signal does or `abort()` is called.
 */
export type StreamRun<Item, Final> = (push: (item: Item) => void, signal: AbortSignal) => Promise<Final>;

/** The event names of an emitter's handler map. */
export type StreamEventName<Events extends EventEmitter.ValidEventTypes> = EventEmitter.EventNames<Events>;
/** The handler of one event of an emitter's handler map. */
export type StreamEventHandler<
  Events extends EventEmitter.ValidEventTypes,
  E extends StreamEventName<Events>,
> = EventEmitter.EventListener<Events, E>;

/** A running stream of `Item` events that ends in a `Final` result; see the module comment for its rules. */
export class EventStream<Item extends { type: string }, Final, Events extends EventEmitter.ValidEventTypes>
  implements AsyncIterable<Item>
{
  readonly #emitter: EventEmitter<Events>;
  readonly #controller = new AbortController();
  readonly #final: Promise<Final>;
  readonly #items: Item[] = [];
  #settled = false;
  /** Stops following the caller's signal. */
  readonly #release: () => void;
  /** The readers waiting for the next event or the end; each is woken once. */
  #waiting: (() => void)[] = [];

  /**
   * @param run Starts the work now: calls `push` with each event to yield, in order, and resolves to the final result.
   * @param emitter Where `on` / `once` / `off` subscribe: the protocol's listener, or the loop's emitter.
   * @param signal The caller's signal; its abort aborts the stream.
   */
  constructor(run: StreamRun<Item, Final>, emitter: EventEmitter<Events>, signal?: AbortSignal) {
    this.#emitter = emitter;
    // The caller's signal aborts this stream's own; the follower goes when the stream settles.
    this.#release = follow(signal, this.#controller);
    const combined = this.#controller.signal;
    const push = (item: Item) => {
      this.#items.push(item);
      this.#wake();
    };
    let started: Promise<Final>;
    try {
      started = run(push, combined);
    } catch (error) {
      started = Promise.reject(error);
    }
    this.#final = started.then(
      (final) => {
        this.#settle();
        return final;
      },
      (error: unknown) => {
        this.#settle();
        throw error;
      },
    );
    // Handled here, so a caller that never awaits sees no unhandled rejection; final() still rejects.
    this.#final.catch(() => undefined);
  }

  /** The final result; rejects with the typed error, its `partial` holding what arrived. */
  final(): Promise<Final> {
    return this.#final;
  }

  /** True once the stream has ended, successfully or not. */
  get settled(): boolean {
    return this.#settled;
  }

  /**
   * Stops the stream and releases its connection; `final()` rejects with an AbortError (`cause`: the reason) that
   * keeps what arrived. No-op once the stream has ended.
   */
  abort(reason?: unknown): void {
    if (!this.#settled) this.#controller.abort(reason);
  }

  // Each method has two signatures. The first names only the yielded events (`Item`, the same for every protocol's
  // stream) and returns its own `this` type as a type parameter, so it is identical across handles: on a
  // `ChatStream | ResponsesStream | MessagesStream` chosen at run time, `.on('content', ...)` compiles as `for await`
  // does (a signature returning `this` differs per class, and TypeScript calls a union only through identical
  // signatures). The second adds the protocol's own events. The implementation's `never` parameters admit both
  // signatures (it cannot be called from outside); the emitter checks nothing at run time.

  /** Adds a handler for an event, live from now on. */
  on<Self, E extends Item['type']>(this: Self, event: E, handler: (event: Extract<Item, { type: E }>) => void): Self;
  on<E extends StreamEventName<Events>>(event: E, handler: StreamEventHandler<Events, E>): this;
  on(event: never, handler: never): unknown {
    this.#emitter.on(event, handler);
    return this;
  }

  /** Adds a handler for the next occurrence of an event. */
  once<Self, E extends Item['type']>(this: Self, event: E, handler: (event: Extract<Item, { type: E }>) => void): Self;
  once<E extends StreamEventName<Events>>(event: E, handler: StreamEventHandler<Events, E>): this;
  once(event: never, handler: never): unknown {
    this.#emitter.once(event, handler);
    return this;
  }

  /** Removes a handler (every handler of the event when none is given). */
  off<Self, E extends Item['type']>(this: Self, event: E, handler?: (event: Extract<Item, { type: E }>) => void): Self;
  off<E extends StreamEventName<Events>>(event: E, handler?: StreamEventHandler<Events, E>): this;
  off(event: never, handler?: never): unknown {
    this.#emitter.off(event, handler);
    return this;
  }

  /** Every event from the first, then the end or the stream's error. Leaving early aborts a running stream. */
  async *[Symbol.asyncIterator](): AsyncGenerator<Item, void, undefined> {
    let next = 0;
    let finished = false;
    try {
      for (;;) {
        while (next < this.#items.length) yield this.#items[next++] as Item;
        if (this.#settled) break;
        await new Promise<void>((resolve) => this.#waiting.push(resolve));
      }
      finished = true;
    } finally {
      if (!finished) this.abort(new Error('The stream consumer stopped reading'));
    }
    await this.#final;
  }

  /**
   * The events as SSE bytes, for a server to hand to its own client: one `event: <type>` frame per event with the
   * event as JSON data, then `event: done` with no data, or on failure a last `event: error` frame holding
   * `{ name, message, code? }`. Cancelling the readable aborts the stream.
   */
  toReadableStream(): ReadableStream<Uint8Array> {
    const encoder = new TextEncoder();
    const iterator = this[Symbol.asyncIterator]();
    // What encodeSse writes for these frames, without it in every browser bundle: event types are ai4ts's own
    // names and JSON text holds no raw line break, so each frame is one `event:` and one `data:` line.
    const frame = (event: string, data: string) => encoder.encode(`event: ${event}\ndata: ${data}\n\n`);
    return new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        try {
          const next = await iterator.next();
          if (next.done) {
            controller.enqueue(frame('done', ''));
            controller.close();
            return;
          }
          controller.enqueue(frame(next.value.type, JSON.stringify(next.value)));
        } catch (error) {
          controller.enqueue(frame('error', JSON.stringify(errorFrame(toAi4tsError(error)))));
          controller.close();
        }
      },
      cancel: async (reason) => {
        await iterator.return(undefined);
        this.abort(reason);
      },
    });
  }

  #settle(): void {
    this.#settled = true;
    this.#release();
    this.#wake();
  }

  #wake(): void {
    const waiting = this.#waiting;
    if (waiting.length === 0) return;
    this.#waiting = [];
    for (const resolve of waiting) resolve();
  }
}

/** What a client is told about a failure: its class, message and provider code; never a partial or a cause. */
function errorFrame(error: Ai4tsError): { name: string; message: string; code?: string } {
  const code = error instanceof ApiError ? error.code : undefined;
  return code === undefined
    ? { name: error.name, message: error.message }
    : { name: error.name, message: error.message, code };
}

/**
 * Opens the SSE events of one request with the attempt's options merged over the caller's: `signal` aborts it (the
 * caller's signal or the handle's `abort()`); `maxRetries` and `onRetry`, when set, are the stream's retry budget
 * left and its report, so the Transport's retries before the headers count against the stream's one budget.
 */
export type OpenEvents = (attempt: AttemptOptions) => Promise<AsyncIterable<SseEvent>>;

/** What a {@link ListenerStream} sends each attempt with; spread it over the request options. */
export interface AttemptOptions {
  signal: AbortSignal;
  maxRetries?: number;
  onRetry?: OnRetry;
}

/** What a {@link ListenerStream} needs of its listener's emitter: subscribing to the stream events. */
export interface StreamEventSource {
  on(event: StreamEvent['type'], handler: (event: StreamEvent) => void): unknown;
}

/**
 * A stream that failed before its first event is sent again (`on('retry', ...)`; never yielded by iteration).
 * `attempt` is the retry's number (1 for the first), `error` the failure it follows, `delayMs` the wait before it.
 */
export interface RetryEvent {
  type: 'retry';
  attempt: number;
  error: Ai4tsError;
  delayMs: number;
}

/** The `retry` event as an emitter's handler map: every protocol listener's events include it. */
export type RetryEvents = HandlersOf<RetryEvent>;

/** What a {@link ListenerStream} needs of its listener's emitter to report a retry. */
export interface RetryEventTarget {
  emit(event: 'retry', payload: RetryEvent): unknown;
}

/**
 * One step of the tool loop sent through a stream handle: its model events and its `retry` events forwarded to the
 * engine's `emit` when the loop is streamed, and its final result. What every protocol adapter's `send` returns.
 */
export function forwardStep<Final>(
  handle: StreamEventSource & { on(event: 'retry', handler: (event: RetryEvent) => void): unknown; final(): Promise<Final> },
  emit: ((event: StreamEvent | RetryEvent) => void) | undefined,
): Promise<Final> {
  // The engine drops each turn's own `finish`: the loop reports it as `step.finish`.
  if (emit) {
    for (const name of STREAM_EVENT_NAMES) handle.on(name, emit);
    handle.on('retry', emit);
  }
  return handle.final();
}

/**
 * The handlers a {@link ListenerStream}'s listener must offer: the events a model stream yields, which it forwards,
 * and `retry`, which it emits.
 */
export type StreamEventHandlers = HandlersOf<StreamEvent> & RetryEvents;

/**
 * The handle of one streamed model request, for every protocol: it opens the request, reads its events into the
 * protocol's listener with {@link readInto}, and yields the listener's {@link StreamEvent}s. A failure to open
 * (an HTTP status, a refused connection) is recorded by the listener, so `partial` follows the listener's rule.
 * A protocol's stream only names its listener and result.
 *
 * A stream that failed before its first event is sent again when its {@link RetryPolicy} says so (a failure
 * `isRetryableBeforeFirstEvent` accepts, within the budget, after the policy's wait): the failed attempt's `error`
 * event, then `retry` and `onRetry`, then the listener is
 * {@link StreamListener.reset reset} and the request sent anew. The Transport's retries before the headers report
 * through the same `retry` event and `onRetry`, and share the one budget: `retry.maxRetries` retries in all, so at
 * most `maxRetries + 1` requests whatever failed.
 */
export class ListenerStream<
  Listener extends StreamListener<Final> & EventEmitter<Events> & StreamEventSource & RetryEventTarget,
  Final,
  Events extends StreamEventHandlers,
> extends EventStream<StreamEvent, Final, Events> {
  /** The protocol's state, readable at any moment (text so far, tool calls, status, ...). */
  readonly listener: Listener;

  /** The model call this stream is (`Transport.call`), when it is one. */
  readonly #call: ModelCall<Final> | undefined;

  /**
   * @param listener Receives every event; attach handlers to it or to the handle.
   * @param open Sends the request (again for each retry).
   * @param signal The caller's signal; aborting it aborts the stream, a wait between attempts included.
   * @param retry How often and when to retry (`Transport.streamRetry`); none when absent.
   * @param call The model call this stream is (`Transport.call`): its span, outcome log, request id, cost.
   */
  constructor(
    listener: Listener,
    open: OpenEvents,
    signal?: AbortSignal,
    retry?: RetryPolicy,
    call?: ModelCall<Final>,
  ) {
    super(
      async (push, combined) => {
        try {
          const starting = call?.start();
          if (starting) await starting;
          const read = () => {
            call?.transformEvents(listener);
            // Only a span or a middleware's observer watches each event: otherwise no event pays for it.
            const forward = call?.watchesEvents
              ? (event: StreamEvent) => {
                  call.event(event);
                  push(event);
                }
              : push;
            for (const name of STREAM_EVENT_NAMES) listener.on(name, forward);
            return attempts(listener, open, combined, retry, call);
          };
          return call ? call.end(await call.through(read, true, combined)) : await read();
        } catch (error) {
          throw call ? call.fail(error) : error;
        }
      },
      listener,
      signal,
    );
    this.listener = listener;
    this.#call = call;
  }

  /**
   * The HTTP response of the current attempt once its headers arrived: status, headers (secrets redacted) and the
   * provider's request id. Undefined before, and for a handle built without a Transport call.
   */
  get response(): ResponseInfo | undefined {
    return this.#call?.response;
  }
}

/** Sends the request and reads it into the listener, again after a failure before the first event (see above). */
async function attempts<Final>(
  listener: StreamListener<Final> & StreamEventSource & RetryEventTarget & { fail(error: unknown): Ai4tsError },
  open: OpenEvents,
  combined: AbortSignal,
  retry: RetryPolicy | undefined,
  call: ModelCall<Final> | undefined,
): Promise<Final> {
  let retries = 0;
  // The Transport numbers its own attempts; the stream counts every retry of either kind in one budget.
  const report = (failure: Ai4tsError, _attempt: number, delayMs: number) => {
    retries++;
    listener.emit('retry', { type: 'retry', attempt: retries, error: failure, delayMs });
    retry?.onRetry?.(failure, retries, delayMs);
  };
  for (;;) {
    let events: AsyncIterable<SseEvent>;
    try {
      events = await open(
        retry ? { signal: combined, maxRetries: retry.maxRetries - retries, onRetry: report } : { signal: combined },
      );
    } catch (error) {
      // The Transport already retried what fails before the headers.
      throw listener.fail(toAi4tsError(error, { signal: combined }));
    }
    try {
      return await readInto(events, listener, combined);
    } catch (error) {
      const failure = listener.error;
      // Only the listener's own failure; a handler's throw is the caller's.
      const delayMs = failure !== undefined && error === failure ? retry?.retryDelay(failure, retries) : undefined;
      if (failure === undefined || delayMs === undefined) throw error;
      call?.retry(retries + 1, failure.name, delayMs, 'stream');
      report(failure, retries + 1, delayMs);
      // A reset, not a new listener: `listener` is public and holds the caller's handlers.
      listener.reset();
      try {
        await sleep(delayMs, combined);
      } catch (aborted) {
        throw listener.fail(toAi4tsError(aborted, { signal: combined }));
      }
    }
  }
}

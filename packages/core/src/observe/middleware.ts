/**
 * Middleware around each model request of every protocol (`client.use`): a chain of `async (ctx, next) => ...`
 * that can change or replace the request before `next()`, observe or rewrite the streamed events, change the result
 * after it, or answer without calling `next()` (a cache, a guardrail, a mock). The first added runs outermost.
 */
import type { EventEmitter } from 'eventemitter3';
import { Ai4tsError } from '../errors.js';
import { isStreamEventType, type StreamEvent } from '../events.js';

/**
 * Rewrites one normalized event of a streamed answer: return it, a replacement, or several events in its place (an
 * empty array drops it).
 */
export type EventTransform = (event: StreamEvent) => StreamEvent | readonly StreamEvent[];

/** What a middleware sees of one model request. */
export interface ModelContext {
  /** Which API: `chat` (Chat Completions), `responses` or `messages`. */
  readonly protocol: string;
  /**
   * The request as it will be sent: the wire body (SDK fields left off, tools in the protocol's wire form). Change it
   * or replace it before `next()`; replace nested values rather than mutate them, they may be the caller's.
   */
  request: object;
  /** True when the answer streams (a stream handle, or a step of a tool loop, which always streams). */
  readonly stream: boolean;
  /**
   * Observes each normalized event of the answer as it arrives (streams only; a plain request has none). Register
   * before `next()`.
   */
  onEvent(handler: (event: StreamEvent) => void): void;
  /**
   * Rewrites each normalized event of the answer before anyone sees it: the stream's `for await`, its `on()`
   * handlers, the tool loop, `onEvent` observers and the span all get what the transforms return (streams only;
   * register before `next()`). The transforms of several middleware apply innermost first.
   *
   * The result `next()` resolves to is read from the wire, not from the events: a transform that changes what the
   * events say (a text delta, a tool call) must change the result the same way, and keep each event's `snapshot`
   * the sum of the deltas it yields, so that what was streamed and the final result agree.
   */
  transformEvents(transform: EventTransform): void;
}

/**
 * A middleware: call `next()` to send the (possibly changed) request and get the protocol's result, return that
 * result or another of the same protocol; or return one without calling `next()`. `next()` may be called once.
 * Declared with method syntax so a middleware typed for the protocols' contexts (the front door's `Middleware`)
 * fits: the context's `protocol` always matches its request and result.
 */
export type ModelMiddleware = {
  handle(ctx: ModelContext, next: () => Promise<unknown>): Promise<unknown>;
}['handle'];

/** Runs `middleware` around `send`, outermost first; `send` reads the request the chain left in `ctx`. */
export function runMiddleware(
  middleware: readonly ModelMiddleware[],
  ctx: ModelContext,
  send: () => Promise<unknown>,
): Promise<unknown> {
  const dispatch = (index: number): Promise<unknown> => {
    const current = middleware[index];
    if (!current) return send();
    let called = false;
    return current(ctx, () => {
      if (called) return Promise.reject(new Ai4tsError('A middleware called next() twice'));
      called = true;
      return dispatch(index + 1);
    });
  };
  return dispatch(0);
}

/**
 * Makes `emitter` (a protocol listener) emit each stream event through `transforms`, in order, so that every
 * subscriber gets the rewritten events. Installed on the one emitter of a call only when a middleware registered a
 * transform: a stream without one keeps the prototype's `emit`, and its events pay nothing.
 */
export function transformEmits<Events extends EventEmitter.ValidEventTypes>(
  emitter: EventEmitter<Events>,
  transforms: readonly EventTransform[],
): void {
  // An emitter's typed `emit` cannot be replaced through its handler map: one cast to the untyped one.
  const target = emitter as unknown as EventEmitter<string>;
  const emit = target.emit.bind(target);
  target.emit = (name, ...args) => {
    if (!isStreamEventType(name)) return emit(name, ...args);
    let events: readonly StreamEvent[] = [args[0]];
    for (const transform of transforms) events = events.flatMap((event) => transform(event));
    for (const event of events) emit(event.type, event);
    return true;
  };
}

/**
 * Middleware around each model request of every protocol (`client.use`): a chain of `async (ctx, next) => ...`
 * that can change or replace the request before `next()`, observe the streamed events, change the result after
 * it, or answer without calling `next()` (a cache, a guardrail, a mock). The first added runs outermost.
 */
import { Ai4tsError } from '../errors.js';
import type { StreamEvent } from '../events.js';

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

/**
 * The gateway: Chat Completions, Responses, Messages and Gemini in front of daemons (their own SSE dialects) and
 * providers (any of the four protocols), as a node:http listener and a fetch handler.
 *
 * The options are resolved once into a context (context.ts: the routes, the bearer check, the upstream calls, tokens
 * in private fields); http/route.ts answers a request with a reply, or an error reply; the node and fetch adapters
 * (http/adapters.ts) read their server's request and send the reply.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type GatewayOptions, resolveContext } from './context.js';
import { serveFetch, serveNode } from './http/adapters.js';
import type { UpstreamHealth } from './upstreams/health.js';
import type { RouteSpec } from './upstreams/router.js';

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref?.());
}

/** Resolves true as soon as `done()` holds (checked every 20 ms), or false after `ms`. */
async function within(ms: number, done: () => boolean): Promise<boolean> {
  const end = Date.now() + ms;
  while (!done()) {
    if (Date.now() >= end) return false;
    await sleep(20);
  }
  return true;
}

/** The gateway's two handlers: a node:http request listener and a fetch handler. */
export interface Gateway {
  /** For `http.createServer(gateway.node)`. A client that disconnects aborts the upstream request. */
  node(req: IncomingMessage, res: ServerResponse): void;
  /** For fetch-style servers; `request.signal` or cancelling the body aborts the upstream request. */
  fetch(request: Request): Promise<Response>;
  /**
   * Starts a graceful shutdown: `/readyz` answers 503 and new requests a 503 `shutting_down` (reconnections to
   * resumable streams are still served). Resolves true once no stream is in flight, or false after `ms`.
   */
  drain(ms: number): Promise<boolean>;
  /**
   * Lets the resumable generations still running finish into the store for up to `ms`, aborts the rest (their
   * streams end with an in-stream error), and releases the store.
   */
  finish(ms: number): Promise<void>;
  /**
   * Each upstream of each route as it is now: `healthy`, `cooling` (skipped until `cooldownUntil`) or `half-open`,
   * its recent failures, its answers in flight and the EWMA of its time to first event (docs/operations.md).
   */
  health(): UpstreamHealth[];
  /**
   * Replaces the routes while the gateway runs (a routing file read again, docs/operations.md): new requests take
   * the new routes, requests already routed (streams in flight) keep their upstream. Throws a RangeError when a
   * route cannot be built (a preset without its key); the routes in use then stay.
   */
  setRoutes(routes: readonly RouteSpec[]): void;
}

/**
 * Creates the gateway. See docs/gateway.md and docs/proxy.md for the routes, auth, errors and session ids. No token
 * (`auth`, `upstreamToken`, a preset's key) ever appears in a reply, an error or a log line of the gateway.
 */
export function createGateway(options: GatewayOptions): Gateway {
  const context = resolveContext(options);
  return {
    node: (req, res) => serveNode(context, req, res),
    fetch: (request) => serveFetch(context, request),
    drain: (ms) => {
      context.draining = true;
      return within(ms, () => context.streams.open === 0);
    },
    finish: async (ms) => {
      await Promise.race([context.generations.idle(), sleep(ms)]);
      context.generations.abortAll(new Error('The gateway shut down before the answer was complete'));
      await within(1000, () => context.generations.size === 0);
      await context.store.close();
      await context.keys?.store.close();
      await context.keys?.counters.close();
    },
    health: () => context.router.health(),
    setRoutes: (routes) => context.setRoutes(routes),
  };
}

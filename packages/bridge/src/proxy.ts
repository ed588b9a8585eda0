/**
 * An OpenAI-compatible endpoint in front of a daemon that streams its own SSE dialect:
 * `POST /v1/chat/completions` (streaming converts live, non-streaming aggregates) and `GET /v1/models`.
 *
 * The options are resolved once into a context (proxy/context.ts: the dialect, the bearer check and the upstream
 * call, tokens in private fields); proxy/route.ts answers a request with a reply, or an error reply; the node and
 * fetch adapters (proxy/adapters.ts) read their server's request and send the reply.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type OpenAIProxyOptions, resolveContext } from './proxy/context.js';
import { serveFetch, serveNode } from './proxy/adapters.js';

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

export type { OpenAIProxyOptions } from './proxy/context.js';
export { DEFAULT_MAX_CONCURRENT_STREAMS } from './proxy/streams.js';
export { DEFAULT_UPSTREAM_TIMEOUTS, type UpstreamTimeouts } from './proxy/timeouts.js';

/** The proxy's two faces: a node:http request listener and a fetch handler. */
export interface OpenAIProxy {
  /** For `http.createServer(proxy.node)`. A client that disconnects aborts the upstream request. */
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
}

/**
 * Creates the proxy. See docs/proxy.md for the routes, auth, errors and session ids. No token (`auth`,
 * `upstreamToken`) ever appears in a reply, an error or a log line of the proxy.
 */
export function createOpenAIProxy(options: OpenAIProxyOptions): OpenAIProxy {
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
    },
  };
}

/**
 * A request and its reply as the routes see them, whichever server received the request: the adapters (node:http,
 * fetch) build an {@link Incoming} and send the {@link Reply}, so that routing knows neither server.
 */
import type { SseMessage } from '@ai4ts/sse';

/** What a route answers; the adapters turn it into their server's response. */
export interface Reply {
  status: number;
  headers: Record<string, string>;
  /** A JSON body. */
  body?: unknown;
  /** A text body (the metrics), its `content-type` in the headers. */
  text?: string;
  /** An SSE body (status 200): the adapters stream it with heartbeats. */
  stream?: AsyncIterable<SseMessage>;
  /**
   * HTTP trailers of the stream, by name: each value read once its last message is out, and left out when undefined.
   * Only the node:http adapter sends them (a fetch `Response` has no trailers).
   */
  trailers?: Record<string, () => string | undefined>;
}

/** A request as the routes read it, whichever server received it. */
export interface Incoming {
  method: string;
  path: string;
  /** The query string's parameters (Gemini's `alt=sse` and `key=`); never logged: a key may be among them. */
  query: URLSearchParams;
  /** `http` or `https`, as the server received it. */
  scheme: string;
  header(name: string): string | undefined;
  /** The body, at most `MAX_BODY_BYTES` (http/limits.ts); rejects with a 413 HttpError beyond. */
  text(): Promise<string>;
}

/**
 * The proxy's options resolved once into a context that the routing, the upstream call and the two server adapters
 * share; the tokens live in `#private` fields, so that the context can be logged or inspected without showing them.
 */
import type { SseMessage } from '@ai4ts/sse';
import type { Dialect } from '../dialect.js';
import { namedEventDialect } from '../dialects/named.js';
import { typedEventDialect } from '../dialects/typed.js';
import type { OpenAIErrorObject } from '../writers.js';
import { StreamSlots } from './streams.js';
import { resolveUpstreamTimeouts, type UpstreamTimeouts } from './timeouts.js';

/** Options of {@link createOpenAIProxy}. */
export interface OpenAIProxyOptions {
  /** The daemon's URL; each chat request is one POST to it. */
  upstream: string | URL;
  /** The daemon's dialect: a built-in one by name, or your own from `defineDialect()`. */
  dialect: 'typed' | 'named' | Dialect;
  /** Bearer token(s) clients must send. Omit for no auth (then keep the proxy on 127.0.0.1). */
  auth?: string | readonly string[];
  /** Sent upstream as `Authorization: Bearer <token>`. The client's own token never goes upstream. */
  upstreamToken?: string;
  /** The model `/v1/models` lists; `'daemon'` by default. Completions echo the model the request named. */
  model?: string;
  /** An origin allowed by CORS (`'*'` for any). CORS is off when omitted. */
  cors?: string;
  /** Milliseconds between SSE heartbeat comments; default 15000, 0 turns them off. */
  heartbeatMs?: number;
  /** The fetch used to reach the daemon; the global one by default. */
  fetch?: typeof fetch;
  /** How long to wait on the daemon (headers, first event, between events); see {@link UpstreamTimeouts}. */
  upstreamTimeouts?: UpstreamTimeouts;
  /**
   * Streaming answers served at once; past it a stream request gets a 503 with `Retry-After` and the daemon is not
   * contacted. Default 256; `Infinity` for no cap.
   */
  maxConcurrentStreams?: number;
}

/** Largest request body accepted. */
export const MAX_BODY_BYTES = 4 * 1024 * 1024;

/** What a route answers; the adapters turn it into their server's response. */
export interface Reply {
  status: number;
  headers: Record<string, string>;
  /** A JSON body. */
  body?: unknown;
  /** An SSE body (status 200): the adapters stream it with heartbeats. */
  stream?: AsyncIterable<SseMessage>;
}

/** A request as the routes read it, whichever server received it. */
export interface Incoming {
  method: string;
  path: string;
  header(name: string): string | undefined;
  /** The body, at most {@link MAX_BODY_BYTES}; rejects with a 413 HttpError beyond. */
  text(): Promise<string>;
}

/** A failure the proxy answers itself, with its status and an OpenAI error object. */
export class HttpError extends Error {
  override name = 'HttpError';
  readonly status: number;
  readonly error: OpenAIErrorObject;
  readonly headers: Record<string, string>;

  constructor(status: number, error: OpenAIErrorObject, headers: Record<string, string> = {}) {
    super(error.message);
    this.status = status;
    this.error = error;
    this.headers = headers;
  }
}

/** An `invalid_request_error` object. */
export function invalid(message: string, param: string | null = null, code: string | null = null): OpenAIErrorObject {
  return { message, type: 'invalid_request_error', param, code };
}

/** The 413 for a body over {@link MAX_BODY_BYTES}. */
export function tooLarge(): HttpError {
  return new HttpError(413, invalid(`The request body exceeds ${MAX_BODY_BYTES} bytes`, null, 'request_too_large'));
}

/** The bearer tokens clients must send, or none (an open proxy). */
export class BearerAuth {
  readonly #tokens: readonly string[] | undefined;

  constructor(auth: string | readonly string[] | undefined) {
    this.#tokens = auth === undefined ? undefined : typeof auth === 'string' ? [auth] : [...auth];
  }

  /** The tokens, for scrubbing them from anything the proxy sends. */
  get secrets(): readonly string[] {
    return this.#tokens ?? [];
  }

  /**
   * Checks an `Authorization` header. Throws a 401 that names neither the token sent nor the ones expected; every
   * token is compared in full, in time that depends only on the lengths.
   */
  check(header: string | undefined): void {
    if (!this.#tokens) return;
    const token = /^Bearer\s+(.+)$/i.exec(header ?? '')?.[1]?.trim() ?? '';
    let accepted = false;
    for (const expected of this.#tokens) accepted = sameText(expected, token) || accepted;
    if (!accepted)
      throw new HttpError(401, invalid('Incorrect or missing bearer token', null, 'invalid_api_key'), {
        'www-authenticate': 'Bearer',
      });
  }
}

/** Compares two tokens in time that depends only on their lengths. */
function sameText(a: string, b: string): boolean {
  let diff = a.length ^ b.length;
  for (let i = 0; i < Math.max(a.length, b.length); i++) diff |= (a.charCodeAt(i) | 0) ^ (b.charCodeAt(i) | 0);
  return diff === 0;
}

/** The daemon: where it is, its dialect, and the token it is sent. */
export class Upstream {
  readonly url: string | URL;
  readonly dialect: Dialect;
  readonly #token: string | undefined;
  readonly #fetch: typeof fetch;

  constructor(options: OpenAIProxyOptions) {
    this.url = options.upstream;
    this.dialect =
      options.dialect === 'typed'
        ? typedEventDialect
        : options.dialect === 'named'
          ? namedEventDialect
          : options.dialect;
    this.#token = options.upstreamToken || undefined;
    this.#fetch = options.fetch ?? fetch;
  }

  /** The upstream token, for scrubbing it from what the daemon echoes. */
  get secrets(): readonly string[] {
    return this.#token === undefined ? [] : [this.#token];
  }

  /** Posts one request body to the daemon, asking for SSE; rejects as `fetch` does. */
  post(body: unknown, signal: AbortSignal): Promise<Response> {
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'text/event-stream' };
    if (this.#token !== undefined) headers.authorization = `Bearer ${this.#token}`;
    return this.#fetch(this.url, { method: 'POST', headers, body: JSON.stringify(body), signal });
  }
}

/** Everything a request needs, resolved once from the options. */
export interface ProxyContext {
  readonly upstream: Upstream;
  readonly auth: BearerAuth;
  /** Every token the proxy knows: never in an error, a log or a response. */
  readonly secrets: readonly string[];
  /** The model `/v1/models` lists. */
  readonly model: string;
  /** Whether preflight `OPTIONS` is answered. */
  readonly cors: boolean;
  /** Headers added to every reply (the CORS ones, when configured). */
  readonly headers: Readonly<Record<string, string>>;
  readonly heartbeatMs: number | undefined;
  readonly timeouts: Required<UpstreamTimeouts>;
  /** The streams in flight, against `maxConcurrentStreams`. */
  readonly streams: StreamSlots;
}

/** Resolves the options into the context every request shares. */
export function resolveContext(options: OpenAIProxyOptions): ProxyContext {
  const upstream = new Upstream(options);
  const auth = new BearerAuth(options.auth);
  const headers: Record<string, string> = options.cors
    ? {
        'access-control-allow-origin': options.cors,
        'access-control-expose-headers': 'x-session-id, retry-after',
        ...(options.cors === '*' ? {} : { vary: 'Origin' }),
      }
    : {};
  return {
    upstream,
    auth,
    secrets: [...auth.secrets, ...upstream.secrets],
    model: options.model ?? 'daemon',
    cors: Boolean(options.cors),
    headers,
    heartbeatMs: options.heartbeatMs,
    timeouts: resolveUpstreamTimeouts(options.upstreamTimeouts),
    streams: new StreamSlots(options.maxConcurrentStreams),
  };
}

/**
 * The proxy's options resolved once into a context that the routing, the upstream call and the two server adapters
 * share; the tokens live in `#private` fields, so that the context can be logged or inspected without showing them.
 */
import type { SseMessage } from '@ai4ts/sse';
import type { ProviderName } from '@ai4ts/core';
import type { Dialect } from '../dialect.js';
import type { GatewayProtocol } from '../gateway/neutral.js';
import type { AccessLogEntry } from '../gateway/log.js';
import { Generations } from '../gateway/generations.js';
import { GatewayTelemetry, type GatewayTelemetryOptions } from '../gateway/telemetry.js';
import { MemoryStreamStore, type StreamStore } from '../gateway/store.js';
import { type RouteSpec, Router } from '../gateway/upstreams.js';
import type { OpenAIErrorObject } from '../writers.js';
import { StreamSlots } from './streams.js';
import { resolveUpstreamTimeouts, type UpstreamTimeouts } from './timeouts.js';

/** Options of {@link createOpenAIProxy}: the gateway in front of daemons and providers. */
export interface OpenAIProxyOptions {
  /**
   * The upstream's URL: a daemon's (with `dialect`; each request is one POST to it) or a provider's API root with its
   * version (with `upstreamProtocol`; `https://api.openai.com/v1`). Optional when `provider` or `routes` say where.
   */
  upstream?: string | URL;
  /** The daemon's dialect: a built-in one by name, or your own from `defineDialect()`. */
  dialect?: 'typed' | 'named' | Dialect;
  /** The protocol a provider upstream speaks; requests in any protocol are translated to it. */
  upstreamProtocol?: GatewayProtocol;
  /** A provider preset of @ai4ts/core (`openai`, `anthropic`, ...) as the upstream, its key from its variable. */
  provider?: ProviderName;
  /** The model name sent to a provider upstream; the client's by default. */
  upstreamModel?: string;
  /** Routes by model pattern, tried in order before the upstream above (docs/gateway.md, "Routing"). */
  routes?: readonly RouteSpec[];
  /** Bearer token(s) clients must send. Omit for no auth (then keep the proxy on 127.0.0.1). */
  auth?: string | readonly string[];
  /** The upstream's token or API key. The client's own token never goes upstream. */
  upstreamToken?: string;
  /** The model `/v1/models` lists first; `'daemon'` by default. Answers echo the model the request named. */
  model?: string;
  /** An origin allowed by CORS (`'*'` for any). CORS is off when omitted. */
  cors?: string;
  /** Milliseconds between SSE heartbeat comments; default 15000, 0 turns them off. */
  heartbeatMs?: number;
  /** The fetch used to reach the upstream; the global one by default. */
  fetch?: typeof fetch;
  /** How long to wait on the upstream (headers, first event, between events); see {@link UpstreamTimeouts}. */
  upstreamTimeouts?: UpstreamTimeouts;
  /**
   * Streaming answers served at once; past it a stream request gets a 503 with `Retry-After` and the daemon is not
   * contacted. Default 256; `Infinity` for no cap.
   */
  maxConcurrentStreams?: number;
  /** Every stream resumable, as if each request sent `x-ai4ts-resumable: 1` (docs/gateway.md, "Resumable streams"). */
  resumable?: boolean;
  /** Where resumable streams are kept; an in-memory store by default. */
  store?: StreamStore;
  /** Receives one access-log entry per request (no key is ever in one). */
  log?: (entry: AccessLogEntry) => void;
  /**
   * OpenTelemetry spans and metrics: a SERVER span per request under the caller's `traceparent`, and the upstream
   * call's `chat {model}` span under it (docs/observability.md, "The gateway"). Off when omitted; needs the
   * `@opentelemetry/api` package, which is loaded only then.
   */
  telemetry?: GatewayTelemetryOptions;
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
  /** `http` or `https`, as the server received it. */
  scheme: string;
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

/** The default route of the options: the upstream they name, for any model. */
function defaultRoute(options: OpenAIProxyOptions): RouteSpec | undefined {
  const { upstream, dialect, upstreamProtocol, provider, upstreamToken, upstreamModel } = options;
  if (provider !== undefined) return { model: '*', provider, upstreamToken, upstreamModel };
  if (upstream === undefined) return undefined;
  if (dialect !== undefined) return { model: '*', upstream, dialect, upstreamToken };
  if (upstreamProtocol !== undefined) return { model: '*', upstream, protocol: upstreamProtocol, upstreamToken, upstreamModel };
  throw new RangeError('upstream needs a dialect (a daemon) or an upstreamProtocol (a provider)');
}

/** Everything a request needs, resolved once from the options. */
export interface ProxyContext {
  /** The upstream of each model. */
  readonly router: Router;
  readonly auth: BearerAuth;
  /** Every token the proxy knows: never in an error, a log or a response. */
  readonly secrets: readonly string[];
  /** The models `/v1/models` lists. */
  readonly models: readonly string[];
  /** Whether preflight `OPTIONS` is answered. */
  readonly cors: boolean;
  /** Headers added to every reply (the CORS ones, when configured). */
  readonly headers: Readonly<Record<string, string>>;
  readonly heartbeatMs: number | undefined;
  readonly timeouts: Required<UpstreamTimeouts>;
  /** The streams in flight, against `maxConcurrentStreams`. */
  readonly streams: StreamSlots;
  /** Whether every stream is resumable. */
  readonly resumable: boolean;
  readonly store: StreamStore;
  readonly log: ((entry: AccessLogEntry) => void) | undefined;
  /** The resumable generations in flight. */
  readonly generations: Generations;
  /** Telemetry, once `@opentelemetry/api` is loaded; undefined when off. */
  readonly telemetry: Promise<GatewayTelemetry> | undefined;
  /** Set on shutdown: `/readyz` answers 503 and new requests are refused. */
  draining: boolean;
}

/** Resolves the options into the context every request shares. */
export function resolveContext(options: OpenAIProxyOptions): ProxyContext {
  const fallback = defaultRoute(options);
  const routes = [...(options.routes ?? []), ...(fallback ? [fallback] : [])];
  if (routes.length === 0) throw new RangeError('Give an upstream (with a dialect or an upstreamProtocol), a provider or routes');
  const router = new Router(routes, options.fetch ?? ((input, init) => fetch(input, init)));
  const auth = new BearerAuth(options.auth);
  const headers: Record<string, string> = options.cors
    ? {
        'access-control-allow-origin': options.cors,
        'access-control-expose-headers': 'x-session-id, retry-after',
        ...(options.cors === '*' ? {} : { vary: 'Origin' }),
      }
    : {};
  return {
    router,
    auth,
    secrets: [...auth.secrets, ...router.secrets],
    models: [
      ...new Set([options.model ?? 'daemon', ...routes.map((route) => route.model).filter((model) => !model.includes('*'))]),
    ],
    cors: Boolean(options.cors),
    headers,
    heartbeatMs: options.heartbeatMs,
    timeouts: resolveUpstreamTimeouts(options.upstreamTimeouts),
    streams: new StreamSlots(options.maxConcurrentStreams),
    resumable: options.resumable === true,
    store: options.store ?? new MemoryStreamStore(),
    log: options.log,
    generations: new Generations(),
    telemetry: options.telemetry && loadTelemetry(options.telemetry),
    draining: false,
  };
}

/** Starts loading `@opentelemetry/api`; a failure (not installed) fails each request with a 500 that says why. */
function loadTelemetry(options: GatewayTelemetryOptions): Promise<GatewayTelemetry> {
  const loading = GatewayTelemetry.load(options).catch((error: unknown) => {
    const message = error instanceof Error ? error.message : String(error);
    throw new HttpError(500, { message, type: 'server_error', param: null, code: 'telemetry_unavailable' });
  });
  loading.catch(() => undefined); // not unhandled before the first request
  return loading;
}

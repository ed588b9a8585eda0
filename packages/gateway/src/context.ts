/**
 * The gateway's options resolved once into a context that the routing, the upstream calls and the two server adapters
 * share; the tokens live in `#private` fields (http/auth.ts, upstreams/targets.ts), so that the context can be logged
 * or inspected without showing them.
 */
import type { Dialect } from '@ai4ts/bridge';
import { type Backoff, DEFAULT_PRICES, type Prices, type ProviderName, type ProviderPreset } from '@ai4ts/core';
import type { GatewayProtocol } from './codecs/neutral.js';
import { BearerAuth } from './http/auth.js';
import type { AccessLogEntry } from './http/access-log.js';
import { HttpError } from './http/errors.js';
import { KeyGate, type KeysOptions } from './keys/gate.js';
import { MemoryKeyCounters } from './keys/limits.js';
import { StreamSlots } from './http/limits.js';
import { Generations } from './state/generations.js';
import { GatewayMetrics, type GatewayMetricsOptions } from './metrics.js';
import { MemoryStreamStore } from './state/memory.js';
import { MemoryResponseStore, type ResponseStore } from './state/responses.js';
import type { StreamStore } from './state/store.js';
import { GatewayTelemetry, type GatewayTelemetryOptions } from './telemetry.js';
import { type RouteSpec, Router } from './upstreams/router.js';
import type { OnUnsupported, UpstreamCalls } from './upstreams/targets.js';
import { type ResolvedUpstreamTimeouts, resolveUpstreamTimeouts, type UpstreamTimeouts } from './upstreams/timeouts.js';

/** Options of {@link createGateway}: the gateway in front of daemons and providers. */
export interface GatewayOptions {
  /**
   * The upstream's URL: a daemon's (with `dialect`; each request is one POST to it) or a provider's API root with its
   * version (with `upstreamProtocol`; `https://api.openai.com/v1`). Optional when `provider` or `routes` say where.
   */
  upstream?: string | URL;
  /** The daemon's dialect: a built-in one by name, or your own from `defineDialect()`. */
  dialect?: 'typed' | 'named' | Dialect;
  /** The protocol a provider upstream speaks; requests in any protocol are translated to it. */
  upstreamProtocol?: GatewayProtocol;
  /**
   * A provider preset of @ai4ts/core (`openai`, `anthropic`, ...), or a preset object, as the upstream: its URL, its
   * declared protocol, its auth style, and its key from its variable.
   */
  provider?: ProviderName | ProviderPreset;
  /** The model name sent to a provider upstream; the client's by default. */
  upstreamModel?: string;
  /**
   * What the upstream above does with a request field its protocol has no equivalent for: `'drop'` (the default)
   * sends the rest and names the field in `x-ai4ts-dropped`; `'refuse'` answers a 400 naming it. Routes set their own.
   */
  onUnsupported?: OnUnsupported;
  /** Routes by model pattern, tried in order before the upstream above (docs/gateway.md, "Routing"). */
  routes?: readonly RouteSpec[];
  /** Bearer token(s) clients must send. Omit for no auth (then keep the gateway on 127.0.0.1). */
  auth?: string | readonly string[];
  /** The upstream's token or API key. The client's own token never goes upstream. */
  upstreamToken?: string;
  /** The model `/v1/models` lists first; `'daemon'` by default. Answers echo the model the request named. */
  model?: string;
  /** An origin allowed by CORS (`'*'` for any). CORS is off when omitted. */
  cors?: string;
  /** Milliseconds between SSE heartbeat comments; default 15000, 0 turns them off. */
  heartbeatMs?: number;
  /** The fetch used to reach the upstream (a provider's through its Transport); the global one by default. */
  fetch?: typeof fetch;
  /** How long to wait on the upstream (headers, first event, between events); see {@link UpstreamTimeouts}. */
  upstreamTimeouts?: UpstreamTimeouts;
  /**
   * Retries of a provider upstream before its response headers, by core's Transport: after a connection error, 408,
   * 409, 429 or 5xx, waiting its Retry-After or the backoff. Default 2 retries; a daemon is never retried.
   */
  upstreamRetry?: UpstreamRetry;
  /**
   * Streaming answers served at once; past it a stream request gets a 503 with `Retry-After` and the daemon is not
   * contacted. Default 256; `Infinity` for no cap.
   */
  maxConcurrentStreams?: number;
  /** Every stream resumable, as if each request sent `x-ai4ts-resumable: 1` (docs/gateway.md, "Resumable streams"). */
  resumable?: boolean;
  /** Where resumable streams are kept; an in-memory store by default. */
  store?: StreamStore;
  /**
   * Where stored Responses are kept (docs/gateway.md, "Stored responses"): by default the stream store's own (Redis's,
   * on its connection), else this process's memory.
   */
  responseStore?: ResponseStore;
  /** Receives one access-log entry per request (no key is ever in one). */
  log?: (entry: AccessLogEntry) => void;
  /**
   * OpenTelemetry spans and metrics: a SERVER span per request under the caller's `traceparent`, and the upstream
   * call's `chat {model}` span under it (docs/observability.md, "The gateway"). Off when omitted; needs the
   * `@opentelemetry/api` package, which is loaded only then.
   */
  telemetry?: GatewayTelemetryOptions;
  /**
   * Virtual keys, each with its models, limits and budget (docs/operations.md, "Virtual keys"). With keys, every
   * request presents a virtual key or the `auth` token: the gateway is never open.
   */
  keys?: KeysOptions;
  /** The bearer token of the admin API (`/admin/keys`); without it the admin API answers 404. */
  adminToken?: string;
  /** Prices in USD per million tokens, for costs and budgets; core's `DEFAULT_PRICES` by default. */
  prices?: Prices;
  /**
   * Prometheus metrics on `GET /metrics` (docs/operations.md, "Metrics"): `true`, or where to serve them, into which
   * prom-client registry and behind which token. Off when omitted; `prom-client` is loaded only then.
   */
  metrics?: true | GatewayMetricsOptions;
}

/** How a provider upstream is retried before its headers: core's `maxRetries` and `backoff`. */
export interface UpstreamRetry {
  /** Retries after the first attempt; default 2, 0 for none. */
  maxRetries?: number;
  /** The wait when the upstream sends no Retry-After: 500 ms doubling up to 8 s by default. */
  backoff?: Backoff;
}

/** The default route of the options: the upstream they name, for any model. */
function defaultRoute(options: GatewayOptions): RouteSpec | undefined {
  const { upstream, dialect, upstreamProtocol, provider, upstreamToken, upstreamModel, onUnsupported } = options;
  if (provider !== undefined) return { model: '*', provider, upstreamToken, upstreamModel, onUnsupported };
  if (upstream === undefined) return undefined;
  if (dialect !== undefined) return { model: '*', upstream, dialect, upstreamToken };
  if (upstreamProtocol !== undefined)
    return { model: '*', upstream, protocol: upstreamProtocol, upstreamToken, upstreamModel, onUnsupported };
  throw new RangeError('upstream needs a dialect (a daemon) or an upstreamProtocol (a provider)');
}

/** Everything a request needs, resolved once from the options. */
export interface GatewayContext {
  /** The upstreams of each model, replaced as a whole by {@link GatewayContext.setRoutes}; `router.health()` reads each upstream's health (cooldowns, in flight, latency). */
  readonly router: Router;
  readonly auth: BearerAuth;
  /** Every token the gateway knows, read each time (access tokens change): never in an error, a log or a response. */
  readonly secrets: readonly string[];
  /** The models `/v1/models` lists. */
  readonly models: readonly string[];
  /**
   * Replaces the routes (the options' upstream stays the last one). Requests already routed keep their upstream; a
   * route that cannot be built throws, and the routes in use stay.
   */
  setRoutes(routes: readonly RouteSpec[]): void;
  /** Whether preflight `OPTIONS` is answered. */
  readonly cors: boolean;
  /** Headers added to every reply (the CORS ones, when configured). */
  readonly headers: Readonly<Record<string, string>>;
  readonly heartbeatMs: number | undefined;
  readonly timeouts: ResolvedUpstreamTimeouts;
  /** The streams in flight, against `maxConcurrentStreams`. */
  readonly streams: StreamSlots;
  /** Whether every stream is resumable. */
  readonly resumable: boolean;
  readonly store: StreamStore;
  readonly responses: ResponseStore;
  /** Receives each finished request: the access log and the metrics. */
  readonly log: ((entry: AccessLogEntry) => void) | undefined;
  /** The Prometheus metrics; undefined when off. */
  readonly metrics: GatewayMetrics | undefined;
  /** The resumable generations in flight. */
  readonly generations: Generations;
  /** Telemetry, once `@opentelemetry/api` is loaded; undefined when off. */
  readonly telemetry: Promise<GatewayTelemetry> | undefined;
  /** The virtual keys; undefined when the gateway has none. */
  readonly keys: KeyGate | undefined;
  /** The admin API's token check; undefined when the admin API is off. */
  readonly admin: BearerAuth | undefined;
  readonly prices: Prices;
  /** Set on shutdown: `/readyz` answers 503 and new requests are refused. */
  draining: boolean;
  /**
   * Whether a provider's error status reaches the client as it is. A server's clients get a 502 for any failure
   * that is not theirs (the gateway's key, the provider's outage); in-process translation's caller is the key's
   * owner, whose client reads the provider's own status (a 401, a 404 model) as it would without translation.
   */
  readonly relayUpstreamStatus: boolean;
}

/** Resolves the options into the context every request shares; `relayUpstreamStatus` for in-process translation. */
export function resolveContext(options: GatewayOptions, relayUpstreamStatus = false): GatewayContext {
  const fallback = defaultRoute(options);
  const calls: UpstreamCalls = { fetch: options.fetch ?? ((input, init) => fetch(input, init)), ...options.upstreamRetry };
  /** The keys of routes replaced by {@link GatewayContext.setRoutes}. */
  const retired = new Set<string>();
  let table = routingTable(options, fallback ? [...(options.routes ?? []), fallback] : (options.routes ?? []), calls);
  // With virtual keys and no static token, no request passes without a key.
  const auth = new BearerAuth(options.auth ?? (options.keys ? [] : undefined));
  const admin = options.adminToken === undefined ? undefined : new BearerAuth(options.adminToken);
  const prices = options.prices ?? DEFAULT_PRICES;
  const headers: Record<string, string> = options.cors
    ? {
        'access-control-allow-origin': options.cors,
        'access-control-expose-headers': [
          'x-session-id, retry-after, x-ai4ts-upstream, x-ai4ts-attempts, x-ai4ts-cost',
          // A virtual key's limits (keys/gate.ts), as OpenAI names them.
          'x-ratelimit-limit-requests, x-ratelimit-remaining-requests, x-ratelimit-reset-requests',
          'x-ratelimit-limit-tokens, x-ratelimit-remaining-tokens, x-ratelimit-reset-tokens',
        ].join(', '),
        ...(options.cors === '*' ? {} : { vary: 'Origin' }),
      }
    : {};
  const streams = new StreamSlots(options.maxConcurrentStreams);
  const store = options.store ?? new MemoryStreamStore();
  const metrics =
    options.metrics &&
    new GatewayMetrics(options.metrics === true ? {} : options.metrics, {
      streams: () => streams.open,
      storeReady: () => store.ready(),
      models: () => table.models,
      health: () => table.router.health(),
    });
  const { log } = options;
  return {
    get router() {
      return table.router;
    },
    get models() {
      return table.models;
    },
    setRoutes(routes) {
      const next = routingTable(options, fallback ? [...routes, fallback] : routes, calls);
      // A request routed before the swap may still fail with its upstream's key in hand: that key stays a secret.
      for (const secret of table.router.secrets) retired.add(secret);
      table = next;
    },
    auth,
    // Read when used: an upstream's access token changes while the gateway runs.
    get secrets() {
      return [...auth.secrets, ...(admin?.secrets ?? []), ...table.router.secrets, ...retired, ...(metrics?.secrets ?? [])];
    },
    cors: Boolean(options.cors),
    headers,
    heartbeatMs: options.heartbeatMs,
    timeouts: resolveUpstreamTimeouts(options.upstreamTimeouts),
    streams,
    resumable: options.resumable === true,
    store,
    responses: options.responseStore ?? options.store?.responses?.() ?? new MemoryResponseStore(),
    log: metrics
      ? (entry) => {
          log?.(entry);
          metrics.observe(entry);
        }
      : log,
    metrics,
    generations: new Generations(),
    telemetry: options.telemetry && loadTelemetry(options.telemetry),
    keys: options.keys && new KeyGate(options.keys.store, options.keys.counters ?? new MemoryKeyCounters(), prices),
    admin,
    prices,
    draining: false,
    relayUpstreamStatus,
  };
}

/** The routes built into their router, and the models `/v1/models` lists from them. */
function routingTable(options: GatewayOptions, routes: readonly RouteSpec[], calls: UpstreamCalls): { router: Router; models: readonly string[] } {
  if (routes.length === 0) throw new RangeError('Give an upstream (with a dialect or an upstreamProtocol), a provider or routes');
  const router = new Router(routes, calls);
  // Only what a POST would route: `daemon` is not listed when no route serves it.
  const models = [
    ...new Set([options.model ?? 'daemon', ...routes.map((route) => route.model).filter((model) => !model.includes('*'))]),
  ].filter((model) => router.pick(model) !== undefined);
  return { router, models };
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

/**
 * The gateway's Prometheus metrics. They observe each finished access-log entry, so that a feature (keys, fallbacks,
 * cost) only fills the entry's fields, plus what is read when scraped: streams in flight, the store's readiness, and
 * each upstream's health (its state, answers in flight, latency, failures and cooldowns).
 * `prom-client` is imported only when metrics are on. Every label is bounded: route templates rather than paths,
 * model names from the configured routes (any other is `other`), upstream names from the configuration, the key's
 * name (never the key).
 */
import type * as Prom from 'prom-client';
import type { AccessLogEntry } from './http/access-log.js';
import { BearerAuth } from './http/auth.js';
import { HttpError, invalid } from './http/errors.js';
import type { Incoming, Reply } from './http/incoming.js';
import type { UpstreamHealth, UpstreamState } from './upstreams/health.js';

/** The `metrics` option of the gateway: where `/metrics` is served, into which registry, behind which token. */
export interface GatewayMetricsOptions {
  /** The path the metrics are served on; `/metrics` by default. */
  path?: string;
  /**
   * The prom-client `Registry` the gateway's metrics join (your own metrics may share it); a new one by default. One
   * gateway per registry: the metric names are fixed.
   */
  registry?: Prom.Registry;
  /** A bearer token scrapers must send. Without it the path is open to whoever reaches the listener. */
  token?: string;
}

/** What the metrics read from the running gateway when scraped. */
export interface MetricsSources {
  /** The streams in flight now. */
  streams(): number;
  /** Whether the stream store answers. */
  storeReady(): Promise<boolean>;
  /** The model names the routes configure (no pattern): the only ones used as labels. */
  models(): readonly string[];
  /** Each upstream of each route as it is now (`Gateway.health()`). */
  health(): readonly UpstreamHealth[];
}

/** Every state, so that a scrape says 0 for the states an upstream is not in (an alert on `state="cooling" == 1`). */
const STATES: readonly UpstreamState[] = ['healthy', 'cooling', 'half-open'];

const PROM_CLIENT = 'prom-client';

/** Bucket boundaries (seconds) of a whole answer: LLM streams run for minutes. */
const DURATION_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
/** Bucket boundaries (seconds) until the upstream's first event. */
const FIRST_EVENT_BUCKETS = [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** A label of a request whose route matched nothing (a 404): the path itself is never a label. */
const UNMATCHED = 'unmatched';
/** The model label of a model no route names by itself. */
const OTHER_MODEL = 'other';

type RequestLabel = 'route' | 'protocol' | 'upstream' | 'model' | 'status' | 'result' | 'key';
type TimingLabel = 'route' | 'protocol' | 'upstream' | 'model';
type TokenLabel = 'type' | 'route' | 'upstream' | 'model' | 'key';
/** An upstream of a route: `route` is the route's model pattern here, as in `/readyz`. */
type UpstreamLabel = 'route' | 'upstream';

/** The instruments, once prom-client is loaded. */
interface Instruments {
  registry: Prom.Registry;
  requests: Prom.Counter<RequestLabel>;
  duration: Prom.Histogram<TimingLabel | 'stream'>;
  firstEvent: Prom.Histogram<TimingLabel>;
  tokens: Prom.Counter<TokenLabel>;
  cost: Prom.Counter<'upstream' | 'model' | 'key'>;
  retries: Prom.Counter<'upstream'>;
  fallbacks: Prom.Counter<'route' | 'upstream'>;
  rejections: Prom.Counter<'route' | 'key'>;
  streams: Prom.Gauge;
  storeReady: Prom.Gauge;
  upstreamState: Prom.Gauge<UpstreamLabel | 'state'>;
  upstreamInFlight: Prom.Gauge<UpstreamLabel>;
  upstreamLatency: Prom.Gauge<UpstreamLabel>;
  upstreamFailures: Prom.Gauge<UpstreamLabel>;
  cooldowns: Prom.Counter<UpstreamLabel>;
}

/** The metrics of one gateway: the observer of its access-log entries, and the `/metrics` endpoint. */
export class GatewayMetrics {
  /** The path the metrics are served on. */
  readonly path: string;
  readonly #auth: BearerAuth;
  readonly #sources: MetricsSources;
  readonly #loading: Promise<Instruments>;
  #instruments: Instruments | undefined;

  constructor(options: GatewayMetricsOptions, sources: MetricsSources) {
    this.path = options.path ?? '/metrics';
    if (!this.path.startsWith('/')) throw new RangeError('metrics.path must start with /');
    this.#auth = new BearerAuth(options.token);
    this.#sources = sources;
    this.#loading = load(options.registry, sources).then((instruments) => (this.#instruments = instruments));
    this.#loading.catch(() => undefined); // answered by each scrape, not unhandled before the first
  }

  /** The metrics token, for scrubbing it from anything the gateway sends. */
  get secrets(): readonly string[] {
    return this.#auth.secrets;
  }

  /** Records one finished request. Entries that finish while prom-client is still loading are recorded once it is. */
  observe(entry: AccessLogEntry): void {
    if (this.#instruments) record(this.#instruments, entry, this.#sources.models());
    else void this.#loading.then((instruments) => record(instruments, entry, this.#sources.models()), () => undefined);
  }

  /** Answers a scrape: the text exposition format, after the token check when there is a token. */
  async scrape(request: Incoming): Promise<Reply> {
    if (request.method !== 'GET')
      throw new HttpError(405, invalid(`Use GET for ${this.path}`, null, 'method_not_allowed'), { allow: 'GET' });
    this.#auth.check(request.header('authorization'));
    const instruments = await this.#loading.catch((error: unknown) => {
      const message = `The metrics are unavailable: ${error instanceof Error ? error.message : String(error)}`;
      throw new HttpError(500, { message, type: 'server_error', param: null, code: 'metrics_unavailable' });
    });
    const text = await instruments.registry.metrics();
    return { status: 200, headers: { 'content-type': instruments.registry.contentType }, text };
  }
}

async function load(given: Prom.Registry | undefined, sources: MetricsSources): Promise<Instruments> {
  // By a name in a variable: a bundle of the gateway's edge-safe entries (in-process translation) leaves it out.
  // An optional peer, as ioredis is: installed by those who scrape, and said so to those who did not.
  const client: typeof Prom = await import(/* webpackIgnore: true */ /* @vite-ignore */ PROM_CLIENT).catch((cause: unknown) => {
    throw new Error('metrics need the prom-client package: npm install prom-client', { cause });
  });
  const registry = given ?? new client.Registry();
  const registers = [registry];
  return {
    registry,
    requests: new client.Counter({
      name: 'ai4ts_gateway_requests_total',
      help: 'Requests answered, by route template, inbound protocol, upstream, model, HTTP status, result (error: a status of 400 or more, or a stream that failed after its 200) and key name',
      labelNames: ['route', 'protocol', 'upstream', 'model', 'status', 'result', 'key'],
      registers,
    }),
    duration: new client.Histogram({
      name: 'ai4ts_gateway_request_duration_seconds',
      help: 'Time until the answer was complete (a stream: its last event)',
      labelNames: ['route', 'protocol', 'upstream', 'model', 'stream'],
      buckets: DURATION_BUCKETS,
      registers,
    }),
    firstEvent: new client.Histogram({
      name: 'ai4ts_gateway_time_to_first_token_seconds',
      help: "Time until the upstream's first event arrived",
      labelNames: ['route', 'protocol', 'upstream', 'model'],
      buckets: FIRST_EVENT_BUCKETS,
      registers,
    }),
    tokens: new client.Counter({
      name: 'ai4ts_gateway_tokens_total',
      help: 'Tokens the upstreams reported, by type (input or output)',
      labelNames: ['type', 'route', 'upstream', 'model', 'key'],
      registers,
    }),
    cost: new client.Counter({
      name: 'ai4ts_gateway_cost_usd_total',
      help: 'What the requests cost, in US dollars',
      labelNames: ['upstream', 'model', 'key'],
      registers,
    }),
    retries: new client.Counter({
      name: 'ai4ts_gateway_upstream_retries_total',
      help: 'Upstream calls retried (before their headers or their first event)',
      labelNames: ['upstream'],
      registers,
    }),
    fallbacks: new client.Counter({
      name: 'ai4ts_gateway_fallbacks_total',
      help: 'Moves to another upstream after one failed before its first event, by the upstream that answered',
      labelNames: ['route', 'upstream'],
      registers,
    }),
    rejections: new client.Counter({
      name: 'ai4ts_gateway_rate_limit_rejections_total',
      help: "Requests the gateway refused with a 429 of its own (an upstream's 429 passed on is not one)",
      labelNames: ['route', 'key'],
      registers,
    }),
    streams: new client.Gauge({
      name: 'ai4ts_gateway_active_streams',
      help: 'Streaming answers in flight',
      registers,
      collect() {
        this.set(sources.streams());
      },
    }),
    storeReady: new client.Gauge({
      name: 'ai4ts_gateway_store_ready',
      help: 'Whether the stream store answers (1) or not (0)',
      registers,
      async collect() {
        this.set((await sources.storeReady().catch(() => false)) ? 1 : 0);
      },
    }),
    // Each of these is reset before it is filled: an upstream no longer routed (a reload) leaves no stale series.
    upstreamState: new client.Gauge({
      name: 'ai4ts_gateway_upstream_state',
      help: "1 for the state each upstream of each route (its model pattern) is in, 0 for the others: healthy, cooling (skipped) or half-open (tried again after a cooldown)",
      labelNames: ['route', 'upstream', 'state'],
      registers,
      collect() {
        this.reset();
        for (const { route, upstream, state } of sources.health())
          for (const each of STATES) this.set({ route, upstream, state: each }, each === state ? 1 : 0);
      },
    }),
    upstreamInFlight: new client.Gauge({
      name: 'ai4ts_gateway_upstream_in_flight',
      help: 'Answers each upstream is giving now, from the request sent until the answer ends',
      labelNames: ['route', 'upstream'],
      registers,
      collect() {
        this.reset();
        for (const { route, upstream, inFlight } of sources.health()) this.set({ route, upstream }, inFlight);
      },
    }),
    upstreamLatency: new client.Gauge({
      name: 'ai4ts_gateway_upstream_latency_seconds',
      help: "The exponentially weighted mean of each upstream's time to first event (the latency strategy's measure); absent before its first answer",
      labelNames: ['route', 'upstream'],
      registers,
      collect() {
        this.reset();
        for (const { route, upstream, latencyMs } of sources.health())
          if (latencyMs !== undefined) this.set({ route, upstream }, latencyMs / 1000);
      },
    }),
    upstreamFailures: new client.Gauge({
      name: 'ai4ts_gateway_upstream_failures',
      help: "Each upstream's failures before a first event in its current cooldown window",
      labelNames: ['route', 'upstream'],
      registers,
      collect() {
        this.reset();
        for (const { route, upstream, failures } of sources.health()) this.set({ route, upstream }, failures);
      },
    }),
    cooldowns: new client.Counter({
      name: 'ai4ts_gateway_upstream_cooldowns_total',
      help: 'Cooldowns each upstream started; a reload of the routes starts them again from 0 (a counter reset)',
      labelNames: ['route', 'upstream'],
      registers,
      collect() {
        this.reset();
        for (const { route, upstream, cooldowns } of sources.health()) this.inc({ route, upstream }, cooldowns);
      },
    }),
  };
}

/** Adds one finished request to the instruments. */
function record(instruments: Instruments, entry: AccessLogEntry, models: readonly string[]): void {
  const route = entry.route ?? UNMATCHED;
  // Which upstream and model served it: labels of the timings, the tokens and the cost.
  const served: { upstream?: string; model?: string } = {};
  if (entry.upstream !== undefined) served.upstream = entry.upstream;
  if (entry.model !== undefined) served.model = models.includes(entry.model) ? entry.model : OTHER_MODEL;
  const timing = entry.protocol === undefined ? { route, ...served } : { route, protocol: entry.protocol, ...served };
  const key = entry.keyName === undefined ? {} : { key: entry.keyName };
  const failed = entry.status >= 400 || entry.error !== undefined;
  instruments.requests.inc({ ...timing, ...key, status: String(entry.status), result: failed ? 'error' : 'ok' });
  const stream = entry.stream === undefined ? {} : { stream: String(entry.stream) };
  instruments.duration.observe({ ...timing, ...stream }, entry.durationMs / 1000);
  if (entry.firstEventMs !== undefined) instruments.firstEvent.observe(timing, entry.firstEventMs / 1000);
  if (entry.tokens) {
    instruments.tokens.inc({ route, ...served, ...key, type: 'input' }, entry.tokens.prompt);
    instruments.tokens.inc({ route, ...served, ...key, type: 'output' }, entry.tokens.completion);
  }
  if (entry.cost !== undefined && entry.cost > 0) instruments.cost.inc({ ...served, ...key }, entry.cost);
  if (entry.retries && entry.upstream !== undefined) instruments.retries.inc({ upstream: entry.upstream }, entry.retries);
  if (entry.attempts !== undefined && entry.attempts > 1 && entry.upstream !== undefined)
    instruments.fallbacks.inc({ route, upstream: entry.upstream }, entry.attempts - 1);
  // The gateway's own refusals are HttpErrors, logged without an error code; an upstream's 429 carries its code.
  if (entry.status === 429 && entry.error === undefined) instruments.rejections.inc({ route, ...key });
}

/**
 * The gateway's OpenTelemetry spans. Each inbound request gets a SERVER span (HTTP semantic conventions) whose parent
 * is the caller's trace context, read from its headers (`traceparent`) by the propagator; the upstream call is a
 * child span, the same `chat {model}` span the SDK's clients make (core's ModelSpan), whether the upstream is a
 * provider or a daemon. Loaded only when the gateway's `telemetry` option is set: without it `@opentelemetry/api` is
 * never imported, and the gateway runs where it is not installed.
 */
import { AbortError, type TelemetryOptions } from '@ai4ts/core';
import {
  loadOtel,
  type ModelSpan,
  type OtelApi,
  type OtelAttributes as Attributes,
  type OtelContext as Context,
  type OtelHistogram as Histogram,
  type OtelPropagator,
  type OtelSpan as Span,
  type OtelTextMapGetter,
  type OtelTracer as Tracer,
  type ResultSummary,
  Telemetry,
} from '@ai4ts/core/internal';
import type { BridgeEvent } from '@ai4ts/bridge';
import type { Incoming } from './http/incoming.js';
import type { AccessLogEntry } from './http/access-log.js';

/** The gateway's telemetry: where its spans and metrics go, and how the caller's trace context is read. */
export interface GatewayTelemetryOptions extends Omit<TelemetryOptions, 'parent'> {
  /**
   * Reads the caller's trace context from the request headers. Default: the globally registered propagator (an OTel
   * SDK's default is W3C trace context and baggage; with none registered the caller's context is not read). A
   * `TextMapPropagator` of `@opentelemetry/api`.
   */
  propagator?: OtelPropagator;
}

/** Methods the HTTP conventions name; any other is `_OTHER`. */
const METHODS = new Set(['CONNECT', 'DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT', 'QUERY', 'TRACE']);

/** Bucket boundaries (seconds) the HTTP conventions advise for `http.server.request.duration`. */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];

const HEADERS: OtelTextMapGetter<Incoming> = {
  // Propagators read the headers they know by name (W3C, B3, baggage); none needs to list them.
  keys: () => [],
  get: (carrier, key) => carrier.header(key),
};

/** Telemetry switched on for a gateway: the API once loaded, the settings, the propagator. */
export class GatewayTelemetry {
  readonly #api: OtelApi;
  readonly #options: GatewayTelemetryOptions;
  readonly #tracer: Tracer;
  readonly #duration: Histogram;

  constructor(api: OtelApi, options: GatewayTelemetryOptions) {
    this.#api = api;
    this.#options = options;
    this.#tracer = options.tracer ?? api.trace.getTracer('ai4ts');
    this.#duration = (options.meter ?? api.metrics.getMeter('ai4ts')).createHistogram('http.server.request.duration', {
      unit: 's',
      description: 'Duration of HTTP server requests',
      advice: { explicitBucketBoundaries: DURATION_BUCKETS },
    });
  }

  /** Loads `@opentelemetry/api` (once); rejects with a clear Ai4tsError when it is not installed. */
  static async load(options: GatewayTelemetryOptions): Promise<GatewayTelemetry> {
    return new GatewayTelemetry(await loadOtel(), options);
  }

  /**
   * Starts the SERVER span of one request, `{method} {route}` (`POST /v1/chat/completions`), under the context its
   * headers carry. `route` is the matched route template; undefined for a path no route serves.
   */
  startRequest(request: Incoming, route: string | undefined): RequestSpan {
    const api = this.#api;
    const parent = (this.#options.propagator ?? api.propagation).extract(api.context.active(), request, HEADERS);
    const method = METHODS.has(request.method) ? request.method : '_OTHER';
    const attributes: Attributes = { 'http.request.method': method, 'url.path': request.path, 'url.scheme': request.scheme };
    if (method === '_OTHER') attributes['http.request.method_original'] = request.method;
    if (route !== undefined) attributes['http.route'] = route;
    const agent = request.header('user-agent');
    if (agent !== undefined) attributes['user_agent.original'] = agent;
    const name = route === undefined ? method : `${method} ${route}`;
    const span = this.#tracer.startSpan(name, { kind: api.SpanKind.SERVER, attributes }, parent);
    const metric: Attributes = { 'http.request.method': method, 'url.scheme': request.scheme };
    if (route !== undefined) metric['http.route'] = route;
    return new RequestSpan(api, span, api.trace.setSpan(parent, span), this.#options, this.#duration, metric);
  }
}

/** The span of one gateway request, and the parent of its upstream call's span. */
export class RequestSpan {
  readonly #api: OtelApi;
  readonly #span: Span;
  readonly #context: Context;
  readonly #options: GatewayTelemetryOptions;
  readonly #duration: Histogram;
  readonly #metric: Attributes;
  readonly #started = performance.now();

  constructor(
    api: OtelApi,
    span: Span,
    context: Context,
    options: GatewayTelemetryOptions,
    duration: Histogram,
    metric: Attributes,
  ) {
    this.#api = api;
    this.#span = span;
    this.#context = context;
    this.#options = options;
    this.#duration = duration;
    this.#metric = metric;
  }

  /**
   * Starts the upstream call's span under this one: `chat {model}`, kind CLIENT, with the gen_ai attributes of
   * `body` (the upstream's wire body; its content only with `recordContent`), as core's clients record it; the
   * upstream's `secrets` (its key or access token) never reach the span.
   */
  startUpstream(
    provider: string,
    server: URL | undefined,
    protocol: string,
    body: Record<string, unknown>,
    secrets: readonly string[],
  ): ModelSpan {
    const options = { ...this.#options, parent: this.#context };
    const telemetry = Telemetry.of(this.#api, options, provider, server, secrets);
    return telemetry.startModel(protocol, body);
  }

  /**
   * Ends the span with what the access log knows of the request (its status, model, upstream, ids; never a key or
   * content), and records its duration. A 5xx is an error (status ERROR, `error.type` the status code), and so is a
   * stream that failed after its 200 (`error.type` its error code); a 4xx is the client's, as the HTTP conventions have
   * it for a server.
   */
  end(entry: AccessLogEntry): void {
    const span = this.#span;
    const metric: Attributes = { ...this.#metric, 'http.response.status_code': entry.status };
    span.setAttribute('http.response.status_code', entry.status);
    span.setAttribute('ai4ts.request_id', entry.requestId);
    if (entry.protocol !== undefined) span.setAttribute('ai4ts.gateway.protocol', entry.protocol);
    if (entry.model !== undefined) span.setAttribute('gen_ai.request.model', entry.model);
    if (entry.upstream !== undefined) span.setAttribute('ai4ts.gateway.upstream', entry.upstream);
    if (entry.attempts !== undefined) span.setAttribute('ai4ts.gateway.attempts', entry.attempts);
    if (entry.keyName !== undefined) span.setAttribute('ai4ts.gateway.key_name', entry.keyName);
    if (entry.stream !== undefined) span.setAttribute('ai4ts.gateway.stream', entry.stream);
    if (entry.streamId !== undefined) span.setAttribute('ai4ts.gateway.stream_id', entry.streamId);
    if (entry.resumed) span.setAttribute('ai4ts.gateway.resumed', true);
    if (entry.error !== undefined) span.setAttribute('ai4ts.error.code', entry.error);
    // A 200 with an error is a stream that failed after its first message: an error as a 5xx is.
    const failedStream = entry.status < 400 && entry.error !== undefined;
    if (entry.status >= 500 || failedStream) {
      const type = failedStream ? String(entry.error) : String(entry.status);
      span.setAttribute('error.type', type);
      span.setStatus({ code: this.#api.SpanStatusCode.ERROR, message: type });
      metric['error.type'] = type;
    }
    span.end();
    this.#duration.record((performance.now() - this.#started) / 1000, metric);
  }
}

/**
 * The upstream's events, timed and summed by `span` on their way: the first one is the first chunk; the end ends the
 * span with `result()` (the protocol's reading of its listener's result) or, for a daemon, what the events said; a
 * failure, or a reader that stops early (the client left), fails it. An iterator object rather than a generator:
 * `return()` reaches the source even before the first `next()`.
 */
export function traced(
  span: ModelSpan,
  source: AsyncIterable<BridgeEvent>,
  result: () => ResultSummary | undefined,
): AsyncIterableIterator<BridgeEvent> {
  const inner = source[Symbol.asyncIterator]();
  const seen: ResultSummary = { id: undefined, model: undefined, finishReasons: [], usage: undefined, output: undefined };
  let open = true;
  const fail = (error: unknown) => {
    if (open) span.fail(error);
    open = false;
  };
  const iterator: AsyncIterableIterator<BridgeEvent> = {
    [Symbol.asyncIterator]: () => iterator,
    async next() {
      let next: IteratorResult<BridgeEvent>;
      try {
        next = await inner.next();
      } catch (error) {
        fail(error);
        throw error;
      }
      if (next.done) {
        if (open) span.end(result() ?? seen, undefined);
        open = false;
        return next;
      }
      span.chunk();
      see(seen, next.value);
      return next;
    },
    async return() {
      fail(new AbortError('The gateway stopped reading the upstream before its end (the client left)'));
      await inner.return?.();
      return { done: true, value: undefined };
    },
  };
  return iterator;
}

/** What a daemon's events say of its answer: its message id, why it finished, its usage (the last total). */
function see(summary: ResultSummary, event: BridgeEvent): void {
  switch (event.type) {
    case 'start':
      summary.id ??= event.messageId;
      break;
    case 'finish':
      if (!summary.finishReasons.includes(event.finishReason)) summary.finishReasons.push(event.finishReason);
      break;
    case 'usage':
      summary.usage = event.usage;
      break;
    case 'done':
      summary.id ??= event.messageId;
      summary.usage ??= event.usage;
      break;
  }
}

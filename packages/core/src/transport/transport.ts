/**
 * The HTTP layer every service shares: URL and header assembly per provider, retries before the body is read,
 * typed errors, and SSE streams with their timeouts. Built on ky with its own retries and status checks off: the
 * retries follow ai4ts's one {@link RetryPolicy} (Retry-After caps, never after the body is handed out).
 */
import ky, { TimeoutError as KyTimeoutError } from 'ky';
import {
  Ai4tsError,
  ApiError,
  AuthenticationError,
  ConnectionError,
  isRecord,
  ProtocolError,
  requestIdOf,
  TimeoutError,
  UnknownFieldError,
} from '../errors.js';
import { readEnv } from './env.js';
import { resolveTimeout, resolveTimeouts, type TimeoutOptions } from './timeouts.js';
import { AUTH_HEADERS, type ProviderName, type ProviderPreset, resolveProvider } from './providers.js';
import { AccessTokenCache, type AccessTokenSource } from './token.js';
import {
  abortError,
  describeError,
  MIN_SECRET_LENGTH,
  parseOrText,
  readErrorResponse,
  redact,
  redactHeaders,
  redactJsonText,
} from '../internal/fail.js';
import { readJsonBody } from '../internal/json-body.js';
import { withOwnSignal } from '../internal/signal.js';
import { type Backoff, type OnRetry, RetryPolicy, sleep } from './retry.js';
import { readFramedStream, readSseStream, type SseStream, type StreamResume } from './stream.js';
import { type CallContext, ModelCall, type ModelProtocol, type RequestWatch } from '../observe/call.js';
import type { Prices } from '../observe/cost.js';
import type { ModelMiddleware } from '../observe/middleware.js';
import { bodyText, Log, type LogOptions, loggableHeaders, resolveLog } from '../observe/logger.js';
import { loadOtel, Telemetry, type TelemetryOptions } from '../observe/telemetry.js';

/**
 * How a {@link Transport} reaches its API, and how it is watched (log, telemetry, prices). Every field but
 * `provider`, `fetch`, the log settings and `prices` can be overridden per call.
 */
export interface TransportOptions extends LogOptions, TimeoutOptions {
  /** A preset name or object (default `'openai'`): baseURL, auth style, the key's env var, quirks. */
  provider?: ProviderName | ProviderPreset;
  /**
   * Refuse a request naming a field that is none of its protocol's, the loop's or the SDK's (`temprature`,
   * `maxStep`) with {@link UnknownFieldError}, before anything is sent. Default false: each such field is warned
   * about once (through the logger, or `console.warn` when no log is set up) and sent as written. A vendor's own
   * field belongs in `extraBody`.
   */
  strictRequests?: boolean;
  /** Overrides the preset's baseURL (required for `azure` and `openai-compatible`). */
  baseURL?: string;
  /** Default: the preset's env var(s), read at request time through `globalThis.process?.env`. */
  apiKey?: string;
  /**
   * An expiring bearer token instead of a key (OAuth2: Vertex AI, Entra ID); the preset's `accessToken` when not
   * given (`vertex()` brings Google's credentials). Sent as `Authorization: Bearer`, kept until a minute before it
   * expires, one fetch shared by concurrent requests, fetched again once on a 401. Replaces `apiKey` and its env
   * vars; a call's own `apiKey` still wins.
   */
  accessToken?: AccessTokenSource;
  headers?: Record<string, string>;
  query?: Record<string, string>;
  /**
   * Custom fetch for tests, proxies and edge runtimes. It is called the standard way, `fetch(url, init)`, with
   * `init.method`, `init.headers` (a `Headers`, auth included), `init.body` (the JSON text as sent) and `init.signal`.
   */
  fetch?: (input: string, init: RequestInit) => Promise<Response>;
  /**
   * Retries after a connection error, 408, 409, 429 or 5xx before the headers, and of a stream that failed before
   * its first event (default 2).
   */
  maxRetries?: number;
  /** Backoff between retries when the server gives no Retry-After (default 500 ms doubling up to 8 s). */
  backoff?: Backoff;
  /** Called before each retry (see {@link RequestOptions.onRetry}). */
  onRetry?: OnRetry;
  /** OpenTelemetry spans and metrics of every model call (off by default); see docs/observability.md. */
  telemetry?: TelemetryOptions;
  /**
   * Prices per million tokens by model, giving each result's cost (`resultInfo(result).cost`, a loop's `cost`).
   * `DEFAULT_PRICES` is a small dated table of common models; no table, no cost.
   */
  prices?: Prices;
}

/** Per-call overrides; `extraBody` is merged into the JSON request body. */
export interface RequestOptions extends TimeoutOptions {
  baseURL?: string;
  apiKey?: string;
  /** Merged over the transport's headers. */
  headers?: Record<string, string>;
  /** Merged over the transport's query. */
  query?: Record<string, string>;
  /** Fields merged into the JSON body last (vendor parameters the typed request does not know). */
  extraBody?: Record<string, unknown>;
  signal?: AbortSignal;
  maxRetries?: number;
  /**
   * Called before each retry, whatever failed: the request before its headers (a connection error, 408, 409, 429,
   * 5xx), or a stream before its first event (a first-token timeout, a dropped connection, a retryable in-stream
   * error). Wins over the transport's. A throw ends the call with that error.
   */
  onRetry?: OnRetry;
  /**
   * Telemetry of this call, merged over the client's (a request's own `telemetry` field is merged in too).
   * `parent` starts the call's span under a given context: a server's inbound request.
   */
  telemetry?: TelemetryOptions;
}

/** One request: method (default GET, or POST when there is a body), a JSON body, per-call options. */
export interface RequestInit_ {
  method?: 'GET' | 'POST' | 'DELETE';
  body?: unknown;
  options?: RequestOptions;
  /** The model call this request belongs to ({@link Transport.call}): told of each response and retry. */
  watch?: RequestWatch;
}

/** The headers of a stream an ai4ts gateway can resume: its id, and `1` when it is kept for a client that comes back. */
export const STREAM_ID_HEADER = 'x-ai4ts-stream-id';
export const RESUMABLE_HEADER = 'x-ai4ts-resumable';

/** Sends requests to one provider. Create it once and share it; it holds no per-request state. */
export class Transport {
  /** The resolved preset. */
  readonly provider: ProviderPreset;
  readonly #options: TransportOptions;
  readonly #log: Log | undefined;
  readonly #middleware: ModelMiddleware[] = [];
  /** The unknown request fields already warned about: each once. */
  readonly #warnedFields = new Set<string>();
  readonly #tokens: AccessTokenCache | undefined;

  /**
   * Never throws for a missing key: the key is looked up at request time, so the env can be set later.
   *
   * @throws Ai4tsError when `AI4TS_LOG` is not a log level, or the baseURL is not an http(s) URL.
   */
  constructor(options: TransportOptions = {}) {
    this.provider = resolveProvider(options.provider ?? 'openai');
    this.#options = options;
    this.#log = resolveLog(options);
    const baseURL = options.baseURL ?? this.provider.baseURL;
    if (baseURL) parseBaseURL(baseURL);
    const accessToken = options.accessToken ?? this.provider.accessToken;
    this.#tokens = accessToken && new AccessTokenCache(accessToken);
  }

  /**
   * A request names a field no protocol, loop or SDK field is (`suggestion`: the nearest known name): throws
   * {@link UnknownFieldError} with `strictRequests`, else warns once per field and protocol.
   */
  unknownField(protocol: string, field: string, suggestion: string | undefined): void {
    if (this.#options.strictRequests === true) throw new UnknownFieldError(protocol, field, suggestion);
    const key = `${protocol}.${field}`;
    if (this.#warnedFields.has(key)) return;
    this.#warnedFields.add(key);
    // A plain-JavaScript user with no log set up is the one who needs this most: then the console says it.
    const options = this.#options;
    const quiet = options.logger !== undefined || options.logLevel !== undefined || readEnv(['AI4TS_LOG']) !== undefined;
    const log = this.#log ?? (quiet ? undefined : new Log(console, 'warn', false));
    log?.write('warn', 'unknown request field', { protocol, field, suggestion }, []);
  }

  /**
   * Adds a middleware around every later model request (see {@link ModelMiddleware}); the first added runs
   * outermost. Returns the transport, to chain.
   */
  use(middleware: ModelMiddleware): this {
    this.#middleware.push(middleware);
    return this;
  }

  /**
   * Starts watching one model request (its span, outcome log, request id and cost). `body` is the wire body;
   * `options` the call's, whose `telemetry` is merged over the client's.
   */
  call<Final>(
    protocol: ModelProtocol<Final>,
    body: Record<string, unknown>,
    options: RequestOptions = {},
  ): ModelCall<Final> {
    const transport = this;
    const context: CallContext = {
      log: this.#log,
      telemetry: this.telemetry(options),
      prices: this.#options.prices,
      // Read when used: an access token is fetched after the call starts, and may be refreshed during it.
      get secrets() {
        return transport.secrets(options);
      },
      middleware: this.#middleware,
      signal: options.signal,
      timeout: resolveTimeout('headers', options, this.#options),
    };
    return new ModelCall(protocol, body, context);
  }

  /**
   * The telemetry of a call: the client's settings, the call's over them, `requested` (a loop's or a request's
   * own) over both; undefined when none is set (telemetry off). Loads `@opentelemetry/api` the first time.
   */
  telemetry(
    options: RequestOptions = {},
    requested?: TelemetryOptions,
  ): (() => Telemetry | Promise<Telemetry>) | undefined {
    const client = this.#options.telemetry;
    if (!client && !options.telemetry && !requested) return undefined;
    const merged = { ...client, ...options.telemetry, ...requested };
    const server = this.#server(options);
    const secrets = this.secrets(options);
    return () => {
      const api = loadOtel();
      return api instanceof Promise
        ? api.then((loaded) => Telemetry.of(loaded, merged, this.provider.name, server, secrets))
        : Telemetry.of(api, merged, this.provider.name, server, secrets);
    };
  }

  #server(options: RequestOptions): URL | undefined {
    const baseURL = options.baseURL ?? this.#options.baseURL ?? this.provider.baseURL;
    try {
      return baseURL ? new URL(baseURL) : undefined;
    } catch {
      return undefined;
    }
  }

  /**
   * Sends with retries; resolves to a response with status < 400, body unread. A status >= 400 throws
   * {@link ApiError.fromResponse} (the typed subclass); a network failure throws {@link ConnectionError}; no
   * headers within `timeouts.headers` throws {@link TimeoutError} (phase `headers`); an abort throws `AbortError`.
   * With an access token, a source that fails throws {@link AuthenticationError}, and a 401 is answered by one new
   * token and one more attempt (outside `maxRetries`).
   */
  async request(path: string, init: RequestInit_ = {}): Promise<Response> {
    const call = init.options ?? {};
    const defaults = this.#options;
    const signal = call.signal;
    const method = init.method ?? (init.body === undefined && call.extraBody === undefined ? 'GET' : 'POST');
    const built = { path, body: jsonBody(init.body, call.extraBody) };
    const model = modelOf(built.body);
    const { rewriteRequest } = this.provider;
    const { path: sentPath, body: json } = rewriteRequest ? rewriteRequest(built) : built;
    const url = this.#url(sentPath, call);
    // An invalid request fails above, before a token is fetched for it.
    const tokens = call.apiKey === undefined ? this.#tokens : undefined;
    let apiKey = tokens ? await tokens.get() : this.#apiKey(call);
    let headers = this.#headers(apiKey, call, tokens !== undefined);
    const timeout = resolveTimeout('headers', call, defaults);
    const policy = this.streamRetry(call);
    const where = `${method} ${url.origin}${url.pathname}`;
    const log = this.#log;
    const watch = init.watch;
    let secrets = [apiKey ?? ''];
    const { signer } = this.provider;
    // A signed request sends the exact text it signed.
    const signedBody = signer && json !== undefined ? JSON.stringify(json) : undefined;
    if (log?.bodies && json !== undefined) {
      const body = bodyText(json);
      log.write('debug', 'request body', { method, url: url.href, headers: loggableHeaders(headers), body }, secrets);
    }

    const fetch = defaults.fetch && withCallShape(defaults.fetch);
    // A refused access token is fetched again once, outside the retry budget: the refusal says nothing of the server.
    let refreshed = false;
    for (let attempt = 0; ; ) {
      const started = performance.now();
      const line = (status: number | undefined, extra: Record<string, unknown> = {}) => ({
        method,
        url: url.href,
        model,
        status,
        durationMs: Math.round(performance.now() - started),
        retries: attempt,
        ...extra,
      });
      if (signal?.aborted) throw abortError(signal);
      // Each attempt is signed anew: a signature holds its time, and retries wait.
      if (signer) {
        if (signedBody !== undefined) headers.set('content-type', 'application/json');
        headers = await signer.sign({ method, url, headers, body: signedBody });
        secrets = [...new Set([...secrets, ...signer.secrets()])];
      }
      // Built outside the try: a body JSON cannot encode (a BigInt, a cycle) throws here, not as a connection error.
      const sending = ky(url, {
        method,
        headers,
        ...(signer ? { body: signedBody } : { json }),
        signal,
        timeout: timeout ?? false,
        retry: 0,
        throwHttpErrors: false,
        ...(fetch && { fetch }),
      });
      let response: Response;
      try {
        response = await sending;
      } catch (error) {
        const failure = requestError(error, where, timeout, signal, secrets);
        const delay = policy.retryDelay(failure, attempt);
        if (delay === undefined) {
          log?.write('warn', 'request failed', line(undefined, { error: failure.name, message: failure.message }), secrets);
          throw failure;
        }
        log?.write('warn', 'request will be retried', line(undefined, { error: failure.name, delayMs: Math.round(delay) }), secrets);
        watch?.retry(attempt + 1, failure.name, delay, 'headers');
        policy.onRetry?.(failure, attempt + 1, delay);
        await sleep(delay, signal);
        attempt++;
        continue;
      }
      if (response.status === 401 && tokens && apiKey !== undefined && !refreshed) {
        refreshed = true;
        log?.write('info', 'access token refused, fetching a new one', line(response.status), secrets);
        void response.body?.cancel().catch(() => undefined);
        apiKey = await tokens.refresh(apiKey);
        headers = this.#headers(apiKey, call, true);
        secrets = [...secrets, apiKey];
        continue;
      }
      if (response.status < 400) {
        log?.write('info', 'request', line(response.status, { requestId: requestIdOf(response.headers) }), secrets);
        watch?.responded(response);
        return response;
      }
      // The body is not read to decide: its status and headers say enough, and a slow body must not delay a retry.
      const failure = ApiError.fromResponse(response.status, undefined, redactHeaders(response.headers, secrets));
      const delay = policy.retryDelay(failure, attempt);
      const requestId = requestIdOf(response.headers);
      if (delay === undefined) {
        log?.write('warn', 'request failed', line(response.status, { requestId }), secrets);
        throw await readErrorResponse(response, { signal, secrets });
      }
      log?.write('warn', 'request will be retried', line(response.status, { requestId, delayMs: Math.round(delay) }), secrets);
      watch?.retry(attempt + 1, String(response.status), delay, 'headers');
      void response.body?.cancel().catch(() => undefined);
      policy.onRetry?.(failure, attempt + 1, delay);
      await sleep(delay, signal);
      attempt++;
    }
  }

  /** {@link request} and parse the JSON body; an unparseable body throws {@link ProtocolError}. */
  async json<T>(path: string, init: RequestInit_ = {}): Promise<T> {
    // A signal of its own for the request and its body: ky makes an AbortSignal.any of it (see withOwnSignal).
    return withOwnSignal(init.options?.signal, async (signal) => {
      const response = await this.request(path, withAccept({ ...init, options: { ...init.options, signal } }, 'application/json'));
      return (await readJsonBody(response, signal, this.secrets(init.options))).json as T;
    });
  }

  /**
   * A streaming POST: {@link request}, then the body as SSE events with the `timeouts.firstEvent` / `timeouts.idle`.
   * A stall throws {@link TimeoutError} (phase `first_token` | `idle`) and cancels the body; an abort throws
   * `AbortError` and cancels the body; a body that errors mid-read throws {@link ConnectionError}. Breaking out
   * of the loop cancels the body. Nothing is retried once the response is returned: a stream handle retries a
   * stream that failed before its first event ({@link streamRetry}).
   */
  async stream(path: string, init: RequestInit_ = {}): Promise<SseStream> {
    const response = await this.request(path, {
      ...withAccept(init, this.provider.streamFraming?.contentType ?? 'text/event-stream'),
      method: init.method ?? 'POST',
    });
    const call = init.options ?? {};
    const secrets = this.secrets(call);
    await throwJsonError(response, secrets);
    const { firstEvent, idle } = resolveTimeouts(call, this.#options);
    const limits = { signal: call.signal, firstTokenTimeout: firstEvent, idleTimeout: idle, secrets };
    const framing = this.provider.streamFraming;
    if (framing && response.headers.get('content-type')?.toLowerCase().startsWith(framing.contentType)) {
      return readFramedStream(response, framing, limits);
    }
    throwNotAStream(response);
    return readSseStream(response, limits, this.#resume(response, call, init.watch));
  }

  /**
   * How a stream the server says it can resume is read on after a cut: a response with `x-ai4ts-stream-id` and
   * `x-ai4ts-resumable: 1` (an ai4ts gateway's resumable stream) continues with `GET <baseURL>/streams/{id}`, with
   * the call's headers (auth included) and `Last-Event-ID`, up to `maxRetries` reconnections in a row that bring
   * no event, with the transport's backoff. Undefined for any other stream, or with `maxRetries: 0`.
   */
  #resume(response: Response, call: RequestOptions, watch: RequestWatch | undefined): StreamResume | undefined {
    const id = response.headers.get(STREAM_ID_HEADER);
    const { maxRetries: maxAttempts, backoff } = this.streamRetry(call);
    if (!id || response.headers.get(RESUMABLE_HEADER) !== '1' || maxAttempts < 1) return undefined;
    if (!response.headers.get('content-type')?.startsWith('text/event-stream')) return undefined;
    const token = call.apiKey === undefined ? this.#tokens?.token : undefined;
    const headers = token ? this.#headers(token, call, true) : this.#headers(this.#apiKey(call), call);
    headers.set('accept', 'text/event-stream');
    const log = this.#log;
    const url = this.#url(`streams/${encodeURIComponent(id)}`, call);
    return {
      request: new Request(url, { headers }),
      fetch: this.#options.fetch ? withCallShape(this.#options.fetch) : globalThis.fetch,
      maxAttempts,
      delay: backoff.initialMs,
      maxDelay: backoff.maxMs,
      onResume: (resumes) => {
        log?.write('warn', 'stream resumed', { url: `${url.origin}${url.pathname}`, resumes }, this.secrets(call));
        watch?.resumed(resumes);
      },
    };
  }

  /**
   * The {@link RetryPolicy} of a call: its `maxRetries` and `onRetry`, else the transport's, and the transport's
   * `backoff`. {@link request} follows it before the headers; a stream handle before its first event.
   */
  streamRetry(options: RequestOptions = {}): RetryPolicy {
    return new RetryPolicy({
      maxRetries: options.maxRetries ?? this.#options.maxRetries,
      backoff: this.#options.backoff,
      onRetry: options.onRetry ?? this.#options.onRetry,
    });
  }

  /**
   * The secrets a call sends (its API key), for redacting server data before it reaches an error, a log or a
   * result: every SSE event of {@link stream} and every body {@link json} reads is already redacted; readers of
   * {@link request}'s body pass these on. Not for display.
   */
  secrets(options: RequestOptions = {}): readonly string[] {
    const keys = [options.apiKey === undefined && this.#tokens ? this.#tokens.token : this.#apiKey(options)];
    if (this.provider.signer) keys.push(...this.provider.signer.secrets());
    return keys.filter((key): key is string => key !== undefined && key.length >= MIN_SECRET_LENGTH);
  }

  /** The call's key, else the transport's, else the preset's env var, read now (the env may be set late). */
  #apiKey(call: RequestOptions): string | undefined {
    return call.apiKey ?? this.#options.apiKey ?? readEnv(this.provider.apiKeyEnv);
  }

  #url(path: string, call: RequestOptions): URL {
    const baseURL = call.baseURL ?? this.#options.baseURL ?? this.provider.baseURL;
    if (!baseURL) {
      throw new Ai4tsError(`Provider "${this.provider.name}" needs a baseURL: pass the baseURL option`);
    }
    const url = parseBaseURL(baseURL);
    url.pathname = `${url.pathname.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
    for (const query of [this.provider.query, this.#options.query, call.query]) {
      for (const [name, value] of Object.entries(query ?? {})) url.searchParams.set(name, value);
    }
    return url;
  }

  /** `token`: `apiKey` is an access token, sent as a bearer token whatever the preset's auth style. */
  #headers(apiKey: string | undefined, call: RequestOptions, token = false): Headers {
    const headers = new Headers({ accept: 'application/json', ...this.provider.headers });
    const { auth, apiKeyEnv, apiKeyOptional, name } = this.provider;
    if (token && apiKey) setAuth(headers, 'bearer', apiKey);
    else if (auth !== 'none') {
      if (apiKey) setAuth(headers, auth, apiKey);
      else if (!apiKeyOptional) throw missingKey(name, apiKeyEnv);
    }
    for (const extra of [this.#options.headers, call.headers]) {
      for (const [header, value] of Object.entries(extra ?? {})) headers.set(header, value);
    }
    return headers;
  }
}

function setAuth(headers: Headers, auth: keyof typeof AUTH_HEADERS, apiKey: string): void {
  try {
    headers.set(AUTH_HEADERS[auth], auth === 'bearer' ? `Bearer ${apiKey}` : apiKey);
  } catch {
    // The platform's message would quote the key.
    throw new AuthenticationError('The API key contains characters not allowed in an HTTP header (a newline?)');
  }
}

function missingKey(provider: string, env: string[]): AuthenticationError {
  const where = env.length ? `set ${env.join(' or ')}, or pass the apiKey option` : 'pass the apiKey option';
  return new AuthenticationError(`Missing API key for provider "${provider}": ${where}`);
}

/**
 * A baseURL as a URL, or a clear error: `localhost:8080/v1` parses as the scheme `localhost:` and would fail only at
 * request time, as `unknown scheme`.
 */
function parseBaseURL(baseURL: string): URL {
  let url: URL;
  try {
    url = new URL(baseURL);
  } catch (error) {
    throw new Ai4tsError(`Invalid baseURL "${baseURL}": ${hintOf(baseURL)}`, { cause: error });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new Ai4tsError(`baseURL "${baseURL}" is not an http:// or https:// URL: ${hintOf(baseURL)}`);
  }
  return url;
}

function hintOf(baseURL: string): string {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(baseURL) ? 'use http:// or https://' : `write "http://${baseURL}"`;
}

/** The request's accept header unless the caller chose one. */
function withAccept(init: RequestInit_, accept: string): RequestInit_ {
  const options = init.options ?? {};
  return { ...init, options: { ...options, headers: { accept, ...options.headers } } };
}

/**
 * ky calls fetch with one `Request` and no `init`; a user's fetch (a logger, a proxy agent) expects the
 * `(url, init)` pair it would get from a caller, with the method, headers and body as sent.
 */
function withCallShape(
  fetch: NonNullable<TransportOptions['fetch']>,
): (input: string | URL | Request, init?: RequestInit) => Promise<Response> {
  return async (input, init) => {
    const request = new Request(input, init);
    const body = request.body === null ? undefined : await request.text();
    return fetch(request.url, {
      method: request.method,
      headers: request.headers,
      signal: request.signal,
      ...(body !== undefined && { body }),
    });
  };
}

/** The JSON body with `extraBody` merged in last, or undefined for a request without one. */
function jsonBody(body: unknown, extraBody: Record<string, unknown> | undefined): unknown {
  if (extraBody === undefined) return body;
  if (body === undefined) return extraBody;
  if (!isRecord(body)) throw new Ai4tsError('extraBody can only be merged into a JSON object body');
  return { ...body, ...extraBody };
}

/** The model a JSON body names, for a log line. */
function modelOf(json: unknown): string | undefined {
  return isRecord(json) && typeof json.model === 'string' ? json.model : undefined;
}

/** What fetch (undici) says of a URL it will not send to, whatever the network does. */
const REFUSED_URL = /^(bad port|unknown scheme)$/;

/** Maps what ky or fetch threw before a response arrived. */
function requestError(
  error: unknown,
  where: string,
  timeout: number | undefined,
  signal: AbortSignal | undefined,
  secrets: readonly string[],
): Ai4tsError {
  if (error instanceof Ai4tsError) return error;
  if (signal?.aborted) return abortError(signal);
  // ky's TimeoutError holds the request, headers and key included: it must not become the cause.
  if (error instanceof KyTimeoutError && timeout !== undefined) return new TimeoutError('headers', timeout);
  // The platform refuses the URL itself (a port fetch blocks, a scheme it cannot send): the same URL would fail again.
  if (error instanceof Error && error.cause instanceof Error && REFUSED_URL.test(error.cause.message)) {
    return new Ai4tsError(redact(`Cannot send ${where}: ${describeError(error)} (the platform refuses this URL)`, secrets));
  }
  const message = redact(`Connection error (${where}): ${describeError(error)}`, secrets);
  const leaks = error instanceof Error && secrets.some((secret) => secret !== '' && describeError(error).includes(secret));
  return new ConnectionError(message, { cause: leaks ? new Error(message) : error });
}

/**
 * What may carry a stream: SSE, JSON (an error, or a server that ignored `stream: true`), and `text/plain`, which
 * some servers put on SSE. Anything else (a proxy's login page, an XML fault) is no stream.
 */
const STREAM_TYPES = ['text/event-stream', 'application/json', 'text/plain'];

/**
 * A streamed request answered with a web page or another document: a ProtocolError naming what came, at once. Read
 * as SSE it would yield no event and end as a StreamIncompleteError, retried for nothing.
 */
function throwNotAStream(response: Response): void {
  const type = response.headers.get('content-type');
  if (type === null || STREAM_TYPES.some((stream) => type.toLowerCase().includes(stream))) return;
  void response.body?.cancel().catch(() => undefined);
  throw new ProtocolError(
    `Expected an event stream (text/event-stream) but the server answered ${type} with status ${response.status}`,
  );
}

/**
 * Some gateways answer a streaming request with HTTP 200 and a JSON error body instead of SSE. That is the
 * provider's error, not an empty stream: raise it. Other JSON is left for the protocol layer (the body is cloned).
 */
async function throwJsonError(response: Response, secrets: readonly string[]): Promise<void> {
  if (!response.headers.get('content-type')?.includes('application/json')) return;
  const text = await response
    .clone()
    .text()
    .catch(() => '');
  const body = parseOrText(redactJsonText(text, secrets));
  if (isRecord(body) && body.error !== undefined && body.error !== null) throw ApiError.fromStreamError(body, undefined);
}

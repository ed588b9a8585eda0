/**
 * Where a request goes: a daemon that speaks its own dialect, or a provider that speaks one of the protocols.
 * A provider is called through core's Transport (its URL joining, auth header, key variable, retries before the
 * headers and redaction), so that the gateway and the SDK reach a provider the same way. Keys live in `#private`
 * fields, so that a target can be logged or inspected without showing them.
 */
import { type BridgeEvent, type Dialect, namedEventDialect, typedEventDialect } from '@ai4ts/bridge';
import {
  type AccessTokenSource,
  type Backoff,
  type ProviderName,
  type ProviderPreset,
  type RequestOptions,
  resolveProvider,
  type RetryPolicy,
  Transport,
} from '@ai4ts/core';
import type { ModelSpan } from '@ai4ts/core/internal';
import { CODECS } from '../codecs/index.js';
import { type GatewayProtocol, type GatewayRequest, partsText, type ProtocolCodec, type UpstreamReadOptions } from '../codecs/neutral.js';
import type { RequestSpan } from '../telemetry.js';

/** One upstream, as a route of the table or the options name it. */
export type UpstreamSpec =
  | {
      /** The daemon's URL; each request is one POST to it. */
      upstream: string | URL;
      /** The daemon's dialect: a built-in one by name, or your own from `defineDialect()`. */
      dialect: 'typed' | 'named' | Dialect;
      /** Sent as `Authorization: Bearer <token>`. */
      upstreamToken?: string | undefined;
    }
  | {
      /** The provider's API root with its version (`https://api.openai.com/v1`); the protocol's path is appended. */
      upstream: string | URL;
      /** The protocol the provider speaks. */
      protocol: GatewayProtocol;
      /** Its API key (bearer for chat and responses, `x-api-key` for messages, `x-goog-api-key` for gemini). */
      upstreamToken?: string | undefined;
      /** The model name sent upstream; the client's by default. */
      upstreamModel?: string | undefined;
      /** What to do with a request field this upstream has no equivalent for; `'drop'` (and name it) by default. */
      onUnsupported?: OnUnsupported | undefined;
      /** Who keeps Responses conversations: see {@link ConversationState}. */
      state?: ConversationState | undefined;
    }
  | {
      /**
       * A preset of @ai4ts/core (`openai`, `anthropic`, `deepseek`, ...) or a preset object: its URL, its declared
       * protocol (`chat` when it declares none), its auth style and its key variable.
       */
      provider: ProviderName | ProviderPreset;
      /** The key; the preset's environment variable by default. */
      upstreamToken?: string | undefined;
      /**
       * An expiring bearer token instead of a key (Vertex AI), over the preset's own (`vertex()` brings Google's
       * credentials); asked for when needed, cached until shortly before it expires, redacted like a key.
       */
      accessToken?: AccessTokenSource | undefined;
      upstreamModel?: string | undefined;
      onUnsupported?: OnUnsupported | undefined;
      state?: ConversationState | undefined;
    };

/**
 * Who keeps the Responses conversations of a route: `'gateway'` (the default) resolves `previous_response_id` and
 * `item_reference` from its own store for any upstream; `'upstream'`, for a Responses upstream that stores, passes
 * Responses requests and answers through unchanged, ids and references included, and stores nothing.
 */
export type ConversationState = 'gateway' | 'upstream';

/**
 * What a route does with a request field its upstream has no equivalent for: `'drop'` sends the rest and names the
 * field in `x-ai4ts-dropped`; `'refuse'` answers a 400 naming it, and the upstream is not called.
 */
export type OnUnsupported = 'drop' | 'refuse';

/** What the gateway needs of an upstream. */
export interface UpstreamTarget {
  /** How access logs name it: its kind and host, never a key. */
  readonly name: string;
  /** The protocol a provider speaks; undefined for a daemon, which is sent the last user message and the raw body. */
  readonly protocol: GatewayProtocol | undefined;
  /** What its route does with fields the upstream has no equivalent for. */
  readonly onUnsupported: OnUnsupported;
  /** Who keeps Responses conversations sent to it. */
  readonly state: ConversationState;
  /**
   * A Responses provider only: sends a Responses body as the client wrote it (its model the route's), for
   * `state: 'upstream'`.
   */
  forward?(body: Record<string, unknown>, signal: AbortSignal): Promise<Response>;
  /** Who runs the tool calls of its answers: a daemon runs its own; a provider's are the client's. */
  readonly toolCalls: 'daemon' | 'client';
  /** A dialect that requires a session id (a UUID is made when the request has none). */
  readonly sessionRequired: boolean;
  /** Its keys (and its current access token), scrubbed from everything the gateway sends: read each time it is used. */
  readonly secrets: readonly string[];
  /**
   * Sends the request. Resolves to a response with its headers; rejects as fetch does (a daemon), or with core's
   * typed ApiError, ConnectionError or TimeoutError once the retries are spent (a provider).
   */
  post(request: GatewayRequest, sessionId: string | undefined, signal: AbortSignal, budget?: RetryBudget): Promise<Response>;
  /** Reads its answer into bridge events. */
  read(response: Response, options: UpstreamReadOptions): AsyncIterable<BridgeEvent>;
  /**
   * When an answer that failed before its first event is asked for again (core's policy, as the SDK's stream
   * handles retry); undefined for a daemon, whose POST may have started tools.
   */
  readonly retry: RetryPolicy | undefined;
  /** Starts the span of one call to it, under the gateway request's: the `chat {model}` span of core's clients. */
  startSpan(request: GatewayRequest, parent: RequestSpan): ModelSpan;
  /**
   * Sends a JSON body to another endpoint of its API (`embeddings`, `rerank`), the model replaced by the route's
   * `upstreamModel`, retried like `post`: resolves to the answer's JSON, secrets redacted. Undefined for a daemon,
   * which speaks only its dialect.
   */
  readonly sendJson: ((path: string, body: Record<string, unknown>, signal: AbortSignal) => Promise<unknown>) | undefined;
}

/**
 * What is left of one answer's retries for this attempt's headers, and who counts them: a provider's retries before
 * its headers and before its first event share one budget, as in the SDK's stream handles.
 */
export type RetryBudget = Pick<RequestOptions, 'maxRetries' | 'onRetry'>;

/** How targets reach their upstreams: the fetch, and a provider's retries before its headers. */
export interface UpstreamCalls {
  fetch: typeof fetch;
  /** Retries of a provider before its headers (core's default, 2, when undefined). */
  maxRetries?: number | undefined;
  backoff?: Backoff | undefined;
}

function hostOf(url: string | URL): string {
  return urlOf(url)?.host ?? 'invalid-url';
}

function urlOf(url: string | URL): URL | undefined {
  try {
    return new URL(url);
  } catch {
    return undefined;
  }
}

/**
 * A daemon that streams its own dialect. Reached with a plain fetch, not a Transport: its URL is the whole endpoint
 * (a Transport appends a path to its base), and its POST may start tools with effects, so it is never retried.
 */
class DaemonTarget implements UpstreamTarget {
  readonly name: string;
  readonly protocol = undefined;
  readonly onUnsupported: OnUnsupported = 'drop';
  readonly state = 'gateway';
  readonly toolCalls = 'daemon';
  readonly sessionRequired: boolean;
  readonly retry = undefined;
  readonly sendJson = undefined;
  readonly #url: string | URL;
  readonly #dialect: Dialect;
  readonly #token: string | undefined;
  readonly #fetch: typeof fetch;

  constructor(url: string | URL, dialect: 'typed' | 'named' | Dialect, token: string | undefined, fetcher: typeof fetch) {
    this.#url = url;
    this.#dialect = dialect === 'typed' ? typedEventDialect : dialect === 'named' ? namedEventDialect : dialect;
    this.#token = token || undefined;
    this.#fetch = fetcher;
    this.sessionRequired = this.#dialect.session === 'required';
    this.name = `${this.#dialect.name}@${hostOf(url)}`;
  }

  get secrets(): readonly string[] {
    return this.#token === undefined ? [] : [this.#token];
  }

  post(request: GatewayRequest, sessionId: string | undefined, signal: AbortSignal): Promise<Response> {
    const body = this.#dialect.request({ message: messageOf(request), sessionId, request: request.raw });
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'text/event-stream' };
    if (this.#token !== undefined) headers.authorization = `Bearer ${this.#token}`;
    return this.#fetch(this.#url, { method: 'POST', headers, body: JSON.stringify(body), signal });
  }

  read(response: Response, options: UpstreamReadOptions): AsyncIterable<BridgeEvent> {
    return this.#dialect.read(response, options);
  }

  /** The dialect names the provider; the span's input is the message the daemon is sent. */
  startSpan(request: GatewayRequest, parent: RequestSpan): ModelSpan {
    const body = { model: request.model, messages: [{ role: 'user', content: messageOf(request) }] };
    return parent.startUpstream(this.#dialect.name, urlOf(this.#url), 'daemon', body, this.secrets);
  }
}

/** What a daemon is sent: the text of the last user turn. */
function messageOf(request: GatewayRequest): string {
  const last = request.turns.findLast((turn) => turn.role === 'user');
  return last?.role === 'user' ? partsText(last.parts) : '';
}

/**
 * Node's largest timer, as the Transport's own limit on one attempt's headers: the gateway's UpstreamWatch bounds
 * the headers of every attempt together (`upstreamTimeouts.headers`), so an attempt needs no limit of its own.
 */
const MAX_TIMER_MS = 2_147_483_647;

/** A provider that speaks one of the protocols, through a Transport of its preset. */
class ProviderTarget implements UpstreamTarget {
  readonly name: string;
  readonly protocol: GatewayProtocol;
  readonly onUnsupported: OnUnsupported;
  readonly state: ConversationState;
  readonly toolCalls = 'client';
  readonly sessionRequired = false;
  readonly retry: RetryPolicy;
  readonly #transport: Transport;
  readonly #codec: ProtocolCodec;
  readonly #model: string | undefined;
  /** The API root, for the span's server address. */
  readonly #server: URL | undefined;

  constructor(
    preset: ProviderPreset,
    codec: ProtocolCodec,
    key: string | undefined,
    route: {
      upstreamModel?: string | undefined;
      onUnsupported?: OnUnsupported | undefined;
      accessToken?: AccessTokenSource | undefined;
      state?: ConversationState | undefined;
    },
    calls: UpstreamCalls,
  ) {
    // A missing key sends no auth header, as a request without one: the upstream's 401 says so, not the gateway.
    this.#transport = new Transport({
      provider: { ...preset, apiKeyOptional: true },
      ...(key ? { apiKey: key } : {}),
      ...(route.accessToken ? { accessToken: route.accessToken } : {}),
      fetch: calls.fetch,
      maxRetries: calls.maxRetries,
      backoff: calls.backoff,
      timeout: MAX_TIMER_MS,
    });
    this.retry = this.#transport.streamRetry();
    this.#codec = codec;
    this.protocol = codec.name;
    this.onUnsupported = route.onUnsupported ?? 'drop';
    this.state = route.state ?? 'gateway';
    if (this.state === 'upstream' && codec.name !== 'responses')
      throw new RangeError(`state: 'upstream' needs a Responses upstream; a ${codec.name} one keeps no conversations`);
    this.#model = route.upstreamModel;
    this.#server = urlOf(preset.baseURL);
    this.name = `${codec.name}@${hostOf(preset.baseURL)}`;
  }

  /** The key, or the access token last fetched: a token changes while the gateway runs, so it is read each time. */
  get secrets(): readonly string[] {
    return this.#transport.secrets();
  }

  post(
    request: GatewayRequest,
    _sessionId: string | undefined,
    signal: AbortSignal,
    budget: RetryBudget = {},
  ): Promise<Response> {
    const { path, query } = this.#codec.endpoint?.(this.#model ?? request.model) ?? { path: this.#codec.path };
    return this.#transport.request(path, {
      method: 'POST',
      body: this.#body(request),
      options: {
        ...budget,
        signal,
        headers: { accept: 'text/event-stream', ...this.#codec.upstreamHeaders },
        ...(query && { query }),
      },
    });
  }

  forward(body: Record<string, unknown>, signal: AbortSignal): Promise<Response> {
    const accept = body.stream === true ? 'text/event-stream' : 'application/json';
    return this.#transport.request(this.#codec.path, {
      method: 'POST',
      body: { ...body, model: this.#model ?? body.model },
      options: { signal, headers: { accept } },
    });
  }

  read(response: Response, options: UpstreamReadOptions): AsyncIterable<BridgeEvent> {
    const { quirks, streamFraming } = this.#transport.provider;
    return this.#codec.read(response, { ...options, quirks, framing: streamFraming });
  }

  startSpan(request: GatewayRequest, parent: RequestSpan): ModelSpan {
    const { name } = this.#transport.provider;
    return parent.startUpstream(name, this.#server, this.#codec.name, this.#body(request), this.secrets);
  }

  sendJson(path: string, body: Record<string, unknown>, signal: AbortSignal): Promise<unknown> {
    return this.#transport.json(path, { body: this.#model ? { ...body, model: this.#model } : body, options: { signal } });
  }

  #body(request: GatewayRequest): Record<string, unknown> {
    return this.#codec.body(request, this.#model ?? request.model);
  }
}

/** A preset as the upstream: its URL, auth and key variable, and the codec of the protocol it declares. */
function presetTarget(spec: Extract<UpstreamSpec, { provider: unknown }>, calls: UpstreamCalls): ProviderTarget {
  const preset = resolveProvider(spec.provider);
  if (!preset.baseURL) throw new RangeError(`The ${preset.name} preset has no URL of its own: give upstream and protocol`);
  const protocol = preset.protocol ?? 'chat';
  const target = new ProviderTarget(preset, CODECS[protocol], spec.upstreamToken, spec, calls);
  // Refused at the start, as a routing file's unset keyEnv is: every request would otherwise go out keyless. An
  // access token (Vertex AI) is fetched with the first request.
  const tokens = preset.accessToken !== undefined || spec.accessToken !== undefined;
  if (preset.auth !== 'none' && !preset.apiKeyOptional && !tokens && target.secrets.length === 0) {
    const variables = preset.apiKeyEnv.length ? `set ${preset.apiKeyEnv.join(' or ')}, or give` : 'give';
    throw new RangeError(`The ${preset.name} preset needs an API key: ${variables} upstreamToken`);
  }
  return target;
}

/**
 * A provider at a URL of the user's: no key variable is read (a vendor's key must never reach an arbitrary URL);
 * the auth style is the protocol's (`x-api-key` for Messages, `x-goog-api-key` for Gemini, a bearer token for the
 * OpenAI two).
 */
function urlPreset(upstream: string | URL, protocol: GatewayProtocol): ProviderPreset {
  const vendor = URL_PRESETS[protocol];
  const base = resolveProvider(vendor.preset);
  return { ...base, name: vendor.name, baseURL: String(upstream), apiKeyEnv: [], protocol };
}

/** The preset whose auth style a URL upstream of each protocol takes, and the provider name its spans report. */
const URL_PRESETS: Readonly<Record<GatewayProtocol, { preset: ProviderName; name: string }>> = {
  chat: { preset: 'openai-compatible', name: 'openai' },
  responses: { preset: 'openai-compatible', name: 'openai' },
  messages: { preset: 'anthropic', name: 'anthropic' },
  gemini: { preset: 'gemini', name: 'gemini' },
};

/** Resolves one upstream spec. */
export function targetOf(spec: UpstreamSpec, calls: UpstreamCalls): UpstreamTarget {
  if ('provider' in spec) return presetTarget(spec, calls);
  if ('dialect' in spec) return new DaemonTarget(spec.upstream, spec.dialect, spec.upstreamToken, calls.fetch);
  return new ProviderTarget(urlPreset(spec.upstream, spec.protocol), CODECS[spec.protocol], spec.upstreamToken, spec, calls);
}

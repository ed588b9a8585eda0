/**
 * Where a request goes: a daemon that speaks its own dialect, or a provider that speaks one of the three protocols;
 * several of them chosen by model name through a routing table. Keys live in `#private` fields, so that a target can be
 * logged or inspected without showing them.
 */
import { type ProviderName, resolveProvider } from '@ai4ts/core';
import type { Dialect } from '../dialect.js';
import { namedEventDialect } from '../dialects/named.js';
import { typedEventDialect } from '../dialects/typed.js';
import type { ModelSpan } from '@ai4ts/core/internal';
import type { BridgeEvent } from '../events.js';
import { chatFace } from './chat.js';
import { messagesFace } from './messages.js';
import { type GatewayProtocol, type GatewayRequest, partsText, type ProtocolFace, type UpstreamReadOptions } from './neutral.js';
import { responsesFace } from './responses.js';
import type { RequestSpan } from './telemetry.js';

/** The three protocols' faces, by name. */
export const FACES: Readonly<Record<GatewayProtocol, ProtocolFace>> = {
  chat: chatFace,
  responses: responsesFace,
  messages: messagesFace,
};

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
      /** Its API key (bearer for chat and responses, `x-api-key` for messages). */
      upstreamToken?: string | undefined;
      /** The model name sent upstream; the client's by default. */
      upstreamModel?: string | undefined;
    }
  | {
      /** A preset of @ai4ts/core (`openai`, `anthropic`, `deepseek`, ...): its URL, protocol and key variable. */
      provider: ProviderName;
      /** The key; the preset's environment variable by default. */
      upstreamToken?: string | undefined;
      upstreamModel?: string | undefined;
    };

/** What the gateway needs of an upstream. */
export interface UpstreamTarget {
  /** How access logs name it: its kind and host, never a key. */
  readonly name: string;
  /** Who runs the tool calls of its answers: a daemon runs its own; a provider's are the client's. */
  readonly toolCalls: 'daemon' | 'client';
  /** A dialect that requires a session id (a UUID is made when the request has none). */
  readonly sessionRequired: boolean;
  /** Its keys, scrubbed from everything the gateway sends. */
  readonly secrets: readonly string[];
  /** Sends the request; rejects as fetch does. */
  post(request: GatewayRequest, sessionId: string | undefined, signal: AbortSignal): Promise<Response>;
  /** Reads its answer into bridge events. */
  read(response: Response, options: UpstreamReadOptions): AsyncIterable<BridgeEvent>;
  /** Starts the span of one call to it, under the gateway request's: the `chat {model}` span of core's clients. */
  startSpan(request: GatewayRequest, parent: RequestSpan): ModelSpan;
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

/** A daemon that streams its own dialect. */
class DaemonTarget implements UpstreamTarget {
  readonly name: string;
  readonly toolCalls = 'daemon';
  readonly sessionRequired: boolean;
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
    return parent.startUpstream(this.#dialect.name, urlOf(this.#url), 'daemon', body);
  }
}

/** What a daemon is sent: the text of the last user turn. */
function messageOf(request: GatewayRequest): string {
  const last = request.turns.findLast((turn) => turn.role === 'user');
  return last?.role === 'user' ? partsText(last.parts) : '';
}

/** A provider that speaks one of the three protocols. */
class ProviderTarget implements UpstreamTarget {
  readonly name: string;
  readonly toolCalls = 'client';
  readonly sessionRequired = false;
  readonly #url: string;
  readonly #face: ProtocolFace;
  readonly #key: string | undefined;
  readonly #model: string | undefined;
  readonly #headers: Record<string, string>;
  readonly #fetch: typeof fetch;
  /** `gen_ai.provider.name`: the preset's name, else the protocol's maker. */
  readonly #provider: string;

  constructor(
    root: string | URL,
    face: ProtocolFace,
    key: string | undefined,
    model: string | undefined,
    headers: Record<string, string>,
    fetcher: typeof fetch,
    provider = face.name === 'messages' ? 'anthropic' : 'openai',
  ) {
    this.#url = `${String(root).replace(/\/+$/, '')}${face.path.replace(/^\/v1/, '')}`;
    this.#provider = provider;
    this.#face = face;
    this.#key = key || undefined;
    this.#model = model;
    this.#headers = headers;
    this.#fetch = fetcher;
    this.name = `${face.name}@${hostOf(root)}`;
  }

  get secrets(): readonly string[] {
    return this.#key === undefined ? [] : [this.#key];
  }

  post(request: GatewayRequest, _sessionId: string | undefined, signal: AbortSignal): Promise<Response> {
    const headers = {
      'content-type': 'application/json',
      accept: 'text/event-stream',
      ...this.#headers,
      ...this.#face.authHeaders(this.#key),
    };
    const body = JSON.stringify(this.#body(request));
    return this.#fetch(this.#url, { method: 'POST', headers, body, signal });
  }

  read(response: Response, options: UpstreamReadOptions): AsyncIterable<BridgeEvent> {
    return this.#face.read(response, options);
  }

  startSpan(request: GatewayRequest, parent: RequestSpan): ModelSpan {
    return parent.startUpstream(this.#provider, urlOf(this.#url), this.#face.name, this.#body(request));
  }

  #body(request: GatewayRequest): Record<string, unknown> {
    return this.#face.body(request, this.#model ?? request.model);
  }
}

/** The protocol a preset speaks: Anthropic's is Messages, every other preset's Chat Completions. */
function presetTarget(spec: Extract<UpstreamSpec, { provider: ProviderName }>, fetcher: typeof fetch): ProviderTarget {
  const preset = resolveProvider(spec.provider);
  if (!preset.baseURL) throw new RangeError(`The ${preset.name} preset has no URL of its own: give upstream and protocol`);
  // Read only here, on a server: fetch-style runtimes without `process` give the key in the spec.
  const env = typeof process === 'undefined' ? {} : process.env;
  const key = spec.upstreamToken ?? preset.apiKeyEnv.map((name) => env[name]).find(Boolean);
  const face = preset.auth === 'x-api-key' ? messagesFace : chatFace;
  return new ProviderTarget(preset.baseURL, face, key, spec.upstreamModel, preset.headers ?? {}, fetcher, preset.name);
}

/** Resolves one upstream spec. */
export function targetOf(spec: UpstreamSpec, fetcher: typeof fetch): UpstreamTarget {
  if ('provider' in spec) return presetTarget(spec, fetcher);
  if ('dialect' in spec) return new DaemonTarget(spec.upstream, spec.dialect, spec.upstreamToken, fetcher);
  return new ProviderTarget(spec.upstream, FACES[spec.protocol], spec.upstreamToken, spec.upstreamModel, {}, fetcher);
}

/** A route of the table: a model pattern (`*` matches any run of characters) and its upstream. */
export type RouteSpec = UpstreamSpec & { model: string };

/** The upstreams by model pattern; the first route that matches wins. */
export class Router {
  readonly #routes: { pattern: RegExp; target: UpstreamTarget }[];

  constructor(routes: readonly RouteSpec[], fetcher: typeof fetch) {
    this.#routes = routes.map((route) => ({ pattern: globPattern(route.model), target: targetOf(route, fetcher) }));
  }

  /** The target for a model, or undefined when no route matches. */
  pick(model: string): UpstreamTarget | undefined {
    return this.#routes.find((route) => route.pattern.test(model))?.target;
  }

  /** Every key of every route. */
  get secrets(): readonly string[] {
    return this.#routes.flatMap((route) => route.target.secrets);
  }
}

function globPattern(glob: string): RegExp {
  const source = glob.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*');
  return new RegExp(`^${source}$`);
}

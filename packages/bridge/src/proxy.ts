/**
 * An OpenAI-compatible endpoint in front of a daemon that streams its own SSE dialect:
 * `POST /v1/chat/completions` (streaming converts live, non-streaming aggregates) and `GET /v1/models`.
 * One request path for both server styles: `handle` builds a reply, the node and fetch adapters send it.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AbortError, ApiError, ConnectionError } from '@ai4ts/core';
import type { SseMessage } from '@ai4ts/sse';
import type { Dialect } from './dialect.js';
import { namedEventDialect } from './dialects/named.js';
import { typedEventDialect } from './dialects/typed.js';
import { lastUserText, ProxyRequestSchema, requestSessionId } from './request.js';
import { sseResponse, writeSse } from './server.js';
import { type OpenAIErrorObject, openAIErrorObject, toOpenAICompletion, toOpenAISse } from './writers.js';

/** Largest request body accepted. */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

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
}

/** The proxy's two faces: a node:http request listener and a fetch handler. */
export interface OpenAIProxy {
  /** For `http.createServer(proxy.node)`. A client that disconnects aborts the upstream request. */
  node(req: IncomingMessage, res: ServerResponse): void;
  /** For fetch-style servers; `request.signal` or cancelling the body aborts the upstream request. */
  fetch(request: Request): Promise<Response>;
}

interface Reply {
  status: number;
  headers: Record<string, string>;
  body?: unknown;
  stream?: AsyncIterable<SseMessage>;
}

interface Incoming {
  method: string;
  path: string;
  header(name: string): string | undefined;
  text(): Promise<string>;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly error: OpenAIErrorObject,
    readonly headers: Record<string, string> = {},
  ) {
    super(error.message);
  }
}

/** Creates the proxy. See docs/proxy.md for the routes, auth, errors and session ids. */
export function createOpenAIProxy(options: OpenAIProxyOptions): OpenAIProxy {
  const dialect =
    options.dialect === 'typed' ? typedEventDialect : options.dialect === 'named' ? namedEventDialect : options.dialect;
  const tokens =
    options.auth === undefined ? undefined : typeof options.auth === 'string' ? [options.auth] : options.auth;
  const model = options.model ?? 'daemon';
  const doFetch = options.fetch ?? fetch;
  const cors: Record<string, string> = options.cors
    ? {
        'access-control-allow-origin': options.cors,
        'access-control-expose-headers': 'x-session-id, retry-after',
        ...(options.cors === '*' ? {} : { vary: 'Origin' }),
      }
    : {};

  async function handle(request: Incoming, controller: AbortController): Promise<Reply> {
    const path = request.path.replace(/\/+$/, '');
    if (request.method === 'OPTIONS' && options.cors)
      return {
        status: 204,
        headers: {
          'access-control-allow-methods': 'GET, POST, OPTIONS',
          'access-control-allow-headers': 'authorization, content-type',
          'access-control-max-age': '600',
        },
      };
    if (path !== '/v1/chat/completions' && path !== '/v1/models')
      throw new HttpError(404, invalid(`Unknown route ${request.method} ${request.path}`, null, 'not_found'));
    const expected = path === '/v1/models' ? 'GET' : 'POST';
    if (request.method !== expected)
      throw new HttpError(405, invalid(`Use ${expected} for ${path}`, null, 'method_not_allowed'), { allow: expected });
    authorize(request.header('authorization'));
    if (path === '/v1/models')
      return {
        status: 200,
        headers: {},
        body: { object: 'list', data: [{ id: model, object: 'model', created: 0, owned_by: 'ai4ts-bridge' }] },
      };
    return complete(await request.text(), controller);
  }

  function authorize(header: string | undefined): void {
    if (!tokens) return;
    const token = /^Bearer\s+(.+)$/i.exec(header ?? '')?.[1]?.trim() ?? '';
    if (!tokens.some((t) => sameText(t, token)))
      throw new HttpError(401, invalid('Incorrect or missing bearer token', null, 'invalid_api_key'), {
        'www-authenticate': 'Bearer',
      });
  }

  async function complete(text: string, controller: AbortController): Promise<Reply> {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new HttpError(400, invalid('The request body is not valid JSON', null, 'invalid_json'));
    }
    const parsed = ProxyRequestSchema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const param = issue?.path.join('.') || null;
      throw new HttpError(400, invalid(`${param ?? 'body'}: ${issue?.message ?? 'invalid request'}`, param));
    }
    const request = parsed.data;
    const message = lastUserText(request);
    if (message === undefined) throw new HttpError(400, invalid('messages must contain a user message', 'messages'));
    const sessionId = requestSessionId(request) ?? (dialect.session === 'required' ? crypto.randomUUID() : undefined);

    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'text/event-stream' };
    if (options.upstreamToken) headers.authorization = `Bearer ${options.upstreamToken}`;
    let response: Response;
    try {
      response = await doFetch(options.upstream, {
        method: 'POST',
        headers,
        body: JSON.stringify(dialect.request({ message, sessionId, request })),
        signal: controller.signal,
      });
    } catch (cause) {
      throw controller.signal.aborted
        ? new AbortError('The client disconnected', { cause })
        : new ConnectionError('The upstream could not be reached', { cause });
    }
    const events = dialect.read(response, { signal: controller.signal });
    const writer = { model: request.model, ...(sessionId === undefined ? {} : { sessionId }) };

    if (!request.stream) {
      const completion = await toOpenAICompletion(events, writer);
      const id = completion.session_id;
      return { status: 200, headers: id === undefined ? {} : { 'x-session-id': id }, body: completion };
    }
    // Pull the first chunk before answering: a failure before any output is still an HTTP error.
    const chunks = toOpenAISse(events, { ...writer, includeUsage: request.stream_options?.include_usage === true });
    const first = await chunks.next();
    return {
      status: 200,
      headers: sessionId === undefined ? {} : { 'x-session-id': sessionId },
      stream: prepend(first, chunks),
    };
  }

  function failure(error: unknown): Reply {
    if (error instanceof HttpError)
      return { status: error.status, headers: error.headers, body: { error: error.error } };
    if (error instanceof ApiError && error.status === 429) {
      const retryAfter = error.headers?.get('retry-after');
      return {
        status: 429,
        headers: retryAfter ? { 'retry-after': retryAfter } : {},
        body: {
          error: {
            message: `The upstream is rate limited: ${error.message}`,
            type: 'rate_limit_error',
            param: null,
            code: 'rate_limit_exceeded',
          },
        },
      };
    }
    const body = openAIErrorObject(error);
    if (error instanceof ApiError && error.status !== undefined)
      body.message = `The upstream answered ${error.message}`;
    return { status: 502, headers: {}, body: { error: body } };
  }

  return {
    node(req, res) {
      const controller = new AbortController();
      res.on('close', () => {
        if (!res.writableFinished) controller.abort(new Error('The client disconnected'));
      });
      const incoming: Incoming = {
        method: req.method ?? 'GET',
        path: new URL(req.url ?? '/', 'http://localhost').pathname,
        header: (name) => {
          const value = req.headers[name];
          return Array.isArray(value) ? value[0] : value;
        },
        text: () => readBody(req),
      };
      handle(incoming, controller)
        .catch(failure)
        .then((reply) => {
          if (res.destroyed) return;
          const headers = { ...cors, ...reply.headers };
          if (reply.stream) {
            writeSse(res, reply.stream, { headers, heartbeatMs: options.heartbeatMs }).catch(() => {});
            return;
          }
          res.writeHead(
            reply.status,
            reply.body === undefined ? headers : { 'content-type': 'application/json', ...headers },
          );
          res.end(reply.body === undefined ? undefined : JSON.stringify(reply.body));
        })
        .catch(() => res.destroy());
    },

    async fetch(request) {
      const controller = new AbortController();
      const abort = () => controller.abort(request.signal.reason);
      if (request.signal.aborted) abort();
      else request.signal.addEventListener('abort', abort, { once: true });
      const url = new URL(request.url);
      const incoming: Incoming = {
        method: request.method,
        path: url.pathname,
        header: (name) => request.headers.get(name) ?? undefined,
        text: async () => {
          if (Number(request.headers.get('content-length')) > MAX_BODY_BYTES) throw tooLarge();
          const text = await request.text();
          if (text.length > MAX_BODY_BYTES) throw tooLarge();
          return text;
        },
      };
      const reply = await handle(incoming, controller).catch(failure);
      const headers = { ...cors, ...reply.headers };
      const { stream } = reply;
      if (stream)
        return sseResponse(
          (signal) => {
            signal.addEventListener('abort', () => controller.abort(signal.reason), { once: true });
            return stream;
          },
          { headers, heartbeatMs: options.heartbeatMs },
        );
      if (reply.body === undefined) return new Response(null, { status: reply.status, headers });
      return Response.json(reply.body, { status: reply.status, headers });
    },
  };
}

function invalid(message: string, param: string | null = null, code: string | null = null): OpenAIErrorObject {
  return { message, type: 'invalid_request_error', param, code };
}

function tooLarge(): HttpError {
  return new HttpError(413, invalid(`The request body exceeds ${MAX_BODY_BYTES} bytes`, null, 'request_too_large'));
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.on('end', () => (size > MAX_BODY_BYTES ? reject(tooLarge()) : resolve(Buffer.concat(chunks).toString('utf8'))));
    req.on('error', reject);
    req.on('close', () => reject(new Error('The client left before sending the whole body'))); // no-op after 'end'
  });
}

async function* prepend<T>(first: IteratorResult<T>, rest: AsyncIterator<T>): AsyncGenerator<T> {
  if (first.done) return;
  try {
    yield first.value;
    for (let next = await rest.next(); !next.done; next = await rest.next()) yield next.value;
  } finally {
    await rest.return?.();
  }
}

/** Compares two tokens in time that depends only on their lengths. */
function sameText(a: string, b: string): boolean {
  let diff = a.length ^ b.length;
  for (let i = 0; i < Math.max(a.length, b.length); i++) diff |= (a.charCodeAt(i) | 0) ^ (b.charCodeAt(i) | 0);
  return diff === 0;
}

/** Routing: one request in, one {@link Reply} out, whichever server received it. */
import { ApiError, ConnectionError, TimeoutError } from '@ai4ts/core';
import { abortError, ENGLISH, redact } from '@ai4ts/core/internal';
import type { CompletionOptions } from '../completion.js';
import type { BridgeEvent } from '../events.js';
import { lastUserText, type ProxyRequest, ProxyRequestSchema, requestSessionId } from '../request.js';
import { openAIErrorObject, toOpenAICompletion, toOpenAISse } from '../writers.js';
import { HttpError, type Incoming, invalid, type ProxyContext, type Reply } from './context.js';
import { UpstreamWatch } from './timeouts.js';

const CHAT = '/v1/chat/completions';
const MODELS = '/v1/models';

/**
 * Answers one request: the CORS preflight, 404 and 405, the bearer check, then the route. Throws what
 * {@link errorReply} turns into a reply.
 */
export async function route(context: ProxyContext, request: Incoming, signal: AbortSignal): Promise<Reply> {
  const path = request.path.replace(/\/+$/, '');
  if (request.method === 'OPTIONS' && context.cors) return preflight();
  if (path !== CHAT && path !== MODELS)
    throw new HttpError(404, invalid(`Unknown route ${request.method} ${request.path}`, null, 'not_found'));
  const expected = path === MODELS ? 'GET' : 'POST';
  if (request.method !== expected)
    throw new HttpError(405, invalid(`Use ${expected} for ${path}`, null, 'method_not_allowed'), { allow: expected });
  context.auth.check(request.header('authorization'));
  if (path === MODELS) return models(context);
  return complete(context, parseRequest(await request.text()), signal);
}

function preflight(): Reply {
  return {
    status: 204,
    headers: {
      'access-control-allow-methods': 'GET, POST, OPTIONS',
      'access-control-allow-headers': 'authorization, content-type',
      'access-control-max-age': '600',
    },
  };
}

function models(context: ProxyContext): Reply {
  return {
    status: 200,
    headers: {},
    body: { object: 'list', data: [{ id: context.model, object: 'model', created: 0, owned_by: 'ai4ts-bridge' }] },
  };
}

/** The body checked with zod; a 400 naming the first bad field otherwise. */
function parseRequest(text: string): ProxyRequest {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new HttpError(400, invalid('The request body is not valid JSON', null, 'invalid_json'));
  }
  const parsed = ProxyRequestSchema.safeParse(json, ENGLISH);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const param = issue?.path.join('.') || null;
  throw new HttpError(400, invalid(`${param ?? 'body'}: ${issue?.message ?? 'invalid request'}`, param));
}

/** `POST /v1/chat/completions`: one upstream call, streamed live or aggregated. */
async function complete(context: ProxyContext, request: ProxyRequest, signal: AbortSignal): Promise<Reply> {
  const { dialect } = context.upstream;
  const message = lastUserText(request);
  if (message === undefined) throw new HttpError(400, invalid('messages must contain a user message', 'messages'));
  const sessionId = requestSessionId(request) ?? (dialect.session === 'required' ? crypto.randomUUID() : undefined);

  if (!request.stream) return completeOnce(context, request, message, sessionId, signal);
  // Taken before the daemon is contacted: past the cap the answer is a 503 that costs the daemon nothing.
  const slot = context.streams.take(signal);
  try {
    const events = await readUpstream(context, request, message, sessionId, signal);
    // Pull the first chunk before answering: a failure before any output is still an HTTP error.
    const chunks = toOpenAISse(events, {
      ...writerOptions(request, sessionId),
      includeUsage: request.stream_options?.include_usage === true,
    });
    const first = await chunks.next();
    return {
      status: 200,
      headers: sessionId === undefined ? {} : { 'x-session-id': sessionId },
      stream: slot.around(prepend(first, chunks)),
    };
  } catch (error) {
    slot.release();
    throw error;
  }
}

/** A non-stream answer: the daemon's stream aggregated into one completion. */
async function completeOnce(
  context: ProxyContext,
  request: ProxyRequest,
  message: string,
  sessionId: string | undefined,
  signal: AbortSignal,
): Promise<Reply> {
  const events = await readUpstream(context, request, message, sessionId, signal);
  const completion = await toOpenAICompletion(events, writerOptions(request, sessionId));
  const id = completion.session_id;
  return { status: 200, headers: id === undefined ? {} : { 'x-session-id': id }, body: completion };
}

function writerOptions(request: ProxyRequest, sessionId: string | undefined): CompletionOptions {
  return { model: request.model, ...(sessionId === undefined ? {} : { sessionId }) };
}

/** The daemon's events for one request, within the upstream timeouts. */
async function readUpstream(
  context: ProxyContext,
  request: ProxyRequest,
  message: string,
  sessionId: string | undefined,
  signal: AbortSignal,
): Promise<AsyncIterable<BridgeEvent>> {
  const { dialect } = context.upstream;
  const watch = new UpstreamWatch(signal, context.timeouts);
  const response = await callUpstream(context, dialect.request({ message, sessionId, request }), watch, signal);
  return watch.events(dialect.read(response, { signal: watch.signal, secrets: context.secrets }));
}

/**
 * The upstream POST within the headers timeout; an AbortError when the client left meanwhile, the TimeoutError when
 * the daemon did not answer in time, a ConnectionError when it cannot be reached.
 */
async function callUpstream(
  context: ProxyContext,
  body: unknown,
  watch: UpstreamWatch,
  signal: AbortSignal,
): Promise<Response> {
  try {
    return await watch.headers(context.upstream.post(body, watch.signal));
  } catch (cause) {
    if (signal.aborted) throw abortError(signal);
    if (cause instanceof TimeoutError) throw cause;
    // The cause's message is not quoted: it may name the upstream's address, which is not the client's business.
    throw new ConnectionError('The upstream could not be reached', { cause });
  }
}

/**
 * The reply for a failure before any output: the proxy's own HttpError as is, an upstream timeout a 504, the
 * daemon's 429 as a 429 with its Retry-After, anything else a 502 `upstream_error`. No secret of the context appears in it.
 */
export function errorReply(context: ProxyContext, error: unknown): Reply {
  if (error instanceof HttpError) return { status: error.status, headers: error.headers, body: { error: error.error } };
  if (error instanceof TimeoutError) return { status: 504, headers: {}, body: { error: openAIErrorObject(error) } };
  if (error instanceof ApiError && error.status === 429) {
    const retryAfter = error.headers?.get('retry-after');
    return {
      status: 429,
      headers: retryAfter ? { 'retry-after': retryAfter } : {},
      body: {
        error: {
          message: redact(`The upstream is rate limited: ${error.message}`, context.secrets),
          type: 'rate_limit_error',
          param: null,
          code: 'rate_limit_exceeded',
        },
      },
    };
  }
  const body = openAIErrorObject(error);
  body.message = redact(
    error instanceof ApiError && error.status !== undefined ? `The upstream answered ${error.message}` : body.message,
    context.secrets,
  );
  return { status: 502, headers: {}, body: { error: body } };
}

/**
 * `first`, then the rest. An iterator object rather than a generator: `return()` reaches `rest` (and so the upstream
 * read) even when the answer fails before its first message was taken.
 */
function prepend<T>(first: IteratorResult<T>, rest: AsyncIterator<T>): AsyncIterableIterator<T> {
  let pending: IteratorResult<T> | undefined = first;
  const iterator: AsyncIterableIterator<T> = {
    [Symbol.asyncIterator]: () => iterator,
    async next() {
      const next = pending ?? (await rest.next());
      pending = undefined;
      return next;
    },
    async return() {
      pending = undefined;
      await rest.return?.();
      return { done: true, value: undefined };
    },
  };
  return iterator;
}

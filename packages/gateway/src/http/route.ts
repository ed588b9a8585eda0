/** Routing: one request in, one {@link Reply} out, whichever server received it. */
import { ApiError, ConnectionError, priceOf, type RetryPolicy, TimeoutError } from '@ai4ts/core';
import {
  abortError,
  DROPPED_HEADER,
  isRecord,
  type ModelSpan,
  RESUMABLE_HEADER,
  redact,
  requestIdOf,
  type ResultSummary,
  STREAM_ID_HEADER,
  sleep,
  toAi4tsError,
} from '@ai4ts/core/internal';
import { type BridgeEvent, openAIErrorObject } from '@ai4ts/bridge';
import type { SseMessage } from '@ai4ts/sse';
import { badRequest, checkDepth } from '../codecs/bad-request.js';
import { CODECS } from '../codecs/index.js';
import {
  type GatewayErrorObject,
  type GatewayRequest,
  type PathRoute,
  type ProtocolCodec,
  uncarried,
  type WriteOptions,
} from '../codecs/neutral.js';
import type { GatewayContext } from '../context.js';
import { storeFailed, streamGone } from '../state/store.js';
import { type RequestSpan, traced } from '../telemetry.js';
import type { Answered, UpstreamPool } from '../upstreams/pool.js';
import type { RetryBudget, UpstreamTarget } from '../upstreams/targets.js';
import { UpstreamWatch } from '../upstreams/timeouts.js';
import type { AccessLogEntry } from './access-log.js';
import type { KeyCall } from '../keys/gate.js';
import type { VirtualKey } from '../keys/key.js';
import { costUsd, usd } from '../keys/spend.js';
import { ADMIN_ROOT, admin } from './admin.js';
import { type ApiKey, tokenOf } from './auth.js';
import { answerVectors, vectorRouteOf } from './embeddings.js';
import { HttpError, invalid } from './errors.js';
import type { Incoming, Reply } from './incoming.js';
import type { StreamSlot } from './limits.js';
import { scrubMessage } from './outgoing.js';
import { ownerOf } from './owner.js';
import { passThrough } from './passthrough.js';
import { StoredTurn } from './resolve.js';
import { matchResponsesApi, runInBackground, serveResponsesApi } from './responses-api.js';

const MODELS = '/v1/models';
const STREAMS = /^\/v1\/streams\/([^/]+)$/;
const API_ROOT = '/v1';
const CODEC_BY_PATH = new Map(
  Object.values(CODECS)
    .filter((codec) => !codec.match)
    .map((codec) => [`${API_ROOT}${codec.path}`, codec]),
);
/** The codecs whose paths name the model (Gemini's), asked in turn. */
const PATH_CODECS = Object.values(CODECS).filter((codec) => codec.match);

/** The codec a path belongs to, what its path says, and its refusal of the path (a stream without `alt=sse`). */
interface Matched {
  codec: ProtocolCodec;
  route?: PathRoute | undefined;
  refused?: unknown;
}

function matchCodec(path: string, query: URLSearchParams): Matched | undefined {
  const fixed = CODEC_BY_PATH.get(path);
  if (fixed) return { codec: fixed };
  for (const codec of PATH_CODECS) {
    try {
      const route = codec.match?.(path, query);
      if (route) return { codec, route };
    } catch (refused) {
      return { codec, refused };
    }
  }
  return undefined;
}

/**
 * The upstream statuses that refuse the request itself, which the client can fix: passed on as they are. Any other
 * failure (401 and 403 included: the gateway's key, not the client's) is the gateway's, a 502.
 */
const REFUSED_REQUEST = new Set([400, 413, 422]);

/** Names the upstream that answered (or the last one asked): its name, never its URL. */
export const UPSTREAM_HEADER = 'x-ai4ts-upstream';
/** How many upstreams of the route were asked, the one that answered included (its own retries are not counted). */
export const ATTEMPTS_HEADER = 'x-ai4ts-attempts';
/** What the answer cost in US dollars, from the price table; a header, or a stream's trailer. No price, no header. */
export const COST_HEADER = 'x-ai4ts-cost';

/**
 * Answers one request and logs it: errors become replies in the shape of the protocol the path belongs to (Anthropic's
 * on `/v1/messages`, OpenAI's elsewhere). Throws only when even that failed.
 */
export async function route(context: GatewayContext, request: Incoming, signal: AbortSignal): Promise<Reply> {
  const path = request.path.replace(/\/+$/, '');
  const matched = matchCodec(path, request.query);
  const codec = matched?.codec;
  const given = request.header('x-request-id');
  const entry: AccessLogEntry = {
    time: new Date().toISOString(),
    requestId: given && /^[\w.:-]{1,128}$/.test(given) ? given : crypto.randomUUID(),
    method: request.method,
    path,
    status: 0,
    durationMs: 0,
  };
  const started = performance.now();
  const template = path === context.metrics?.path ? path : routeOf(path, codec);
  if (template !== undefined) entry.route = template;
  let span: RequestSpan | undefined;
  let reply: Reply;
  try {
    span = context.telemetry && (await context.telemetry).startRequest(request, template);
    reply = await answer(context, request, path, matched, signal, entry, span, started);
  } catch (error) {
    reply = errorReply(context, error, codec);
    if (!(error instanceof HttpError)) entry.error = openAIErrorObject(error).code ?? 'upstream_error';
  }
  reply.headers['x-request-id'] = entry.requestId;
  if (entry.upstream !== undefined) reply.headers[UPSTREAM_HEADER] = entry.upstream;
  if (entry.attempts !== undefined) reply.headers[ATTEMPTS_HEADER] = String(entry.attempts);
  if (entry.model !== undefined && priceOf(context.prices, entry.model) !== undefined) {
    // A stream's cost is known at its end (its usage, or a virtual key's settlement): a trailer.
    const cost = () => (entry.cost === undefined ? undefined : usd(entry.cost));
    if (reply.stream) reply.trailers = { [COST_HEADER]: cost };
    else {
      const value = cost();
      if (value !== undefined) reply.headers[COST_HEADER] = value;
    }
  }
  entry.status = reply.status;
  const finish = () => {
    entry.durationMs = Math.round(performance.now() - started);
    context.log?.(entry);
    span?.end(entry);
  };
  if (!reply.stream) finish();
  // Without a log or a span the end of a stream has nobody to tell: no layer over each of its messages.
  else if (context.log || span) reply.stream = onEnd(reply.stream, finish);
  return reply;
}

async function answer(
  context: GatewayContext,
  request: Incoming,
  path: string,
  matched: Matched | undefined,
  signal: AbortSignal,
  entry: AccessLogEntry,
  span: RequestSpan | undefined,
  started: number,
): Promise<Reply> {
  const codec = matched?.codec;
  if (request.method === 'OPTIONS' && context.cors) return preflight();
  if (path === context.metrics?.path) return context.metrics.scrape(request);
  if (path === '/healthz' || path === '/readyz') {
    if (request.method !== 'GET') throw notAllowed('GET', path);
    return path === '/healthz' ? { status: 200, headers: {}, body: { status: 'ok' } } : readiness(context);
  }
  if (path === ADMIN_ROOT || path.startsWith(`${ADMIN_ROOT}/`)) return admin(context, request, path);
  const vectors = vectorRouteOf(path);
  if (vectors) {
    if (request.method !== 'POST') throw notAllowed('POST', path);
    const key = await identify(context, request);
    if (key) entry.keyName = key.name;
    if (context.draining) throw shuttingDown();
    const text = await request.text();
    // A virtual key's models, limits and spend count here as on the chat routes: admitted once the model is known.
    const admit = (model: string) => (key ? context.keys?.admit(key, { model, stream: false, maxTokens: 0 }, text.length) : undefined);
    return answerVectors(context, vectors, parseJson(text), signal, entry, admit);
  }
  const stored = matchResponsesApi(request.method, path);
  if (stored) {
    const key = await identify(context, request);
    if (key) entry.keyName = key.name;
    const replay = (id: string, after: number) => resume(context, request, id, `${id}:${after}`, signal, entry);
    return serveResponsesApi(context, request, stored, replay);
  }
  const streamId = STREAMS.exec(path)?.[1];
  if (!codec && path !== MODELS && streamId === undefined)
    throw new HttpError(404, invalid(`Unknown route ${request.method} ${request.path}`, null, 'not_found'));
  const expected = codec ? 'POST' : 'GET';
  if (request.method !== expected) throw notAllowed(expected, path);
  const key = await identify(context, request);
  if (key) entry.keyName = key.name;
  if (path === MODELS) return models(context);

  const lastEventId = request.header('last-event-id');
  if (streamId !== undefined) return resume(context, request, streamId, lastEventId, signal, entry);
  const resumeFrom = lastEventId === undefined ? undefined : parseEventId(lastEventId);
  if (codec && resumeFrom) return resume(context, request, resumeFrom.id, lastEventId, signal, entry);
  if (context.draining) throw shuttingDown();
  if (!codec) throw new HttpError(404, invalid(`Unknown route ${request.path}`, null, 'not_found'));
  entry.protocol = codec.name;
  if (matched?.refused !== undefined) throw matched.refused;
  const text = await request.text();
  const json = parseJson(text);
  const upstreamState = codec.name === 'responses' ? statefulUpstream(context, json) : undefined;
  if (upstreamState) {
    entry.model = upstreamState.model;
    entry.upstream = upstreamState.target.name;
    // A virtual key is admitted as on any route; the answer passes through unread, so it is charged its input.
    const stream = upstreamState.body.stream === true;
    const call = key && (await context.keys?.admit(key, { model: upstreamState.model, stream, maxTokens: undefined }, text.length));
    let reply: Reply;
    try {
      reply = await passThrough(context, upstreamState.target, upstreamState.body, signal);
    } catch (error) {
      if (call) entry.cost = call.end(); // refused before any output: nothing spent
      throw error;
    }
    if (!call) return reply;
    Object.assign(reply.headers, call.headers);
    const settle = () => {
      entry.cost = call.endUnread();
    };
    if (reply.stream) reply.stream = onEnd(reply.stream, settle);
    else settle();
    return reply;
  }
  // Stored Responses: references resolved before translation, the answer kept (resolve.ts).
  const turn = codec.name === 'responses' ? await StoredTurn.of(context, await ownerOf(request), json) : undefined;
  const parsed = codec.parse(turn?.body ?? json, matched?.route);
  entry.model = parsed.model;
  entry.stream = parsed.stream;
  const call = key && (await context.keys?.admit(key, parsed, text.length));
  try {
    if (turn?.background)
      return await runInBackground(context, turn, parsed.stream, (owner) =>
        complete(context, codec, { ...parsed, stream: true }, owner, signal, entry, span, started, call, turn),
      );
    const resumable = codec.eventIds !== false && (context.resumable || request.header(RESUMABLE_HEADER) === '1');
    const owner = resumable ? await ownerOf(request) : undefined;
    return await complete(context, codec, parsed, owner, signal, entry, span, started, call, turn);
  } catch (error) {
    // Refused before any output (no route, the stream cap, the upstream's error): the reservation goes back.
    if (call) entry.cost = call.end();
    throw error;
  }
}

/**
 * The virtual key the request presents, checked (a 401 for one unknown, revoked or expired); else the static token
 * is checked and there is no key.
 */
async function identify(context: GatewayContext, request: Incoming): Promise<VirtualKey | undefined> {
  const authorization = request.header('authorization');
  const apiKey = apiKeyOf(request);
  const key = await context.keys?.identify(tokenOf(authorization, apiKey));
  if (!key) context.auth.check(authorization, apiKey);
  return key;
}

/** A Responses request whose route keeps its conversations upstream (`state: 'upstream'`): passed through. */
function statefulUpstream(context: GatewayContext, json: unknown) {
  if (!isRecord(json) || typeof json.model !== 'string') return undefined;
  // Such a route has one upstream: no other could read the ids it gives.
  const target = context.router.pick(json.model)?.members[0]?.target;
  return target?.state === 'upstream' ? { target, model: json.model, body: json } : undefined;
}

/**
 * The key a client sent other than as a bearer token, and where: `x-api-key` (Anthropic's clients), `x-goog-api-key`
 * or the `key=` query parameter (Gemini's).
 */
function apiKeyOf(request: Incoming): ApiKey | undefined {
  const anthropic = request.header('x-api-key');
  if (anthropic !== undefined) return { key: anthropic, source: 'the x-api-key header' };
  const google = request.header('x-goog-api-key');
  if (google !== undefined) return { key: google, source: 'the x-goog-api-key header' };
  const query = request.query.get('key');
  return query === null ? undefined : { key: query, source: 'the key query parameter' };
}

/** The route template a path matched (`http.route`); undefined when no route serves it. */
function routeOf(path: string, codec: ProtocolCodec | undefined): string | undefined {
  // The model in the path is not part of the route: one template per method, whatever the model.
  if (codec?.match) return path.replace(/\/models\/[^/:]+:/, '/models/{model}:');
  if (codec) return `${API_ROOT}${codec.path}`;
  if (path === MODELS || path === '/healthz' || path === '/readyz' || vectorRouteOf(path)) return path;
  if (matchResponsesApi('GET', path)) return path.replace(/^\/v1\/responses\/[^/]+/, '/v1/responses/{id}');
  return STREAMS.test(path) ? '/v1/streams/{id}' : undefined;
}

function notAllowed(expected: string, path: string): HttpError {
  return new HttpError(405, invalid(`Use ${expected} for ${path}`, null, 'method_not_allowed'), { allow: expected });
}

function shuttingDown(): HttpError {
  return new HttpError(
    503,
    { message: 'The gateway is shutting down; retry on another instance', type: 'server_error', param: null, code: 'shutting_down' },
    { 'retry-after': '1' },
  );
}

function preflight(): Reply {
  return {
    status: 204,
    headers: {
      'access-control-allow-methods': 'GET, POST, OPTIONS',
      'access-control-allow-headers':
        'authorization, content-type, x-api-key, x-goog-api-key, anthropic-version, last-event-id, x-ai4ts-resumable, x-request-id',
      'access-control-max-age': '600',
    },
  };
}

/**
 * Ready unless draining, the stream store is unreachable, or (with virtual keys) their store or counters are. The upstreams cooling down are named, but do not make the instance
 * unready: another instance would find them cooling down just the same.
 */
async function readiness(context: GatewayContext): Promise<Reply> {
  if (context.draining) return { status: 503, headers: {}, body: { status: 'draining' } };
  const [storeReady, keysReady] = await Promise.all([context.store.ready().catch(() => false), context.keys?.ready() ?? true]);
  const cooling = context.router
    .health()
    .filter((upstream) => upstream.state === 'cooling')
    .map(({ route, upstream, cooldownUntil }) => ({ route, upstream, until: new Date(cooldownUntil ?? 0).toISOString() }));
  if (!storeReady) return { status: 503, headers: {}, body: { status: 'store_unavailable', cooling } };
  if (!keysReady) return { status: 503, headers: {}, body: { status: 'key_store_unavailable', cooling } };
  return { status: 200, headers: {}, body: { status: 'ready', cooling } };
}

function models(context: GatewayContext): Reply {
  return {
    status: 200,
    headers: {},
    body: {
      object: 'list',
      data: context.models.map((id) => ({ id, object: 'model', created: 0, owned_by: 'ai4ts-bridge' })),
    },
  };
}

function parseJson(text: string): unknown {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new HttpError(400, invalid('The request body is not valid JSON', null, 'invalid_json'));
  }
  checkDepth(json);
  return json;
}

/** A gateway event id, `<stream id>:<number>`; undefined for anything else. */
export function parseEventId(id: string): { id: string; seq: number } | undefined {
  const match = /^([0-9a-f-]{36}):(\d{1,15})$/.exec(id);
  return match?.[1] && match[2] ? { id: match[1], seq: Number(match[2]) } : undefined;
}

/** One request to the upstream, streamed live to the client or aggregated; resumable when it has an `owner`. */
async function complete(
  context: GatewayContext,
  codec: ProtocolCodec,
  request: GatewayRequest,
  owner: string | undefined,
  signal: AbortSignal,
  entry: AccessLogEntry,
  span: RequestSpan | undefined,
  started: number,
  call: KeyCall | undefined,
  turn?: StoredTurn,
): Promise<Reply> {
  const pool = context.router.pick(request.model);
  if (!pool) throw new HttpError(404, invalid(`No upstream serves the model ${request.model}`, 'model', 'model_not_found'));
  let daemonSession: string | undefined;
  const tap: Observer = {
    see(event) {
      call?.see(event);
      entry.firstEventMs ??= Math.round(performance.now() - started);
      if (event.type === 'usage') {
        const { prompt_tokens: prompt, completion_tokens: completion, total_tokens: total } = event.usage;
        entry.tokens = { prompt, completion, total };
        entry.cost = costUsd(context.prices, request.model, event.usage);
      } else if (event.type === 'done') daemonSession = event.sessionId ?? daemonSession;
    },
    // A stream that fails after its first message is still a 200: the log and the span say it failed.
    failed(error) {
      entry.error = openAIErrorObject(error).code ?? 'upstream_error';
    },
  };

  // A virtual key's call is settled once, when its answer ends however it ends: its cost goes on the entry.
  const settle = () => {
    if (call) entry.cost = call.end();
  };
  if (!request.stream) {
    const answered = await firstAnswer(context, codec, pool, request, signal, entry, span);
    const { events, options, headers, sessionId } = answered.value;
    Object.assign(headers, call?.headers);
    try {
      const aggregated = await codec.aggregate(observe(events, tap), options);
      const body = turn ? await turn.keep(aggregated) : aggregated;
      const session = daemonSession ?? sessionId;
      if (session !== undefined) headers['x-session-id'] = session;
      return { status: 200, headers, body };
    } finally {
      answered.end();
      settle();
    }
  }

  const streamId = crypto.randomUUID();
  // A resumable generation goes on when its client leaves: it follows its own signal, not the client's.
  const generation = owner === undefined ? undefined : context.generations.start(streamId);
  const upstreamSignal = generation?.signal ?? signal;
  // Taken before the upstream is contacted: past the cap the answer is a 503 that costs the upstream nothing.
  const taken = context.streams.take(upstreamSignal);
  const slot = {
    release() {
      taken.release();
      settle();
    },
  };
  let stored = false;
  let answered: Answered<Opened> | undefined;
  try {
    // Opened before the upstream is contacted too: a store that is down or full is a quick 503.
    if (owner !== undefined) await context.store.create(streamId, { protocol: codec.name, owner });
    stored = owner !== undefined;
    answered = await firstAnswer(context, codec, pool, request, upstreamSignal, entry, span);
    const { events, options, headers, sessionId } = answered.value;
    Object.assign(headers, call?.headers);
    // Pull the first message before answering: a failure before any output is still an HTTP error. Only the access
    // log, the span, a virtual key's call and the cost trailer (a priced model) read the stream's usage and failure:
    // without them no layer watches each event.
    const watched = context.log || span || call || priceOf(context.prices, request.model) !== undefined;
    const written = codec.stream(watched ? observe(events, tap) : events, options);
    if (turn && stored) turn.streamId = streamId;
    const messages = turn ? turn.stream(codec, written) : written;
    const first = await messages.next();
    entry.streamId = streamId;
    if (sessionId !== undefined) headers['x-session-id'] = sessionId;
    headers[STREAM_ID_HEADER] = streamId;
    const { end } = answered;
    // As the slot is: the answer is no longer in flight once its signal aborts, whether or not the stream was closed.
    upstreamSignal.addEventListener('abort', end, { once: true });
    const ends = {
      release() {
        slot.release();
        end();
      },
    };
    const numbered = liveStream(codec.eventIds === false ? undefined : streamId, first, messages, ends);
    if (!generation) return { status: 200, headers, stream: numbered };
    headers[RESUMABLE_HEADER] = '1';
    void keep(context, streamId, numbered).finally(() => generation.finish());
    return { status: 200, headers, stream: withStreamError(codec, context.store.read(streamId, 0, signal)) };
  } catch (error) {
    slot.release();
    answered?.end();
    generation?.finish();
    if (stored) void context.store.end(streamId).catch(() => undefined);
    throw error;
  }
}

/** An upstream's answer under way: its events (the first already read) and how they are written for the client. */
interface Opened {
  events: AsyncIterable<BridgeEvent>;
  options: WriteOptions;
  /** The reply's headers so far: what this upstream could not be sent. */
  headers: Record<string, string>;
  sessionId: string | undefined;
}

/**
 * The first upstream of the route that gives a first event, asked in the route's order (upstreams/pool.ts). What is
 * dropped (or refused) is worked out for each upstream asked, so that `x-ai4ts-dropped` names what the one that
 * answered was not sent.
 */
function firstAnswer(
  context: GatewayContext,
  codec: ProtocolCodec,
  pool: UpstreamPool,
  request: GatewayRequest,
  signal: AbortSignal,
  entry: AccessLogEntry,
  span: RequestSpan | undefined,
): Promise<Answered<Opened>> {
  return pool.answer(async ({ name, target }, tried) => {
    entry.upstream = name;
    entry.attempts = tried;
    const sessionId = request.sessionId ?? (target.sessionRequired ? crypto.randomUUID() : undefined);
    const options: WriteOptions = { model: request.model, toolCalls: target.toolCalls, includeUsage: request.includeUsage, sessionId };
    const dropped = [...new Set([...request.dropped, ...(target.protocol ? uncarried(request, codec, CODECS[target.protocol]) : [])])];
    if (dropped.length && target.onUnsupported === 'refuse')
      throw badRequest(`The upstream of ${request.model} has no equivalent for: ${dropped.join(', ')}`, dropped[0]);
    const headers: Record<string, string> = dropped.length ? { [DROPPED_HEADER]: dropped.join(', ') } : {};
    const events = await readUpstream(context, target, request, sessionId, signal, span, entry);
    return { events, options, headers, sessionId };
  }, signal);
}

/**
 * Runs a resumable stream to its end into the store, whoever reads it: every message scrubbed before it is kept. A
 * store that fails stops the generation (nobody could read the rest), and ends the stream with that failure, so that
 * its readers end with an error rather than cleanly.
 */
async function keep(context: GatewayContext, id: string, messages: AsyncIterable<SseMessage>): Promise<void> {
  let seq = 0;
  let failure: HttpError | undefined;
  try {
    const secrets = context.secrets;
    for await (const message of messages) await context.store.append(id, ++seq, scrubMessage(message, secrets));
  } catch (error) {
    // The writers put every upstream failure into the stream; what lands here is the store's own failure.
    failure = error instanceof HttpError ? error : storeFailed('failed');
  } finally {
    await context.store.end(id, failure).catch(() => undefined);
  }
}

/**
 * A stream whose headers are sent: a failure of its source (the store's) ends it with the protocol's in-stream error,
 * never a clean end. An iterator object rather than a generator: `return()` reaches the source before any `next()`.
 */
function withStreamError(codec: ProtocolCodec, source: AsyncIterable<SseMessage>): AsyncIterableIterator<SseMessage> {
  const inner = source[Symbol.asyncIterator]();
  let failed = false;
  const iterator: AsyncIterableIterator<SseMessage> = {
    [Symbol.asyncIterator]: () => iterator,
    async next() {
      if (failed) return { done: true, value: undefined };
      try {
        return await inner.next();
      } catch (error) {
        failed = true;
        return { done: false, value: codec.streamError(error instanceof HttpError ? error.error : openAIErrorObject(error)) };
      }
    },
    async return() {
      failed = true;
      await inner.return?.();
      return { done: true, value: undefined };
    },
  };
  return iterator;
}

/**
 * A stream again, from the store: the messages after the last one the client saw, then the live rest. Only for the
 * credential that created it (anyone else is told it does not exist), with its errors in the stream's protocol, and
 * counted against `maxConcurrentStreams` like any stream.
 */
async function resume(
  context: GatewayContext,
  request: Incoming,
  id: string,
  lastEventId: string | undefined,
  signal: AbortSignal,
  entry: AccessLogEntry,
): Promise<Reply> {
  entry.streamId = id;
  entry.resumed = true;
  const from = lastEventId === undefined || lastEventId === '' ? { id, seq: 0 } : parseEventId(lastEventId);
  if (!from || from.id !== id)
    throw new HttpError(400, invalid(`Last-Event-ID does not name an event of stream ${id}`, 'last-event-id', 'invalid_event_id'));
  const info = await context.store.info(id);
  // Someone else's stream is answered as an unknown one: whether it exists is not told either.
  if (!info || info.owner !== (await ownerOf(request))) throw streamGone(id);
  const codec = CODECS[info.protocol];
  let slot: StreamSlot | undefined;
  try {
    slot = context.streams.take(signal);
    const messages = context.store.read(id, from.seq, signal)[Symbol.asyncIterator]();
    // The first read says whether the store has the stream: a 404 before any output otherwise.
    const first = await messages.next();
    const taken = slot;
    return {
      status: 200,
      headers: { [STREAM_ID_HEADER]: id, [RESUMABLE_HEADER]: '1' },
      stream: onEnd(withStreamError(codec, prepend(first, messages)), () => taken.release()),
    };
  } catch (error) {
    slot?.release();
    return errorReply(context, error, codec);
  }
}

/**
 * The live stream: `first`, then the rest, each message with its id `<stream id>:<n>` counted from 1 (none without a
 * stream id: a protocol whose clients read no ids), and the slot
 * given back however it ends (its last message, a throw, or `return()`). One layer for the three, since each layer
 * costs every message a promise. An iterator object rather than a generator: `return()` reaches `rest` (and so the
 * upstream read) even when the answer fails before its first message was taken.
 */
function liveStream(
  streamId: string | undefined,
  first: IteratorResult<SseMessage>,
  rest: AsyncIterator<SseMessage>,
  slot: Pick<StreamSlot, 'release'>,
): AsyncIterableIterator<SseMessage> {
  let pending: IteratorResult<SseMessage> | undefined = first;
  let seq = 0;
  const numbered = (next: IteratorResult<SseMessage>): IteratorResult<SseMessage> => {
    if (next.done) {
      slot.release();
      return next;
    }
    return streamId === undefined ? next : { done: false, value: withId(next.value, `${streamId}:${++seq}`) };
  };
  const failed = (error: unknown): never => {
    slot.release();
    throw error;
  };
  const iterator: AsyncIterableIterator<SseMessage> = {
    [Symbol.asyncIterator]: () => iterator,
    next() {
      const taken = pending;
      pending = undefined;
      return taken ? Promise.resolve(numbered(taken)) : rest.next().then(numbered, failed);
    },
    async return() {
      pending = undefined;
      slot.release();
      await rest.return?.();
      return { done: true, value: undefined };
    },
  };
  return iterator;
}

/**
 * The message with its id. Built field by field, not spread: a spread copy per message was a sixth of the proxy's
 * CPU time per event, and it left encodeSse reading objects of many shapes.
 */
function withId(message: SseMessage, id: string): SseMessage {
  const out: SseMessage = { data: message.data, id };
  if (message.event !== undefined) out.event = message.event;
  if (message.retry !== undefined) out.retry = message.retry;
  if (message.comment !== undefined) out.comment = message.comment;
  return out;
}

/** What watches the upstream's events on their way: each event, and the failure that ends them. */
interface Observer {
  see(event: BridgeEvent): void;
  failed(error: unknown): void;
}

/** The events, each shown to the observer on its way, and their failure before it is thrown on. */
async function* observe(events: AsyncIterable<BridgeEvent>, observer: Observer): AsyncGenerator<BridgeEvent> {
  try {
    for await (const event of events) {
      observer.see(event);
      yield event;
    }
  } catch (error) {
    observer.failed(error);
    throw error;
  }
}

/** The stream, calling `done` once when it ends however it ends (its last message, a throw, or `return()`). */
function onEnd<T>(source: AsyncIterable<T>, done: () => void): AsyncIterableIterator<T> {
  const inner = source[Symbol.asyncIterator]();
  let called = false;
  const once = () => {
    if (!called) done();
    called = true;
  };
  const iterator: AsyncIterableIterator<T> = {
    [Symbol.asyncIterator]: () => iterator,
    async next() {
      try {
        const next = await inner.next();
        if (next.done) once();
        return next;
      } catch (error) {
        once();
        throw error;
      }
    },
    async return() {
      once();
      await inner.return?.();
      return { done: true, value: undefined };
    },
  };
  return iterator;
}

/**
 * The upstream's events for one request, within the upstream timeouts; with telemetry, the call's span (a child of
 * the request's) records them. An answer that fails before its first event (a first-event timeout, a close, an
 * in-stream overload) is asked for again by the target's retry policy, as the SDK's stream handles do: nothing
 * reached the client yet (a daemon, which has none, is not). The first event is read here for every upstream, so that
 * a failure before it can move to the route's next upstream. Once an event arrived, a failure is the client's to see.
 */
async function readUpstream(
  context: GatewayContext,
  target: UpstreamTarget,
  request: GatewayRequest,
  sessionId: string | undefined,
  signal: AbortSignal,
  parent: RequestSpan | undefined,
  entry: AccessLogEntry,
): Promise<AsyncIterable<BridgeEvent>> {
  const span = parent && target.startSpan(request, parent);
  let result: ResultSummary | undefined;
  const summary = span && ((read: ResultSummary) => (result = read));
  // One budget for the retries before the headers (the Transport's) and before the first event (these).
  let retries = 0;
  const retried = () => {
    retries++;
    entry.retries = retries;
  };
  const budget = (policy: RetryPolicy): RetryBudget => ({ maxRetries: policy.maxRetries - retries, onRetry: retried });
  for (;;) {
    const attempt = target.retry && budget(target.retry);
    const opened = await openUpstream(context, target, request, sessionId, signal, span, summary, attempt);
    const events = opened[Symbol.asyncIterator]();
    let first: IteratorResult<BridgeEvent>;
    try {
      first = await events.next();
    } catch (error) {
      const failure = toAi4tsError(error, { signal });
      const delay = target.retry?.retryDelay(failure, retries);
      if (delay === undefined) {
        span?.fail(failure);
        throw failure;
      }
      retried();
      span?.retry(retries, failure.name, delay, 'stream');
      await sleep(delay, signal);
      continue;
    }
    const whole = startingWith(first, events);
    return span ? traced(span, whole, () => result) : whole;
  }
}

/** One attempt: the request within the headers timeout, then its events within the first-event and idle ones. */
async function openUpstream(
  context: GatewayContext,
  target: UpstreamTarget,
  request: GatewayRequest,
  sessionId: string | undefined,
  signal: AbortSignal,
  span: ModelSpan | undefined,
  summary: ((read: ResultSummary) => void) | undefined,
  budget: RetryBudget | undefined,
): Promise<AsyncIterable<BridgeEvent>> {
  const watch = new UpstreamWatch(signal, context.timeouts);
  let response: Response;
  try {
    response = await watch.headers(target.post(request, sessionId, watch.signal, budget));
  } catch (cause) {
    // A provider's Transport has already retried what was worth it; its ApiError carries the upstream's answer.
    const error = signal.aborted
      ? abortError(signal)
      : cause instanceof TimeoutError || cause instanceof ApiError
        ? cause
        : // The cause's message is not quoted: it may name the upstream's address, which is not the client's business.
          new ConnectionError('The upstream could not be reached', { cause });
    // The upstream answered, with an error status: the span records that answer as it does a success.
    if (error instanceof ApiError && error.status !== undefined) span?.response(error.status, error.requestId);
    span?.fail(error);
    throw error;
  }
  span?.response(response.status, requestIdOf(response.headers));
  return watch.events(target.read(response, { signal: watch.signal, secrets: context.secrets, summary }));
}

/** The events of `rest`, `first` (already read) before them; `return()` reaches `rest` even before a `next()`. */
function startingWith(first: IteratorResult<BridgeEvent>, rest: AsyncIterator<BridgeEvent>): AsyncIterableIterator<BridgeEvent> {
  let pending: IteratorResult<BridgeEvent> | undefined = first;
  const self: AsyncIterableIterator<BridgeEvent> = {
    [Symbol.asyncIterator]: () => self,
    next: () => {
      const next = pending;
      pending = undefined;
      return next ? Promise.resolve(next) : rest.next();
    },
    return: async () => {
      await rest.return?.();
      return { done: true, value: undefined };
    },
  };
  return self;
}

/**
 * The reply for a failure before any output, in the shape of `codec` (OpenAI's when none): the gateway's own
 * HttpError as is, an upstream timeout a 504, the upstream's 429 as a 429 with its Retry-After, its refusal of the
 * request itself (400, 413, 422) as that status, anything else a 502 `upstream_error`. No secret of the context
 * appears in it.
 */
export function errorReply(context: GatewayContext, error: unknown, codec?: ProtocolCodec): Reply {
  const { status, headers, body } = errorOf(context, error);
  return { status, headers, body: codec ? codec.errorBody(status, body) : { error: body } };
}

function errorOf(context: GatewayContext, error: unknown): { status: number; headers: Record<string, string>; body: GatewayErrorObject } {
  if (error instanceof HttpError) return { status: error.status, headers: error.headers, body: error.error };
  if (error instanceof TimeoutError) return { status: 504, headers: {}, body: openAIErrorObject(error) };
  if (error instanceof ApiError && error.status === 429) {
    const retryAfter = error.headers?.get('retry-after');
    return {
      status: 429,
      headers: retryAfter ? { 'retry-after': retryAfter } : {},
      body: {
        message: redact(`The upstream is rate limited: ${error.message}`, context.secrets),
        type: 'rate_limit_error',
        param: null,
        code: 'rate_limit_exceeded',
      },
    };
  }
  if (context.relayUpstreamStatus && error instanceof ApiError && error.status !== undefined) {
    const retryAfter = error.headers?.get('retry-after');
    const body = openAIErrorObject(error);
    body.message = redact(error.message, context.secrets);
    return { status: error.status, headers: retryAfter ? { 'retry-after': retryAfter } : {}, body };
  }
  if (error instanceof ApiError && error.status !== undefined && REFUSED_REQUEST.has(error.status)) {
    const { code } = openAIErrorObject(error);
    const message = redact(`The upstream refused the request: ${error.message}`, context.secrets);
    return { status: error.status, headers: {}, body: { message, type: 'invalid_request_error', param: null, code } };
  }
  const body = openAIErrorObject(error);
  body.message = redact(
    error instanceof ApiError && error.status !== undefined ? `The upstream answered ${error.message}` : body.message,
    context.secrets,
  );
  return { status: 502, headers: {}, body };
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

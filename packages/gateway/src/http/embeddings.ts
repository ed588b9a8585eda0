/**
 * `POST /v1/embeddings` (OpenAI's shape) and `POST /v1/rerank` (the Cohere/Jina shape): routed by model like the chat
 * routes, to the route's provider at its `embeddings` or `rerank` endpoint through its Transport (auth, retries,
 * redaction), within the upstream headers timeout (which bounds the whole answer here: one JSON body). The request
 * goes on as the client sent it (only the model is the route's); the answer comes back as the upstream sent it, once
 * core's checks found one vector per input (or results that name the request's documents), with the client's model.
 * Errors are OpenAI's shape, as on every OpenAI route.
 */
import { Ai4tsError, ConnectionError } from '@ai4ts/core';
import { abortError, checkEmbeddings, checkRerank, inputCount, isRecord } from '@ai4ts/core/internal';
import type { GatewayContext } from '../context.js';
import type { KeyCall } from '../keys/gate.js';
import type { UpstreamPool } from '../upstreams/pool.js';
import { UpstreamWatch } from '../upstreams/timeouts.js';
import type { AccessLogEntry } from './access-log.js';
import { HttpError, invalid } from './errors.js';
import type { Reply } from './incoming.js';

/** The two routes, as the access log's `protocol` names them. */
export type VectorRoute = 'embeddings' | 'rerank';

const ROUTES: ReadonlyMap<string, VectorRoute> = new Map([
  ['/v1/embeddings', 'embeddings'],
  ['/v1/rerank', 'rerank'],
]);

/** The vector route a path is, if any. */
export function vectorRouteOf(path: string): VectorRoute | undefined {
  return ROUTES.get(path);
}

/** Answers one embeddings or rerank request whose JSON body is parsed; fills the access log's entry as chat does. */
export async function answerVectors(
  context: GatewayContext,
  route: VectorRoute,
  body: unknown,
  signal: AbortSignal,
  entry: AccessLogEntry,
  admit: (model: string) => Promise<KeyCall> | undefined,
): Promise<Reply> {
  entry.protocol = route;
  entry.stream = false;
  if (!isRecord(body)) throw badRequest('The request body must be a JSON object', null);
  const { model } = body;
  if (typeof model !== 'string' || model === '') throw badRequest('model must be a non-empty string', 'model');
  entry.model = model;
  const count = route === 'embeddings' ? checkEmbeddingsRequest(body) : checkRerankRequest(body);
  const pool = context.router.pick(model);
  if (!pool) throw new HttpError(404, invalid(`No upstream serves the model ${model}`, 'model', 'model_not_found'));
  const call = await admit(model);
  try {
    return await answered(context, route, body, model, count, pool, signal, entry, call);
  } finally {
    // Settled however it ended: its usage when the answer had one, else nothing was spent.
    if (call) entry.cost = call.end();
  }
}

/** The route's answer from the first of its upstreams that gives one, checked; its usage shown to the key's call. */
async function answered(
  context: GatewayContext,
  route: VectorRoute,
  body: Record<string, unknown>,
  model: string,
  count: number,
  pool: UpstreamPool,
  signal: AbortSignal,
  entry: AccessLogEntry,
  call: KeyCall | undefined,
): Promise<Reply> {
  // The route's upstreams in its order, as for chat: one that cannot be reached or answers 429/5xx gives way to the next.
  const answered = await pool.answer(async ({ name, target }, tried) => {
    entry.upstream = name;
    entry.attempts = tried;
    const { sendJson } = target;
    if (!sendJson) throw badRequest(`The upstream of ${model} is a daemon, which has no ${route} endpoint`, 'model');
    return send(context, (upstream) => sendJson.call(target, route, body, upstream), signal);
  }, signal);
  answered.end();
  const answer = answered.value;
  if (route === 'embeddings') {
    const { usage } = checkEmbeddings(answer, count);
    entry.tokens = { prompt: usage.prompt_tokens, completion: 0, total: usage.total_tokens };
  } else {
    checkRerank(answer, documentsOf(body));
    const total = isRecord(answer) && isRecord(answer.usage) ? answer.usage.total_tokens : undefined;
    if (typeof total === 'number') entry.tokens = { prompt: total, completion: 0, total };
  }
  if (entry.tokens) {
    const { prompt, total } = entry.tokens;
    call?.used({ prompt_tokens: prompt, completion_tokens: 0, total_tokens: total });
  }
  return { status: 200, headers: { ...call?.headers }, body: isRecord(answer) ? { ...answer, model } : answer };
}

/** One upstream's JSON answer within the headers timeout; a connection error without the upstream's address. */
async function send(
  context: GatewayContext,
  call: (signal: AbortSignal) => Promise<unknown>,
  signal: AbortSignal,
): Promise<unknown> {
  const watch = new UpstreamWatch(signal, context.timeouts);
  try {
    return await watch.headers(call(watch.signal));
  } catch (cause) {
    if (signal.aborted) throw abortError(signal);
    // A connection error's message is not quoted: it names the upstream's address, which is not the client's business.
    // The rest (the upstream's ApiError, a timeout, a body that is not JSON) say what happened, secrets redacted.
    if (cause instanceof ConnectionError || !(cause instanceof Ai4tsError)) {
      throw new ConnectionError('The upstream could not be reached', { cause });
    }
    throw cause;
  }
}

/** The number of vectors an embeddings request asks for; a 400 for a request the API would refuse. */
function checkEmbeddingsRequest(body: Record<string, unknown>): number {
  const { input, encoding_format: format, dimensions } = body;
  if (!isInput(input)) {
    throw badRequest('input must be a non-empty string, an array of non-empty strings, or token arrays', 'input');
  }
  if (format !== undefined && format !== 'float' && format !== 'base64') {
    throw badRequest("encoding_format must be 'float' or 'base64'", 'encoding_format');
  }
  if (dimensions !== undefined && !isPositiveInteger(dimensions)) throw badRequest('dimensions must be a positive integer', 'dimensions');
  return inputCount(input);
}

/** The number of documents of a rerank request; a 400 for a request the API would refuse. */
function checkRerankRequest(body: Record<string, unknown>): number {
  const { query, top_n: topN } = body;
  if (typeof query !== 'string' || query === '') throw badRequest('query must be a non-empty string', 'query');
  if (documentsOf(body).length === 0) throw badRequest('documents must be a non-empty array of strings', 'documents');
  if (topN !== undefined && !isPositiveInteger(topN)) throw badRequest('top_n must be a positive integer', 'top_n');
  return documentsOf(body).length;
}

function documentsOf(body: Record<string, unknown>): string[] {
  const { documents } = body;
  return Array.isArray(documents) && documents.every((document) => typeof document === 'string') ? documents : [];
}

function isInput(input: unknown): boolean {
  if (typeof input === 'string') return input !== '';
  if (!Array.isArray(input) || input.length === 0) return false;
  if (input.every((item) => typeof item === 'number')) return true;
  return input.every(
    (item) => (typeof item === 'string' && item !== '') || (Array.isArray(item) && item.length > 0 && item.every((t) => typeof t === 'number')),
  );
}

function isPositiveInteger(value: unknown): boolean {
  return typeof value === 'number' && Number.isInteger(value) && value > 0;
}

function badRequest(message: string, param: string | null): HttpError {
  return new HttpError(400, invalid(message, param));
}

/**
 * `/embeddings` through the Transport (URL, auth, the RetryPolicy, timeouts, redaction): one request
 * ({@link createEmbeddings}), or many values in batches with bounded concurrency ({@link embedMany}).
 */
import { Ai4tsError } from '../errors.js';
import { abortError, toAi4tsError } from '../internal/fail.js';
import type { RequestOptions, Transport } from '../transport/transport.js';
import { decodeFloat32Base64 } from './base64.js';
import { checkEmbeddings, inputCount } from './check.js';
import type {
  CreateEmbeddingResponse,
  EmbeddingCreateParams,
  EmbeddingEncodingFormat,
  EmbeddingUsage,
} from './types.js';

/** The endpoint, relative to the baseURL of every OpenAI-compatible preset. */
export const EMBEDDINGS_PATH = 'embeddings';

/** The batch size of `embedMany` for a preset that names none (`embeddingBatchSize`). */
export const DEFAULT_EMBEDDING_BATCH_SIZE = 128;

/** Batches of `embedMany` in flight at once when `concurrency` is not given. */
export const DEFAULT_EMBEDDING_CONCURRENCY = 4;

/**
 * One `/embeddings` request; resolves to its embeddings in input order, each decoded: `Float32Array`s with
 * `encoding_format: 'base64'`, else `number[]`. Retried before the headers by the Transport's RetryPolicy (429, 5xx,
 * a dropped connection).
 *
 * @throws Ai4tsError for an empty input, before anything is sent; the typed `ApiError` of an HTTP error;
 * ProtocolError for an answer with the wrong count or a wrong index.
 */
export function createEmbeddings(
  transport: Transport,
  params: EmbeddingCreateParams & { encoding_format: 'base64' },
  options?: RequestOptions,
): Promise<CreateEmbeddingResponse<Float32Array>>;
export function createEmbeddings(
  transport: Transport,
  params: EmbeddingCreateParams & { encoding_format?: 'float' | undefined },
  options?: RequestOptions,
): Promise<CreateEmbeddingResponse<number[]>>;
export function createEmbeddings(
  transport: Transport,
  params: EmbeddingCreateParams,
  options?: RequestOptions,
): Promise<CreateEmbeddingResponse<Float32Array | number[]>>;
export async function createEmbeddings(
  transport: Transport,
  params: EmbeddingCreateParams,
  options: RequestOptions = {},
): Promise<CreateEmbeddingResponse<Float32Array | number[]>> {
  const count = inputCount(params.input);
  if (count === 0 || params.input === '') throw new Ai4tsError('Embeddings need a non-empty input');
  const sent = params.encoding_format ?? 'base64';
  const json = await transport.json<unknown>(EMBEDDINGS_PATH, { body: { ...params, encoding_format: sent }, options });
  const checked = checkEmbeddings(json, count);
  const data = checked.data.map(({ index, embedding }) => ({
    object: 'embedding' as const,
    index,
    embedding: vectorOf(embedding, params.encoding_format),
  }));
  return { object: 'list', data, model: checked.model ?? params.model, usage: checked.usage };
}

/** A wire vector as the caller asked for it: base64 → Float32Array (`base64`) or number[] (absent, `float`). */
function vectorOf(embedding: number[] | string, format: EmbeddingEncodingFormat | undefined): Float32Array | number[] {
  if (typeof embedding !== 'string') return format === 'base64' ? Float32Array.from(embedding) : embedding;
  const decoded = decodeFloat32Base64(embedding);
  return format === 'base64' ? decoded : Array.from(decoded);
}

/** Options of {@link embedMany}: the request's fields but `input`, how to batch, and the per-request options. */
export interface EmbedManyOptions extends Omit<EmbeddingCreateParams, 'input'>, RequestOptions {
  /** Values per request (default: the preset's `embeddingBatchSize`, else {@link DEFAULT_EMBEDDING_BATCH_SIZE}). */
  batchSize?: number;
  /** Requests in flight at once (default {@link DEFAULT_EMBEDDING_CONCURRENCY}). */
  concurrency?: number;
}

/** The embeddings of all values, in their order, and the tokens of all batches together. */
export interface EmbedManyResult<V = number[]> {
  embeddings: V[];
  usage: EmbeddingUsage;
  model: string;
}

/** What `embedMany` had when it failed: the embeddings of the batches that finished (undefined for the others). */
export interface EmbedManyPartial<V = number[]> {
  embeddings: (V | undefined)[];
  usage: EmbeddingUsage;
}

/**
 * The embeddings of many values: split into batches the provider accepts, at most `concurrency` requests at once,
 * each retried by the Transport's RetryPolicy, the results in the values' order and their usage summed. The first
 * batch that fails (after its retries) stops the others and rejects with its typed error, whose `partial` holds the
 * embeddings already received ({@link EmbedManyPartial}); `signal` aborts them all (AbortError). Vectors are
 * `Float32Array`s with `encoding_format: 'base64'`, else `number[]`.
 *
 * @example
 * const { embeddings } = await embedMany(transport, chunks, { model: 'text-embedding-3-small', concurrency: 2 });
 */
export function embedMany(
  transport: Transport,
  values: readonly string[],
  options: EmbedManyOptions & { encoding_format: 'base64' },
): Promise<EmbedManyResult<Float32Array>>;
export function embedMany(
  transport: Transport,
  values: readonly string[],
  options: EmbedManyOptions & { encoding_format?: 'float' | undefined },
): Promise<EmbedManyResult<number[]>>;
export function embedMany(
  transport: Transport,
  values: readonly string[],
  options: EmbedManyOptions,
): Promise<EmbedManyResult<Float32Array | number[]>>;
export async function embedMany(
  transport: Transport,
  values: readonly string[],
  options: EmbedManyOptions,
): Promise<EmbedManyResult<Float32Array | number[]>> {
  const { model, dimensions, encoding_format, user, batchSize, concurrency, ...request } = options;
  const size = batchSize ?? transport.provider.embeddingBatchSize ?? DEFAULT_EMBEDDING_BATCH_SIZE;
  const workers = concurrency ?? DEFAULT_EMBEDDING_CONCURRENCY;
  if (!isPositiveInteger(size)) throw new Ai4tsError(`batchSize must be a positive integer, not ${size}`);
  if (!isPositiveInteger(workers)) throw new Ai4tsError(`concurrency must be a positive integer, not ${workers}`);
  const batchCount = Math.ceil(values.length / size);
  /** Each batch's vectors at its number, so the order is the values' whatever order the batches finish in. */
  const batches = Array.from({ length: batchCount }, (): (Float32Array | number[])[] | undefined => undefined);
  const usage: EmbeddingUsage = { prompt_tokens: 0, total_tokens: 0 };
  let answered: string | undefined;
  // One signal for every batch: the first failure stops the rest, and the caller's abort stops them all.
  const stop = new AbortController();
  const caller = request.signal;
  const onAbort = () => stop.abort(caller?.reason);
  caller?.addEventListener('abort', onAbort, { once: true });
  let next = 0;
  const worker = async () => {
    for (let batch = next++; batch < batchCount && !stop.signal.aborted; batch = next++) {
      const input = values.slice(batch * size, (batch + 1) * size);
      const params = { model, input, ...(dimensions !== undefined && { dimensions }), ...(encoding_format && { encoding_format }), ...(user && { user }) };
      const answer = await createEmbeddings(transport, params, { ...request, signal: stop.signal });
      batches[batch] = answer.data.map((item) => item.embedding);
      usage.prompt_tokens += answer.usage.prompt_tokens;
      usage.total_tokens += answer.usage.total_tokens;
      answered ??= answer.model;
    }
  };
  try {
    if (caller?.aborted) throw abortError(caller);
    const running = Array.from({ length: Math.min(workers, batchCount) }, () =>
      worker().catch((error: unknown) => {
        stop.abort(error);
        throw error;
      }),
    );
    await Promise.all(running);
  } catch (error) {
    const embeddings = batches.flatMap((vectors, batch) => vectors ?? new Array(Math.min(size, values.length - batch * size)).fill(undefined));
    const partial: EmbedManyPartial<Float32Array | number[]> = { embeddings, usage };
    throw toAi4tsError(caller?.aborted ? abortError(caller) : error, { signal: caller, partial });
  } finally {
    caller?.removeEventListener('abort', onAbort);
  }
  const embeddings = batches.flatMap((vectors) => vectors ?? []);
  return { embeddings, usage, model: answered ?? model };
}

function isPositiveInteger(value: number): boolean {
  return Number.isInteger(value) && value > 0;
}

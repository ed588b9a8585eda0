/** `/rerank` through the Transport, on the Cohere/Jina shape (`{ model, query, documents, top_n }` → `results`). */
import { Ai4tsError, isRecord } from '../errors.js';
import type { RequestOptions, Transport } from '../transport/transport.js';
import { checkRerank } from './check.js';
import type { RerankParams, RerankResponse } from './types.js';

/** The endpoint, relative to the baseURL (Cohere's `https://api.cohere.com/v2`, Jina's `https://api.jina.ai/v1`). */
export const RERANK_PATH = 'rerank';

/**
 * Ranks `documents` by their relevance to `query`: resolves to the results most relevant first, each with its
 * document's place in `documents` and the provider's score. Retried before the headers like every request.
 *
 * @throws Ai4tsError for no documents or a `topN` that is not a positive integer, before anything is sent; the
 * typed `ApiError` of an HTTP error; ProtocolError for a result that names no document of the request, or one twice.
 */
export async function rerank(transport: Transport, params: RerankParams, options: RequestOptions = {}): Promise<RerankResponse> {
  const { model, query, documents, topN } = params;
  if (documents.length === 0) throw new Ai4tsError('Rerank needs at least one document');
  if (topN !== undefined && !(Number.isInteger(topN) && topN > 0)) throw new Ai4tsError(`topN must be a positive integer, not ${topN}`);
  const body = { model, query, documents, ...(topN !== undefined && { top_n: topN }) };
  const json = await transport.json<unknown>(RERANK_PATH, { body, options });
  const results = checkRerank(json, documents);
  const usage = isRecord(json) && isRecord(json.usage) ? json.usage.total_tokens : undefined;
  return {
    model: isRecord(json) && typeof json.model === 'string' ? json.model : model,
    results: topN === undefined ? results : results.slice(0, topN),
    ...(typeof usage === 'number' && { usage: { total_tokens: usage } }),
  };
}

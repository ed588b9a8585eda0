/**
 * The boundary checks of embeddings and rerank answers, shared by the SDK and the gateway: cheap (no schema library),
 * and each bad answer a {@link ProtocolError} that says what was wrong. An answer with the wrong count or a repeated
 * index would put a vector against the wrong text, which no later step could notice.
 */
import { isRecord, ProtocolError } from '../errors.js';
import type { EmbeddingUsage, RerankResult } from './types.js';

/** One embedding as the wire has it: numbers, or base64 of float32s. */
export interface WireEmbedding {
  index: number;
  embedding: number[] | string;
}

/** An `/embeddings` answer, checked: one embedding per input, in input order. */
export interface CheckedEmbeddings {
  data: WireEmbedding[];
  model: string | undefined;
  /** Zeros when the server reported none. */
  usage: EmbeddingUsage;
}

/** How many embeddings an `/embeddings` input asks for: one per text or token array. */
export function inputCount(input: unknown): number {
  if (!Array.isArray(input)) return 1;
  return input.length > 0 && input.every((item) => typeof item === 'number') ? 1 : input.length;
}

/**
 * The answer's embeddings in input order.
 *
 * @throws ProtocolError when it is not a list of `count` embeddings whose indexes are each of 0 to count - 1 once.
 */
export function checkEmbeddings(json: unknown, count: number): CheckedEmbeddings {
  if (!isRecord(json) || !Array.isArray(json.data)) throw bad('has no data list', json);
  if (json.data.length !== count) throw bad(`has ${json.data.length} embeddings for ${count} inputs`, json);
  const data = new Array<WireEmbedding>(count);
  for (const item of json.data) {
    const index = isRecord(item) ? item.index : undefined;
    if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= count) {
      throw bad(`has an embedding with index ${String(index)} (expected 0 to ${count - 1})`, json);
    }
    if (data[index] !== undefined) throw bad(`has two embeddings with index ${index}`, json);
    const embedding = isRecord(item) ? item.embedding : undefined;
    if (typeof embedding !== 'string' && !isNumbers(embedding)) throw bad(`has no vector at index ${index}`, json);
    data[index] = { index, embedding };
  }
  return { data, model: typeof json.model === 'string' ? json.model : undefined, usage: usageOf(json.usage) };
}

/**
 * A rerank answer (Cohere's and Jina's `results`, Voyage's `data`), most relevant first (ties in document order).
 *
 * @throws ProtocolError when a result names no document of the request, names one twice, or has no numeric score.
 */
export function checkRerank(json: unknown, documents: readonly string[]): RerankResult[] {
  const list = isRecord(json) ? (json.results ?? json.data) : undefined;
  if (!Array.isArray(list)) throw bad('has no results list', json, 'rerank');
  const seen = new Set<number>();
  const results = list.map((item): RerankResult => {
    const index = isRecord(item) ? item.index : undefined;
    const score = isRecord(item) ? item.relevance_score : undefined;
    if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= documents.length || seen.has(index)) {
      throw bad(`has a result with index ${String(index)} (expected each of 0 to ${documents.length - 1} at most once)`, json, 'rerank');
    }
    if (typeof score !== 'number' || !Number.isFinite(score)) throw bad(`has no relevance_score for document ${index}`, json, 'rerank');
    seen.add(index);
    return { index, relevanceScore: score, document: documents[index] ?? '' };
  });
  return results.sort((a, b) => b.relevanceScore - a.relevanceScore || a.index - b.index);
}

function isNumbers(value: unknown): value is number[] {
  return Array.isArray(value) && value.every((item) => typeof item === 'number');
}

function usageOf(usage: unknown): EmbeddingUsage {
  const prompt = isRecord(usage) && typeof usage.prompt_tokens === 'number' ? usage.prompt_tokens : 0;
  const total = isRecord(usage) && typeof usage.total_tokens === 'number' ? usage.total_tokens : prompt;
  return { prompt_tokens: prompt, total_tokens: total };
}

function bad(problem: string, json: unknown, endpoint = 'embeddings'): ProtocolError {
  return new ProtocolError(`The ${endpoint} answer ${problem}`, { line: JSON.stringify(json) });
}

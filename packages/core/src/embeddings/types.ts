/**
 * The wire shapes of OpenAI's `/embeddings` (under openai-node's names) and of the Cohere/Jina-style `/rerank`, and
 * what ai4ts makes of them.
 */

/** How the vectors travel: JSON numbers, or base64 of little-endian float32s (smaller, and exact). */
export type EmbeddingEncodingFormat = 'float' | 'base64';

/** A request to `/embeddings`, as OpenAI's API takes it. */
export interface EmbeddingCreateParams {
  model: string;
  /** One text, several texts, or token arrays. An empty string or array is refused by the API. */
  input: string | readonly string[] | readonly number[] | readonly (readonly number[])[];
  /** Fewer dimensions than the model's own (text-embedding-3 and later). */
  dimensions?: number;
  /**
   * `base64` gives each vector as a `Float32Array` (a view over the decoded bytes), `float` as `number[]`. When
   * absent, base64 is sent (as openai-node does: a quarter of the bytes) and `number[]` returned.
   */
  encoding_format?: EmbeddingEncodingFormat;
  user?: string;
}

/** One embedding of the response, at the place of its input. */
export interface Embedding<V = number[]> {
  object: 'embedding';
  /** The place of its input in the request. */
  index: number;
  embedding: V;
}

/** The tokens an embeddings request used. */
export interface EmbeddingUsage {
  prompt_tokens: number;
  total_tokens: number;
}

/** The answer of `/embeddings`, its `data` checked and in input order, each vector decoded. */
export interface CreateEmbeddingResponse<V = number[]> {
  object: 'list';
  data: Embedding<V>[];
  model: string;
  usage: EmbeddingUsage;
}

/** A rerank request (sent to `/rerank` as `{ model, query, documents, top_n }`). */
export interface RerankParams {
  model: string;
  query: string;
  documents: readonly string[];
  /** Only the best this many (default: all of them). */
  topN?: number;
}

/** One document, ranked. */
export interface RerankResult {
  /** Its place in `documents`. */
  index: number;
  /** The provider's score, higher is more relevant (Cohere and Jina: 0 to 1). */
  relevanceScore: number;
  /** The document itself, from the request. */
  document: string;
}

/** The documents ranked, most relevant first; `usage` when the provider reported tokens (Jina, vLLM). */
export interface RerankResponse {
  model: string;
  results: RerankResult[];
  usage?: { total_tokens: number };
}

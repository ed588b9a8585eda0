/** Vector helpers for tests and demos: cosine similarity and a linear top-k. Choosing a vector store stays the user's. */
import { Ai4tsError } from '../errors.js';

/**
 * The cosine of the angle between two vectors, from -1 to 1; 0 when either is all zeros.
 *
 * @throws Ai4tsError when their lengths differ (vectors of two models, or of two `dimensions`).
 */
export function cosineSimilarity(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) throw new Ai4tsError(`Cannot compare vectors of ${a.length} and ${b.length} dimensions`);
  let dot = 0;
  let normA = 0;
  let normB = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] ?? 0;
    const y = b[i] ?? 0;
    dot += x * y;
    normA += x * x;
    normB += y * y;
  }
  return normA === 0 || normB === 0 ? 0 : dot / Math.sqrt(normA * normB);
}

/** An item of {@link topK} and its similarity to the query. */
export interface Scored<T> {
  item: T;
  score: number;
}

/**
 * The `k` items whose `embedding` is most similar to `query` (cosine), most similar first; ties keep the items'
 * order. A linear scan: for tests, demos and a few thousand items.
 */
export function topK<T extends { embedding: ArrayLike<number> }>(query: ArrayLike<number>, items: readonly T[], k: number): Scored<T>[] {
  return items
    .map((item) => ({ item, score: cosineSimilarity(query, item.embedding) }))
    .sort((a, b) => b.score - a.score)
    .slice(0, Math.max(0, k));
}

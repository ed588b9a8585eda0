export { decodeFloat32Base64 } from './base64.js';
export {
  createEmbeddings,
  DEFAULT_EMBEDDING_BATCH_SIZE,
  DEFAULT_EMBEDDING_CONCURRENCY,
  EMBEDDINGS_PATH,
  type EmbedManyOptions,
  type EmbedManyPartial,
  type EmbedManyResult,
  embedMany,
} from './embeddings.js';
export { RERANK_PATH, rerank } from './rerank.js';
export { cosineSimilarity, type Scored, topK } from './similarity.js';
export type {
  CreateEmbeddingResponse,
  Embedding,
  EmbeddingCreateParams,
  EmbeddingEncodingFormat,
  EmbeddingUsage,
  RerankParams,
  RerankResponse,
  RerankResult,
} from './types.js';

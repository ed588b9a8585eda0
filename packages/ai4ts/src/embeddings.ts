/** Embeddings behind the front door: `client.embeddings`, over core's `createEmbeddings` and `embedMany`. */
import {
  type CreateEmbeddingResponse,
  createEmbeddings,
  type EmbeddingCreateParams,
  type EmbedManyOptions,
  type EmbedManyResult,
  embedMany,
  type RequestOptions,
  type Transport,
} from '@ai4ts/core';

/**
 * OpenAI's `/embeddings` on the client's provider (every OpenAI-compatible preset: OpenAI, Azure, Ollama, vLLM,
 * DashScope, Zhipu, ...). Vectors are `Float32Array`s with `encoding_format: 'base64'`, else `number[]`.
 */
export class EmbeddingsClient {
  readonly #transport: Transport;

  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /** One request (see core's `createEmbeddings`): the embeddings in input order, decoded, and the usage. */
  create(
    params: EmbeddingCreateParams & { encoding_format: 'base64' },
    options?: RequestOptions,
  ): Promise<CreateEmbeddingResponse<Float32Array>>;
  create(
    params: EmbeddingCreateParams & { encoding_format?: 'float' | undefined },
    options?: RequestOptions,
  ): Promise<CreateEmbeddingResponse<number[]>>;
  create(params: EmbeddingCreateParams, options?: RequestOptions): Promise<CreateEmbeddingResponse<Float32Array | number[]>>;
  create(params: EmbeddingCreateParams, options?: RequestOptions): Promise<CreateEmbeddingResponse<Float32Array | number[]>> {
    return createEmbeddings(this.#transport, params, options);
  }

  /**
   * Many values in batches the provider accepts, `concurrency` requests at once, in the values' order, the usage
   * summed (see core's `embedMany`).
   */
  embedMany(values: readonly string[], options: EmbedManyOptions & { encoding_format: 'base64' }): Promise<EmbedManyResult<Float32Array>>;
  embedMany(
    values: readonly string[],
    options: EmbedManyOptions & { encoding_format?: 'float' | undefined },
  ): Promise<EmbedManyResult<number[]>>;
  embedMany(values: readonly string[], options: EmbedManyOptions): Promise<EmbedManyResult<Float32Array | number[]>>;
  embedMany(values: readonly string[], options: EmbedManyOptions): Promise<EmbedManyResult<Float32Array | number[]>> {
    return embedMany(this.#transport, values, options);
  }
}

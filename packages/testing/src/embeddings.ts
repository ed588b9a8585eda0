/**
 * The scripted model's `/v1/embeddings` (OpenAI's shape, written from its API reference) and `/v1/rerank` (the
 * Cohere/Jina shape: `{ model, query, documents, top_n }` → `results` of `index` and `relevance_score`). Vectors
 * come from the text by feature hashing: the same text gives the same vector in every run, and texts that share words
 * point the same way, so similarity and ranking behave like the real thing in tests and demos. Each component is a
 * float32, so the `float` and `base64` forms of a vector are the same numbers exactly.
 */

/** How the scripted model answers `/v1/embeddings` and `/v1/rerank`. */
export interface MockEmbeddingsOptions {
  /** Inputs one embeddings request may carry (default 2048, OpenAI's limit); more is answered with a 400, as the API does. */
  maxInputs?: number;
  /** Documents one rerank request may carry (default 1000); more is a 400. */
  maxDocuments?: number;
  /** Dimensions of a vector when the request names none (default 16). */
  dimensions?: number;
  /** Wait this long before answering each embeddings or rerank request. */
  delayMs?: number;
  /**
   * Answers the Nth embeddings or rerank request (counted together from 1) with this status, headers and body
   * (default: OpenAI's error object) instead; `undefined` entries answer normally.
   */
  httpErrors?: readonly (MockHttpError | undefined)[];
}

/** An HTTP error the scripted model answers with. */
export interface MockHttpError {
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
}

/** An answer: its status and JSON body. */
export interface JsonAnswer {
  status: number;
  body: unknown;
}

const DEFAULT_MAX_INPUTS = 2048;
const DEFAULT_MAX_DOCUMENTS = 1000;
const DEFAULT_DIMENSIONS = 16;

/** The answer to `POST /v1/embeddings`. */
export function embeddingsAnswer(body: unknown, options: MockEmbeddingsOptions): JsonAnswer {
  if (!isRecord(body)) return invalid('The body must be a JSON object', null);
  const { model, input, encoding_format: format = 'float', dimensions = options.dimensions ?? DEFAULT_DIMENSIONS } = body;
  if (typeof model !== 'string' || model === '') return invalid('you must provide a model parameter', 'model');
  if (format !== 'float' && format !== 'base64') return invalid(`'${String(format)}' is not one of ['float', 'base64'] - 'encoding_format'`, 'encoding_format');
  if (typeof dimensions !== 'number' || !Number.isInteger(dimensions) || dimensions < 1) return invalid('dimensions must be a positive integer', 'dimensions');
  const texts = inputTexts(input);
  if (texts === undefined) return invalid("'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference.", 'input');
  const maxInputs = options.maxInputs ?? DEFAULT_MAX_INPUTS;
  if (texts.length > maxInputs) return invalid(`'$.input' must have at most ${maxInputs} items, got ${texts.length}`, 'input');
  const data = texts.map((text, index) => {
    const vector = mockVector(text, dimensions);
    return { object: 'embedding', index, embedding: format === 'base64' ? base64Of(vector) : Array.from(vector) };
  });
  const tokens = texts.reduce((sum, text) => sum + tokensOf(text), 0);
  return { status: 200, body: { object: 'list', data, model, usage: { prompt_tokens: tokens, total_tokens: tokens } } };
}

/** The answer to `POST /v1/rerank`: the documents by the cosine of their vectors with the query's, best first. */
export function rerankAnswer(body: unknown, options: MockEmbeddingsOptions): JsonAnswer {
  if (!isRecord(body)) return invalid('The body must be a JSON object', null);
  const { model, query, documents, top_n: topN } = body;
  if (typeof model !== 'string' || model === '') return invalid('model is required', 'model');
  if (typeof query !== 'string' || query === '') return invalid('query must be a non-empty string', 'query');
  if (!Array.isArray(documents) || documents.length === 0 || !documents.every((d) => typeof d === 'string'))
    return invalid('documents must be a non-empty array of strings', 'documents');
  const maxDocuments = options.maxDocuments ?? DEFAULT_MAX_DOCUMENTS;
  if (documents.length > maxDocuments) return invalid(`documents must have at most ${maxDocuments} items, got ${documents.length}`, 'documents');
  if (topN !== undefined && !(typeof topN === 'number' && Number.isInteger(topN) && topN > 0)) return invalid('top_n must be a positive integer', 'top_n');
  const dimensions = options.dimensions ?? DEFAULT_DIMENSIONS;
  const target = mockVector(query, dimensions);
  const results = documents
    .map((document: string, index) => ({ index, relevance_score: Math.max(0, dot(target, mockVector(document, dimensions))) }))
    .sort((a, b) => b.relevance_score - a.relevance_score || a.index - b.index)
    .slice(0, topN ?? documents.length);
  const tokens = tokensOf(query) * documents.length + documents.reduce((sum: number, d: string) => sum + tokensOf(d), 0);
  return { status: 200, body: { model, results, usage: { total_tokens: tokens } } };
}

/**
 * The vector of a text: each word (lowercased letters and digits) adds ±1 at a dimension its hash picks, the sum is
 * scaled to length 1 and each component rounded to a float32. A text without words gets the vector of its characters.
 */
export function mockVector(text: string, dimensions: number): Float32Array {
  const vector = new Float64Array(dimensions);
  const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [text];
  for (const word of words) {
    const hash = fnv1a(word);
    vector[hash % dimensions] = (vector[hash % dimensions] ?? 0) + ((hash >>> 16) & 1 ? 1 : -1);
  }
  const norm = Math.hypot(...vector) || 1;
  return Float32Array.from(vector, (value) => value / norm);
}

/** The texts of an `input`: a string, strings, a token array, or token arrays; undefined when it is none of these or empty. */
function inputTexts(input: unknown): string[] | undefined {
  if (typeof input === 'string') return input === '' ? undefined : [input];
  if (!Array.isArray(input) || input.length === 0) return undefined;
  if (input.every((item) => typeof item === 'number')) return [input.join(' ')];
  const texts: string[] = [];
  for (const item of input) {
    if (typeof item === 'string' && item !== '') texts.push(item);
    else if (Array.isArray(item) && item.length > 0 && item.every((token) => typeof token === 'number')) texts.push(item.join(' '));
    else return undefined;
  }
  return texts;
}

/** Little-endian float32 bytes in base64, as OpenAI sends `encoding_format: "base64"`. */
function base64Of(vector: Float32Array): string {
  const bytes = Buffer.alloc(vector.length * 4);
  for (const [i, value] of vector.entries()) bytes.writeFloatLE(value, i * 4);
  return bytes.toString('base64');
}

function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += (a[i] ?? 0) * (b[i] ?? 0);
  return sum;
}

function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return hash >>> 0;
}

/** About 4 characters a token, as the chat routes estimate. */
function tokensOf(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}

function invalid(message: string, param: string | null): JsonAnswer {
  return { status: 400, body: { error: { message, type: 'invalid_request_error', param, code: null } } };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Provider presets: where a vendor's API lives, how it wants the key, where the key usually sits in the
 * environment, and the stream quirks the protocol layers must respect.
 */
import type { SseEvent } from '@ai4ts/sse';
import { Ai4tsError } from '../errors.js';
import type { RequestSigner } from './sign.js';
import type { AccessTokenSource } from './token.js';

/**
 * The wire protocols ai4ts speaks, each defined once in its package (`CHAT_PROTOCOL`, ...): the one list a preset,
 * the gateway and the front door name them by.
 */
export type ProtocolName = 'chat' | 'responses' | 'messages' | 'gemini';

/** How the API key travels. */
export type AuthStyle = 'bearer' | 'api-key' | 'x-api-key' | 'x-goog-api-key' | 'none';

/**
 * The header each auth style sends the key in: the one list the Transport sets and the logger redacts, so a new
 * style is one line here.
 */
export const AUTH_HEADERS = {
  bearer: 'authorization',
  'api-key': 'api-key',
  'x-api-key': 'x-api-key',
  'x-goog-api-key': 'x-goog-api-key',
} as const satisfies Record<Exclude<AuthStyle, 'none'>, string>;

/** A request as a protocol builds it, relative to the baseURL: see {@link ProviderPreset.rewriteRequest}. */
export interface WireRequest {
  path: string;
  body: unknown;
}

/**
 * A stream framing other than SSE: the content type it comes as, and how its body becomes the protocol's SSE events
 * (a batch per chunk read), which the protocol's listener then reads as if they had come as SSE. What `decode`
 * throws is the stream's failure (an in-stream exception as an `ApiError`); `secrets` are to be redacted from it.
 */
export interface StreamFraming {
  contentType: string;
  decode(body: AsyncIterable<Uint8Array>, secrets: readonly string[]): AsyncIterable<SseEvent[]>;
}

/** Everything a {@link Transport} needs to know about a vendor. */
export interface ProviderPreset {
  name: string;
  /** Root of the API, without the endpoint path (`https://api.openai.com/v1`). Empty when the user must give it. */
  baseURL: string;
  /** Environment variables tried in order for the key when none is passed. */
  apiKeyEnv: string[];
  /**
   * `bearer`: `Authorization: Bearer KEY`; `api-key`: `api-key: KEY` (Azure); `x-api-key`: `x-api-key: KEY`
   * (Anthropic); `x-goog-api-key`: `x-goog-api-key: KEY` (Gemini's native API); `none`: no auth header at all (Ollama).
   */
  auth: AuthStyle;
  /** When true, a missing key is not an error: the request goes without an auth header (local vLLM, proxies). */
  apiKeyOptional?: boolean;
  /** Headers every request carries (Anthropic's `anthropic-version`). */
  headers?: Record<string, string>;
  /** Query parameters every request carries (Azure's `api-version`). */
  query?: Record<string, string>;
  /**
   * The wire protocol its API speaks: `chat` (Chat Completions), `responses`, `messages` (Anthropic Messages) or
   * `gemini` (Gemini's `generateContent`);
   * a gateway picks its upstream codec by it. Every built-in preset declares it; `chat` when a custom one does not.
   */
  protocol?: ProtocolName;
  /**
   * Every protocol the API serves at its baseURL, when that is more than `protocol` (OpenAI's Chat Completions and
   * Responses). With the front door's `translate`, the clients of these protocols are sent as they are and the
   * others translated.
   */
  serves?: readonly ProtocolName[];
  /**
   * Where the bearer token comes from when the API wants an expiring access token instead of a key (Vertex AI's
   * Google credentials): the Transport's `accessToken` option wins over it. See {@link AccessTokenSource}.
   */
  accessToken?: AccessTokenSource;
  /**
   * For an API that addresses a protocol its own way (Vertex AI puts the model in the path of Anthropic Messages):
   * the path and JSON body each request is sent with, from the protocol's. Runs after `extraBody` is merged.
   */
  rewriteRequest?: (request: WireRequest) => WireRequest;
  /**
   * The most inputs one `/embeddings` request may carry, where the vendor documents it: `embedMany` splits its
   * values into batches of this size (its `batchSize` option wins; `DEFAULT_EMBEDDING_BATCH_SIZE` when unset).
   */
  embeddingBatchSize?: number;
  /**
   * Signs every request as a whole instead of sending a key (AWS SigV4: `bedrock()`). The Transport sends the
   * body text it signed, signs each attempt again, and redacts the signer's secrets like a key.
   */
  signer?: RequestSigner;
  /** For an API whose streams are not SSE (Bedrock's AWS event-stream frames): see {@link StreamFraming}. */
  streamFraming?: StreamFraming;
  quirks: {
    /** Accepts `stream_options: { include_usage: true }` on streaming Chat Completions requests. */
    streamOptions: boolean;
    /**
     * Ends Chat Completions streams with `[DONE]` and no `finish_reason`: the chat listener then completes the
     * unfinished choices as `stop` instead of failing. Off in every built-in preset: strict unless you opt in.
     */
    doneWithoutFinishReason?: boolean;
    /**
     * Ends Chat Completions streams after the last finish_reason without `data: [DONE]`: the chat listener then
     * completes such a stream when it ends. Off in every built-in preset (Ollama, vLLM, llama.cpp all send
     * `[DONE]`): by default a stream without it fails with `StreamIncompleteError`, as a cut one would.
     */
    endsWithoutDone?: boolean;
    /**
     * How Chat Completions asks for structured output (`output`): `json_schema` (the default), or `json_object`
     * for a provider that has only JSON mode (DeepSeek): JSON mode plus the schema in a system message.
     */
    responseFormat?: 'json_schema' | 'json_object';
    /**
     * Anthropic Messages: the API accepts `output_config.format` (native structured outputs). Without it,
     * structured output is a forced tool, which every Messages server understands.
     */
    outputConfig?: boolean;
  };
}

const openAICompatible = (name: string, baseURL: string, apiKeyEnv: string[]): ProviderPreset => ({
  name,
  baseURL,
  apiKeyEnv,
  auth: 'bearer',
  protocol: 'chat',
  quirks: { streamOptions: true },
});

/** DashScope's text-embedding-v3 and v4 take at most 10 inputs a request. */
const dashscope = {
  ...openAICompatible('dashscope', 'https://dashscope.aliyuncs.com/compatible-mode/v1', ['DASHSCOPE_API_KEY']),
  embeddingBatchSize: 10,
};

/**
 * The built-in presets. Base URLs are each vendor's documented OpenAI-compatible endpoint (mainland China
 * endpoints for the Chinese vendors; pass `baseURL` for an international region).
 */
export const PROVIDERS = {
  /** OpenAI's `/embeddings` takes at most 2048 inputs a request. */
  openai: {
    ...openAICompatible('openai', 'https://api.openai.com/v1', ['OPENAI_API_KEY']),
    serves: ['chat', 'responses'],
    embeddingBatchSize: 2048,
  },
  /** The user gives the resource URL: `https://RESOURCE.openai.azure.com/openai/deployments/DEPLOYMENT`. */
  azure: {
    name: 'azure',
    baseURL: '',
    apiKeyEnv: ['AZURE_OPENAI_API_KEY'],
    auth: 'api-key',
    query: { 'api-version': '2024-10-21' },
    embeddingBatchSize: 2048,
    protocol: 'chat',
    quirks: { streamOptions: true },
  },
  /** DeepSeek's `response_format` knows only `json_object`. */
  deepseek: {
    ...openAICompatible('deepseek', 'https://api.deepseek.com', ['DEEPSEEK_API_KEY']),
    quirks: { streamOptions: true, responseFormat: 'json_object' },
  },
  qwen: { ...dashscope, name: 'qwen' },
  dashscope,
  /** Zhipu's embedding-3 takes at most 64 inputs a request. */
  zhipu: {
    ...openAICompatible('zhipu', 'https://open.bigmodel.cn/api/paas/v4', ['ZHIPUAI_API_KEY', 'ZHIPU_API_KEY']),
    embeddingBatchSize: 64,
  },
  moonshot: openAICompatible('moonshot', 'https://api.moonshot.cn/v1', ['MOONSHOT_API_KEY']),
  doubao: openAICompatible('doubao', 'https://ark.cn-beijing.volces.com/api/v3', ['ARK_API_KEY']),
  minimax: openAICompatible('minimax', 'https://api.minimaxi.com/v1', ['MINIMAX_API_KEY']),
  baichuan: openAICompatible('baichuan', 'https://api.baichuan-ai.com/v1', ['BAICHUAN_API_KEY']),
  hunyuan: openAICompatible('hunyuan', 'https://api.hunyuan.cloud.tencent.com/v1', ['HUNYUAN_API_KEY']),
  lingyi: openAICompatible('lingyi', 'https://api.lingyiwanwu.com/v1', ['LINGYIWANWU_API_KEY', 'YI_API_KEY']),
  ollama: {
    name: 'ollama',
    baseURL: 'http://127.0.0.1:11434/v1',
    apiKeyEnv: [],
    auth: 'none',
    protocol: 'chat',
    quirks: { streamOptions: true },
  },
  vllm: {
    ...openAICompatible('vllm', 'http://127.0.0.1:8000/v1', ['VLLM_API_KEY']),
    apiKeyOptional: true,
  },
  openrouter: openAICompatible('openrouter', 'https://openrouter.ai/api/v1', ['OPENROUTER_API_KEY']),
  groq: openAICompatible('groq', 'https://api.groq.com/openai/v1', ['GROQ_API_KEY']),
  xai: openAICompatible('xai', 'https://api.x.ai/v1', ['XAI_API_KEY']),
  /** Anthropic Messages (for @ai4ts/messages); `stream_options` is a Chat Completions field it does not know. */
  anthropic: {
    name: 'anthropic',
    baseURL: 'https://api.anthropic.com/v1',
    apiKeyEnv: ['ANTHROPIC_API_KEY'],
    auth: 'x-api-key',
    headers: { 'anthropic-version': '2023-06-01' },
    protocol: 'messages',
    quirks: { streamOptions: false, outputConfig: true },
  },
  /** Gemini's native API (for @ai4ts/gemini): Google AI Studio's key as `x-goog-api-key`. */
  gemini: {
    name: 'gemini',
    baseURL: 'https://generativelanguage.googleapis.com/v1beta',
    apiKeyEnv: ['GEMINI_API_KEY', 'GOOGLE_API_KEY'],
    auth: 'x-goog-api-key',
    protocol: 'gemini',
    quirks: { streamOptions: false },
  },
  /**
   * Any OpenAI-compatible server: pass `baseURL` (and `apiKey` when it wants one). No environment variable is
   * read, so a key meant for one vendor is never sent to an arbitrary URL.
   */
  'openai-compatible': {
    ...openAICompatible('openai-compatible', '', []),
    apiKeyOptional: true,
  },
} satisfies Record<string, ProviderPreset>;

/** The stream quirks of a provider, which a protocol's wire body and listener respect. */
export type ProviderQuirks = ProviderPreset['quirks'];

/** The name of a built-in preset. */
export type ProviderName = keyof typeof PROVIDERS;

/** A preset by name (a copy, safe to modify), or the given preset itself. Throws for an unknown name. */
export function resolveProvider(nameOrPreset: ProviderName | ProviderPreset): ProviderPreset {
  if (typeof nameOrPreset !== 'string') return nameOrPreset;
  if (!Object.hasOwn(PROVIDERS, nameOrPreset)) {
    throw new Ai4tsError(
      `Unknown provider "${String(nameOrPreset)}"; use one of ${Object.keys(PROVIDERS).join(', ')}, or pass a preset object`,
    );
  }
  return structuredClone<ProviderPreset>(PROVIDERS[nameOrPreset]);
}

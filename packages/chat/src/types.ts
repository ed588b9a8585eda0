/**
 * The Chat Completions wire: the request (typed field by field, and checked once per call at the boundary by a small
 * zod/mini schema), the streamed chunk and the final completion. Chunks are not zod-parsed: the listener checks them
 * by hand. A field the request type does not know (a provider's own, such as `enable_thinking` or `top_k`) goes in
 * the per-request options' `extraBody`.
 */
import type { FinishReason, JsonSchema, SdkFields, Usage } from '@ai4ts/core';
import { isRecord, positiveInt } from '@ai4ts/core/internal';
import * as z from 'zod/mini';

// ---- content parts -----------------------------------------------------------------------------------------------

/** Text in a message. */
export interface ChatTextPart {
  type: 'text';
  text: string;
}

/** An image, by URL or as a `data:` URL. */
export interface ChatImagePart {
  type: 'image_url';
  image_url: { url: string; detail?: 'auto' | 'low' | 'high' };
}

/** Base64 audio. */
export interface ChatInputAudioPart {
  type: 'input_audio';
  input_audio: { data: string; format: 'wav' | 'mp3' };
}

/** A file, uploaded (`file_id`) or inline (`file_data`, base64, with its `filename`). */
export interface ChatFilePart {
  type: 'file';
  file: { file_data?: string; file_id?: string; filename?: string };
}

/** An assistant's refusal, sent back in an assistant message. */
export interface ChatRefusalPart {
  type: 'refusal';
  refusal: string;
}

/** A content part of a user message. */
export type ChatUserContentPart = ChatTextPart | ChatImagePart | ChatInputAudioPart | ChatFilePart;

/**
 * A content part as a provider streams it in a chunk (Mistral's `{type:'thinking', thinking}`, ...): any `type`,
 * any fields.
 */
export interface ContentPart {
  type: string;
  [key: string]: unknown;
}

// ---- messages ----------------------------------------------------------------------------------------------------

/** Instructions from the application (`developer` on OpenAI's reasoning models). */
export interface ChatSystemMessage {
  role: 'system' | 'developer';
  content: string | ChatTextPart[];
  name?: string;
}

/** The user's turn. */
export interface ChatUserMessage {
  role: 'user';
  content: string | ChatUserContentPart[];
  name?: string;
}

/**
 * A complete tool call in a completion. Fields the provider sent beside the known ones (Gemini's
 * `extra_content.google.thought_signature`) are kept, so the call goes back to the provider exactly as it came.
 */
export interface ChatCompletionMessageToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
  [key: string]: unknown;
}

/**
 * An assistant turn sent back. A received {@link ChatCompletionMessage} is one as it is, provider fields included
 * (OpenRouter's `reasoning_details`, ...): the loop sends it back exactly as it came.
 */
export interface ChatAssistantMessage {
  role: 'assistant';
  content?: string | Array<ChatTextPart | ChatRefusalPart> | null;
  name?: string;
  refusal?: string | null;
  /** DeepSeek, Qwen, Moonshot and others take the reasoning back. */
  reasoning_content?: string;
  tool_calls?: ChatCompletionMessageToolCall[];
  /** A previous audio response, by id. */
  audio?: { id: string } | null;
}

/** The result of a tool call, answering `tool_call_id`. */
export interface ChatToolMessage {
  role: 'tool';
  content: string | ChatTextPart[];
  tool_call_id: string;
}

/** One message of the conversation, by role. */
export type ChatMessage = ChatSystemMessage | ChatUserMessage | ChatAssistantMessage | ChatToolMessage;

// ---- the request -------------------------------------------------------------------------------------------------

/** A tool in Chat Completions' wire form. */
export interface ChatTool {
  type: 'function';
  function: { name: string; description?: string; parameters: JsonSchema; strict?: boolean };
}

/**
 * A tool in its wire form: a `function` tool (`{ type: 'function', function: { name, description?, parameters } }`,
 * what `toChatTool` makes) or any provider's own tool type (`custom`, a built-in search), passed through
 * unchanged. Never a `defineTool` tool (those belong to the tool loop's request).
 */
export type ChatWireTool = ChatTool | { type: string; [key: string]: unknown };

/** Which tool the model may or must call. */
export type ChatToolChoice =
  | 'none'
  | 'auto'
  | 'required'
  | { type: 'function'; function: { name: string } }
  | { type: 'custom'; custom: { name: string } }
  | { type: 'allowed_tools'; allowed_tools: { mode: 'auto' | 'required'; tools: Array<Record<string, unknown>> } };

/** The output format: text, any JSON object, or JSON matching a schema (structured outputs). */
export type ChatResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | {
      type: 'json_schema';
      json_schema: { name: string; description?: string; schema?: Record<string, unknown>; strict?: boolean | null };
    };

/** How hard a reasoning model thinks. */
export type ReasoningEffort = 'none' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh' | 'max';

/**
 * One plain Chat Completions request: OpenAI's documented fields (no tool-loop fields, no `defineTool` tools). A
 * misspelled or unknown field is a type error; a provider's own field goes in the options' `extraBody`.
 */
export interface ChatCompletionCreateParams extends SdkFields {
  model: string;
  messages: ChatMessage[];
  /** Audio output settings (with `modalities: ['text', 'audio']`). */
  audio?: { voice: string; format: 'wav' | 'aac' | 'mp3' | 'flac' | 'opus' | 'pcm16' } | null;
  frequency_penalty?: number | null;
  /** @deprecated Use `tool_choice`. */
  function_call?: 'none' | 'auto' | { name: string };
  /** @deprecated Use `tools`. */
  functions?: Array<{ name: string; description?: string; parameters?: Record<string, unknown> }>;
  /** Token id to a bias from -100 to 100. */
  logit_bias?: Record<string, number> | null;
  logprobs?: boolean | null;
  /** The upper bound of generated tokens, reasoning included (what OpenAI's reasoning models take). */
  max_completion_tokens?: number | null;
  /** The older output limit; most OpenAI-compatible providers still read this one. */
  max_tokens?: number | null;
  metadata?: Record<string, string> | null;
  modalities?: Array<'text' | 'audio'> | null;
  n?: number | null;
  parallel_tool_calls?: boolean;
  /** Predicted output, to speed up a regeneration that changes little. */
  prediction?: { type: 'content'; content: string | ChatTextPart[] } | null;
  presence_penalty?: number | null;
  prompt_cache_key?: string | null;
  prompt_cache_retention?: 'in_memory' | '24h' | null;
  reasoning_effort?: ReasoningEffort | null;
  response_format?: ChatResponseFormat;
  safety_identifier?: string | null;
  seed?: number | null;
  service_tier?: 'auto' | 'default' | 'flex' | 'scale' | 'priority' | null;
  stop?: string | string[] | null;
  store?: boolean | null;
  stream?: boolean | null;
  stream_options?: { include_usage?: boolean; include_obfuscation?: boolean } | null;
  temperature?: number | null;
  tool_choice?: ChatToolChoice;
  /** Wire-format tools only; tools made by `defineTool` belong to the tool loop's request ({@link ChatLoopRequest}). */
  tools?: ChatWireTool[];
  top_logprobs?: number | null;
  top_p?: number | null;
  /** @deprecated Use `safety_identifier` and `prompt_cache_key`. */
  user?: string;
  verbosity?: 'low' | 'medium' | 'high' | null;
  web_search_options?: {
    search_context_size?: 'low' | 'medium' | 'high';
    user_location?: {
      type: 'approximate';
      approximate: { city?: string; country?: string; region?: string; timezone?: string };
    } | null;
  };
}

/**
 * Every field of {@link ChatCompletionCreateParams}, for the `strictRequests` check: typed by the request type's keys, so a field added
 * to the type and not here (or the reverse) fails to compile.
 */
const CHAT_REQUEST_FIELDS_RECORD: Record<keyof ChatCompletionCreateParams, true> = {
  model: true, messages: true, audio: true, frequency_penalty: true, function_call: true, functions: true,
  logit_bias: true, logprobs: true, max_completion_tokens: true, max_tokens: true, metadata: true, modalities: true,
  n: true, parallel_tool_calls: true, prediction: true, presence_penalty: true, prompt_cache_key: true,
  prompt_cache_retention: true, reasoning_effort: true, response_format: true, safety_identifier: true, seed: true,
  service_tier: true, stop: true, store: true, stream: true, stream_options: true, temperature: true, tool_choice:
  true, tools: true, top_logprobs: true, top_p: true, user: true, verbosity: true, web_search_options: true,
  telemetry: true,
};

/** The names of {@link ChatCompletionCreateParams}'s fields (`telemetry` included). */
export const CHAT_REQUEST_FIELDS: ReadonlySet<string> = new Set(Object.keys(CHAT_REQUEST_FIELDS_RECORD));

// ---- the boundary check ------------------------------------------------------------------------------------------

const TextContent = z.union([z.string(), z.array(z.looseObject({ type: z.string() }))]);

/**
 * Checks the fields every call needs, the message roles and the wire form of the tools; the API judges the rest. One
 * message shape with per-role refinements rather than a discriminated union: the same checks (and a clearer message
 * for an unknown role) without zod's discriminated-union class in every browser bundle (nor its literal class:
 * a one-value enum checks the same).
 */
export const ChatCompletionCreateParamsSchema = z.looseObject({
  model: z.string().check(z.minLength(1)),
  messages: z
    .array(
      z
        .looseObject({
          role: z.enum(['system', 'developer', 'user', 'assistant', 'tool']),
          content: z.nullish(TextContent),
          tool_calls: z.optional(
            z.array(
              z.looseObject({
                id: z.string(),
                type: z.enum(['function']),
                function: z.looseObject({ name: z.string(), arguments: z.string() }),
              }),
            ),
          ),
          tool_call_id: z.optional(z.string()),
        })
        .check(
          z.refine((message) => message.role === 'assistant' || message.content != null, {
            message: 'Invalid input: content is required except in an assistant message',
            path: ['content'],
          }),
          z.refine((message) => message.role !== 'tool' || message.tool_call_id !== undefined, {
            message: 'Invalid input: a tool message needs its tool_call_id',
            path: ['tool_call_id'],
          }),
        ),
    )
    .check(z.minLength(1)),
  n: z.nullish(positiveInt()),
  tools: z.optional(
    z.array(
      z.custom<ChatWireTool>(
        (value) => isRecord(value) && typeof value.type === 'string',
        'A tool must be in wire form: an object with a string "type"',
      ),
    ),
  ),
});

/** Token log probabilities, appended chunk by chunk. */
export interface ChatCompletionLogprobs {
  content: unknown[] | null;
  refusal: unknown[] | null;
}

/**
 * The assistant's message in a completion. Fields the provider sent beside the known ones (OpenRouter's
 * `reasoning_details`, `annotations`) are kept, so the turn goes back to the provider exactly as it came.
 */
export interface ChatCompletionMessage {
  role: 'assistant';
  /** The concatenated text, or null when no text arrived. */
  content: string | null;
  /** Present only when reasoning arrived (reasoning_content, reasoning, thinking parts or `<think>` text). */
  reasoning_content?: string;
  refusal?: string | null;
  tool_calls?: ChatCompletionMessageToolCall[];
  [key: string]: unknown;
}

/** One choice of a completion. */
export interface ChatCompletionChoice {
  index: number;
  message: ChatCompletionMessage;
  /** Null only in a partial completion whose choice never finished. */
  finish_reason: FinishReason | null;
  logprobs?: ChatCompletionLogprobs | null;
}

/** A `chat.completion` object, the result of `create()`, `collectChatCompletion()` and `ChatStream.final()`. */
export interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  system_fingerprint?: string;
  choices: ChatCompletionChoice[];
  usage?: Usage;
}

/** A streamed tool-call fragment. Providers differ: `index` may be absent, ids may repeat or be empty. */
export interface ChatCompletionChunkToolCall {
  index?: number;
  id?: string | null;
  type?: 'function';
  function?: { name?: string | null; arguments?: string | null };
  /** Provider fields (Gemini's `extra_content`): merged into the call. */
  [key: string]: unknown;
}

/** The delta of one choice in a chunk. */
export interface ChatCompletionChunkDelta {
  role?: string | null;
  /** Text, or (Mistral) an array of `{type:'text', text}` and `{type:'thinking', thinking}` parts. */
  content?: string | ContentPart[] | null;
  /** DeepSeek, Qwen, Moonshot and others. */
  reasoning_content?: string | null;
  /** OpenRouter, vLLM. */
  reasoning?: string | null;
  refusal?: string | null;
  tool_calls?: ChatCompletionChunkToolCall[] | null;
  /** Provider fields (OpenRouter's `reasoning_details`): merged into the message. */
  [key: string]: unknown;
}

/** One choice of a chunk. */
export interface ChatCompletionChunkChoice {
  index?: number;
  delta?: ChatCompletionChunkDelta | null;
  finish_reason?: FinishReason | null;
  logprobs?: Partial<ChatCompletionLogprobs> | null;
  /** Moonshot puts usage here in the finish chunk. */
  usage?: Usage | null;
}

/** A `chat.completion.chunk` as providers stream it. */
export interface ChatCompletionChunk {
  id?: string;
  object?: string;
  created?: number;
  model?: string;
  system_fingerprint?: string | null;
  /** May be empty (Azure's content-filter preamble, the usage chunk) or absent. */
  choices?: ChatCompletionChunkChoice[];
  usage?: Usage | null;
}

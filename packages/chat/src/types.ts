/**
 * The Chat Completions wire: the request (with its zod schema, checked once per call at the boundary), the
 * streamed chunk and the final completion. Chunks are not zod-parsed: the listener checks them by hand.
 */
import type { ChatTool, FinishReason, SdkFields, Usage } from '@ai4ts/core';
import { isRecord } from '@ai4ts/core/internal';
import { z } from 'zod';

/** A content part of a user message (text or image; other provider parts pass through). */
export const ContentPartSchema = z.looseObject({ type: z.string() });

const TextContent = z.union([z.string(), z.array(ContentPartSchema)]);

/** A tool call as the assistant sent it: `arguments` is the argument string exactly as streamed. */
export const ToolCallSchema = z.looseObject({
  id: z.string(),
  type: z.literal('function'),
  function: z.looseObject({ name: z.string(), arguments: z.string() }),
});

/**
 * A tool in its wire form: a `function` tool (`{ type: 'function', function: { name, description?, parameters } }`,
 * what core's `toChatTool` makes) or any provider's own tool type, passed through unchanged. Never a `defineTool`
 * tool (those belong to the tool loop's request).
 */
export type ChatWireTool = ChatTool | { type: string; [key: string]: unknown };

/** Checks that a tool is in wire form: an object with a string `type`. */
export const ChatWireToolSchema = z.custom<ChatWireTool>(
  (value) => isRecord(value) && typeof value.type === 'string',
  'A tool must be in wire form: an object with a string "type"',
);

/** One message of the conversation, by role. Unknown provider fields (e.g. `reasoning_content`) pass through. */
export const ChatMessageSchema = z.discriminatedUnion('role', [
  z.looseObject({ role: z.literal('system'), content: TextContent, name: z.string().optional() }),
  z.looseObject({ role: z.literal('developer'), content: TextContent, name: z.string().optional() }),
  z.looseObject({ role: z.literal('user'), content: TextContent, name: z.string().optional() }),
  z.looseObject({
    role: z.literal('assistant'),
    content: TextContent.nullish(),
    name: z.string().optional(),
    refusal: z.string().nullish(),
    reasoning_content: z.string().optional(),
    tool_calls: z.array(ToolCallSchema).optional(),
  }),
  z.looseObject({ role: z.literal('tool'), content: TextContent, tool_call_id: z.string() }),
]);

/**
 * A Chat Completions request. `model` and `messages` are checked; every other field (OpenAI's or a provider's own,
 * such as `enable_thinking` or `top_k`) passes through to the wire unchanged.
 */
export const ChatCompletionRequestSchema = z.looseObject({
  model: z.string().min(1),
  messages: z.array(ChatMessageSchema).min(1),
  stream: z.boolean().optional(),
  stream_options: z.looseObject({ include_usage: z.boolean().optional() }).nullish(),
  n: z.number().int().positive().nullish(),
  /** Wire-format tools only; tools made by `defineTool` belong to the tool loop's request ({@link ChatLoopRequest}). */
  tools: z.array(ChatWireToolSchema).optional(),
});

export type ContentPart = z.infer<typeof ContentPartSchema>;
export type ChatMessage = z.infer<typeof ChatMessageSchema>;
/** One plain Chat Completions request: the wire fields only (no tool-loop fields, no `defineTool` tools). */
export type ChatCompletionRequest = z.infer<typeof ChatCompletionRequestSchema> & SdkFields;

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

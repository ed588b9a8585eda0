/**
 * The wire types of Amazon Bedrock's Converse API (`POST /model/{modelId}/converse` and `/converse-stream`), with
 * the names of AWS's SDK (`@aws-sdk/client-bedrock-runtime`): `ContentBlock`, `Message`, `ConverseResponse`,
 * `ConverseStreamOutput`. One difference: the model is the request's `model` (ai4ts's name in every protocol, for
 * middleware, spans and prices); it is sent in the path, as `modelId`.
 */
import type { SdkFields } from '@ai4ts/core';
import { isRecord } from '@ai4ts/core/internal';

/** Reasoning the model showed: its text and the signature that must come back with it, or redacted content. */
export type ReasoningContentBlock =
  | { reasoningText: { text: string; signature?: string } }
  | { redactedContent: string };

/** A tool result's content: text or JSON (images and documents pass through as sent). */
export type ToolResultContentBlock = { text: string } | { json: unknown } | Record<string, unknown>;

/** A call the model made. `input` is the parsed JSON object. */
export interface ToolUseBlock {
  toolUseId: string;
  name: string;
  input: unknown;
}

/** The answer to a call. */
export interface ToolResultBlock {
  toolUseId: string;
  content: ToolResultContentBlock[];
  status?: 'success' | 'error';
}

/** One block of a message. Blocks the types do not name (image, document, guardContent, ...) pass through. */
export type ContentBlock =
  | { text: string }
  | { toolUse: ToolUseBlock }
  | { toolResult: ToolResultBlock }
  | { reasoningContent: ReasoningContentBlock }
  | { cachePoint: { type: 'default' } }
  | Record<string, unknown>;

/** A turn of the conversation. */
export interface Message {
  role: 'user' | 'assistant';
  content: ContentBlock[];
}

/** A system prompt block. */
export type SystemContentBlock = { text: string } | { cachePoint: { type: 'default' } } | Record<string, unknown>;

/** A tool as Converse takes it: its JSON Schema under `inputSchema.json`. */
export interface ToolSpecification {
  name: string;
  description?: string;
  inputSchema: { json: unknown };
}

/** A tool of `toolConfig.tools`. */
export type ConverseTool = { toolSpec: ToolSpecification } | { cachePoint: { type: 'default' } };

/** `toolConfig`: the tools and how the model must use them. */
export interface ToolConfiguration {
  tools: ConverseTool[];
  toolChoice?: { auto: Record<string, never> } | { any: Record<string, never> } | { tool: { name: string } };
}

/** `inferenceConfig`. */
export interface InferenceConfiguration {
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  stopSequences?: string[];
}

/** A Converse request, as ai4ts sends it (the model in the path, see the module's note). */
export interface ConverseRequest extends SdkFields {
  model: string;
  /**
   * Not the API's: Converse's tools go in `toolConfig.tools`. A request whose `tools` holds `defineTool` tools is a
   * loop request (`ConverseLoopRequest`), which sends them there.
   */
  tools?: undefined;
  messages: Message[];
  system?: SystemContentBlock[];
  inferenceConfig?: InferenceConfiguration;
  toolConfig?: ToolConfiguration;
  guardrailConfig?: Record<string, unknown>;
  additionalModelRequestFields?: Record<string, unknown>;
  additionalModelResponseFieldPaths?: string[];
  promptVariables?: Record<string, unknown>;
  requestMetadata?: Record<string, string>;
  performanceConfig?: { latency: 'standard' | 'optimized' };
}

const CONVERSE_REQUEST_FIELDS_RECORD: Record<keyof ConverseRequest, true> = {
  model: true, tools: true, messages: true, system: true, inferenceConfig: true, toolConfig: true, guardrailConfig: true,
  additionalModelRequestFields: true, additionalModelResponseFieldPaths: true, promptVariables: true,
  requestMetadata: true, performanceConfig: true, telemetry: true,
};

/** The names of {@link ConverseRequest}'s fields (`telemetry` included), for `strictRequests`. */
export const CONVERSE_REQUEST_FIELDS: ReadonlySet<string> = new Set(Object.keys(CONVERSE_REQUEST_FIELDS_RECORD));

/** Why the model stopped. Other values pass through. */
export type StopReason =
  | 'end_turn'
  | 'tool_use'
  | 'max_tokens'
  | 'stop_sequence'
  | 'guardrail_intervened'
  | 'content_filtered'
  | (string & {});

/** Token usage (`metadata.usage` in a stream). */
export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  cacheReadInputTokens?: number;
  cacheWriteInputTokens?: number;
  [key: string]: unknown;
}

/** The answer of `/converse`, and what a `/converse-stream` stream is folded into. */
export interface ConverseResponse {
  output: { message: Message };
  stopReason: StopReason;
  usage?: TokenUsage;
  metrics?: { latencyMs: number };
  additionalModelResponseFields?: unknown;
  trace?: unknown;
  performanceConfig?: unknown;
}

/** What a `contentBlockStart` opens: a tool call (text and reasoning blocks start with their first delta). */
export interface ContentBlockStart {
  toolUse?: { toolUseId: string; name: string };
  [key: string]: unknown;
}

/** One delta of a block: text, a piece of a call's JSON input, or reasoning. */
export interface ContentBlockDelta {
  text?: string;
  toolUse?: { input: string };
  reasoningContent?: { text?: string; signature?: string; redactedContent?: string };
  [key: string]: unknown;
}

/**
 * One event of a `/converse-stream` stream, keyed by its name (the frame's `:event-type`): `messageStart`,
 * `contentBlockStart`, `contentBlockDelta`, `contentBlockStop`, `messageStop`, `metadata`.
 */
export interface ConverseStreamOutput {
  messageStart?: { role: 'assistant' };
  contentBlockStart?: { contentBlockIndex: number; start: ContentBlockStart };
  contentBlockDelta?: { contentBlockIndex: number; delta: ContentBlockDelta };
  contentBlockStop?: { contentBlockIndex: number };
  messageStop?: { stopReason: StopReason; additionalModelResponseFields?: unknown };
  metadata?: { usage?: TokenUsage; metrics?: { latencyMs: number }; trace?: unknown; performanceConfig?: unknown };
}

/** Whether a block is a call. */
export function isToolUseBlock(block: ContentBlock): block is { toolUse: ToolUseBlock } {
  return 'toolUse' in block && isRecord(block.toolUse);
}

/** Whether a block is text. */
export function isTextBlock(block: ContentBlock): block is { text: string } {
  return 'text' in block && typeof block.text === 'string';
}

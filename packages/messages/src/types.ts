/**
 * The Anthropic Messages wire shapes ai4ts reads and writes: messages, content blocks, usage, stop reasons,
 * request parameters and the raw stream events. Fields the API may add later pass through untouched.
 */

import type { SdkFields } from '@ai4ts/core';

/** A citation attached to a text block (char, page, content-block, search-result or web-search location). */
export interface TextCitation {
  type: string;
  cited_text?: string;
  [key: string]: unknown;
}

/** Answer text; `citations` grows through `citations_delta` events. */
export interface TextBlock {
  type: 'text';
  text: string;
  citations?: TextCitation[] | null;
}

/** Extended thinking. `signature` must be sent back unchanged when the turn continues with tool results. */
export interface ThinkingBlock {
  type: 'thinking';
  thinking: string;
  signature: string;
}

/** Thinking the safety systems encrypted; sent back unchanged like a thinking block. */
export interface RedactedThinkingBlock {
  type: 'redacted_thinking';
  data: string;
}

/** Why a finished tool input could not be used: not JSON, not an object, or cut off (by max_tokens or a failure). */
export interface ToolInputError {
  message: string;
  /** The input text exactly as streamed. */
  raw: string;
}

/**
 * A tool the client runs. `input` is parsed once the block stops; when it is not a JSON object, `input` stays `{}`
 * and `input_error` says why. `input_error` is ai4ts's own field: it is stripped before the block is sent back.
 */
export interface ToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  input: Record<string, unknown>;
  input_error?: ToolInputError;
}

/** A tool the server runs (web search, code execution); its result arrives as another block in the same message. */
export interface ServerToolUseBlock {
  type: 'server_tool_use';
  id: string;
  name: string;
  input: Record<string, unknown>;
  input_error?: ToolInputError;
}

/** One result of a web search, as the server tool returned it. */
export interface WebSearchResultBlock {
  type: 'web_search_result';
  title: string;
  url: string;
  encrypted_content: string;
  page_age?: string | null;
  [key: string]: unknown;
}

/** Why a web search failed (`max_uses_exceeded`, `too_many_requests`, ...). */
export interface WebSearchToolResultError {
  type: 'web_search_tool_result_error';
  error_code: string;
  [key: string]: unknown;
}

/** The result of a `web_search` server tool call, which the server ran: the results, or an error code. */
export interface WebSearchToolResultBlock {
  type: 'web_search_tool_result';
  tool_use_id: string;
  content: WebSearchResultBlock[] | WebSearchToolResultError;
}

/**
 * A block of an assistant message whose type ai4ts knows: a discriminated union, so comparing `type` narrows it.
 * The blocks ai4ts reads keep every field the API sent beside the typed ones.
 */
export type ContentBlock =
  | TextBlock
  | ThinkingBlock
  | RedactedThinkingBlock
  | ToolUseBlock
  | ServerToolUseBlock
  | WebSearchToolResultBlock;

/** The `type` values of {@link ContentBlock}. */
export type ContentBlockType = ContentBlock['type'];

/**
 * A block whose type ai4ts does not know (`mcp_tool_use`, types added later), kept exactly as the API sent it. Its
 * `type` is never one of {@link ContentBlockType}. Kept out of {@link ContentBlock} because a `type: string` member
 * would stop `type` from narrowing the union: use {@link isKnownBlock} (or a guard such as {@link isTextBlock})
 * first, then switch on `type`.
 */
export interface UnknownContentBlock {
  type: string;
  [key: string]: unknown;
}

/** What `Message.content` holds: known blocks, and unknown ones as sent. */
export type AnyContentBlock = ContentBlock | UnknownContentBlock;

/** Why the model stopped. */
export type StopReason =
  | 'end_turn'
  | 'max_tokens'
  | 'stop_sequence'
  | 'tool_use'
  | 'pause_turn'
  | 'refusal'
  | (string & {});

/** Token counts as Anthropic reports them. `input_tokens` excludes the cached part (read or written). */
export interface MessageUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  server_tool_use?: { web_search_requests?: number; web_fetch_requests?: number; [key: string]: unknown } | null;
  service_tier?: string | null;
  [key: string]: unknown;
}

/**
 * An assistant message: the result of `create`, `stream(...).final()` and `collectMessage`. Fields the API sends
 * beside the typed ones (`container`, `context_management`, ...) are kept.
 */
export interface Message {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  /** The blocks in index order; narrow with {@link isKnownBlock} or the block guards. */
  content: AnyContentBlock[];
  stop_reason: StopReason | null;
  stop_sequence: string | null;
  usage: MessageUsage;
  [key: string]: unknown;
}

// ---- request parameters ------------------------------------------------------------------------------------------

/** A text block in a request. */
export interface TextBlockParam {
  type: 'text';
  text: string;
  citations?: TextCitation[] | null;
  [key: string]: unknown;
}

/** A tool_use block sent back in an assistant turn (no `input_error`). */
export interface ToolUseBlockParam {
  type: 'tool_use';
  id: string;
  name: string;
  input: Record<string, unknown>;
  [key: string]: unknown;
}

/** A server_tool_use block sent back in an assistant turn (no `input_error`). */
export interface ServerToolUseBlockParam {
  type: 'server_tool_use';
  id: string;
  name: string;
  input: Record<string, unknown>;
  [key: string]: unknown;
}

/** The answer to a tool_use block, sent in the next user message. `is_error` marks a failure the model should see. */
export interface ToolResultBlockParam {
  type: 'tool_result';
  tool_use_id: string;
  content?: string | Array<TextBlockParam | UnknownContentBlock>;
  is_error?: boolean;
  [key: string]: unknown;
}

/**
 * Any block a request may carry: the typed ones, the blocks of a received message sent back as they came, and any
 * other block type (images, documents, ...) as {@link UnknownContentBlock}.
 */
export type ContentBlockParam =
  | TextBlockParam
  | TextBlock
  | ToolUseBlockParam
  | ServerToolUseBlockParam
  | ToolResultBlockParam
  | ThinkingBlock
  | RedactedThinkingBlock
  | WebSearchToolResultBlock
  | UnknownContentBlock;

/** One turn of the conversation. */
export interface MessageParam {
  role: 'user' | 'assistant';
  content: string | ContentBlockParam[];
}

/** A client tool the model may call; `input_schema` is a JSON Schema object. */
export interface ClientToolDefinition {
  name: string;
  description?: string;
  input_schema: { type: 'object'; [key: string]: unknown };
  [key: string]: unknown;
}

/** A tool the server runs (`{ type: 'web_search_20250305', name: 'web_search', ... }`). */
export interface ServerToolDefinition {
  type: string;
  name: string;
  [key: string]: unknown;
}

/** A tool in its wire form. A tool made by `defineTool` belongs to the tool loop's request (`MessageLoopRequest`). */
export type MessageTool = ClientToolDefinition | ServerToolDefinition;

/**
 * The body of `POST /messages`, the API's documented fields. `stream` is set by the service. A field this type
 * does not know goes in the request options' `extraBody`. `tools` holds wire tools only.
 */
export interface MessageCreateParams extends SdkFields {
  model: string;
  max_tokens: number;
  messages: MessageParam[];
  system?: string | TextBlockParam[];
  tools?: MessageTool[];
  tool_choice?: { type: 'auto' | 'any' | 'tool' | 'none'; name?: string; disable_parallel_tool_use?: boolean };
  thinking?: { type: 'enabled'; budget_tokens: number } | { type: 'disabled' };
  temperature?: number;
  top_p?: number;
  top_k?: number;
  stop_sequences?: string[];
  metadata?: { user_id?: string };
  service_tier?: 'auto' | 'standard_only';
  container?: string | null;
  mcp_servers?: Array<Record<string, unknown>>;
  context_management?: Record<string, unknown>;
}

// ---- raw stream events -------------------------------------------------------------------------------------------

/** Opens the stream: the message with empty content and the input usage. */
export interface MessageStartEvent {
  type: 'message_start';
  message: Message;
}

/** A block begins at `index`, with empty text / input. */
export interface ContentBlockStartEvent {
  type: 'content_block_start';
  index: number;
  content_block: AnyContentBlock;
}

/** A fragment of a text block. */
export interface TextDelta {
  type: 'text_delta';
  text: string;
}

/** A fragment of a thinking block. */
export interface ThinkingDelta {
  type: 'thinking_delta';
  thinking: string;
}

/** The signature of a thinking block, which replaces the start's empty one. */
export interface SignatureDelta {
  type: 'signature_delta';
  signature: string;
}

/** A fragment of a tool input's JSON text. */
export interface InputJsonDelta {
  type: 'input_json_delta';
  partial_json: string;
}

/** A citation for a text block. */
export interface CitationsDelta {
  type: 'citations_delta';
  citation: TextCitation;
}

/** The delta types ai4ts applies; others are skipped. */
export type ContentBlockDelta = TextDelta | ThinkingDelta | SignatureDelta | InputJsonDelta | CitationsDelta;

/** A fragment of the block at `index`. */
export interface ContentBlockDeltaEvent {
  type: 'content_block_delta';
  index: number;
  delta: ContentBlockDelta;
}

/** The block at `index` is complete. */
export interface ContentBlockStopEvent {
  type: 'content_block_stop';
  index: number;
}

/** The stop reason (and any other message field that changed) and the final (cumulative) usage counters. */
export interface MessageDeltaEvent {
  type: 'message_delta';
  delta: { stop_reason?: StopReason | null; stop_sequence?: string | null; [key: string]: unknown };
  usage?: { [K in keyof MessageUsage]?: MessageUsage[K] | null };
}

/** The only event that completes a stream. */
export interface MessageStopEvent {
  type: 'message_stop';
}

/** Keep-alive; changes nothing. */
export interface PingEvent {
  type: 'ping';
}

/** An error inside a stream that began with HTTP 200 (e.g. `overloaded_error`). */
export interface ErrorStreamEvent {
  type: 'error';
  error: { type: string; message: string; [key: string]: unknown };
}

/**
 * One raw event of a Messages stream (the `data` of its SSE event), a discriminated union on `type`. Named like
 * the Anthropic SDK's, to tell it from `MessageStreamEvents`, the listener's handler map. Event and delta
 * types ai4ts does not know are skipped when read.
 */
export type RawMessageStreamEvent =
  | MessageStartEvent
  | ContentBlockStartEvent
  | ContentBlockDeltaEvent
  | ContentBlockStopEvent
  | MessageDeltaEvent
  | MessageStopEvent
  | PingEvent
  | ErrorStreamEvent;

// ---- guards ------------------------------------------------------------------------------------------------------

const KNOWN_BLOCK_TYPES: ReadonlySet<string> = new Set<ContentBlockType>([
  'text',
  'thinking',
  'redacted_thinking',
  'tool_use',
  'server_tool_use',
  'web_search_tool_result',
]);

/** True for a block whose type ai4ts knows; `type` then narrows it. */
export function isKnownBlock(block: AnyContentBlock): block is ContentBlock {
  return KNOWN_BLOCK_TYPES.has(block.type);
}

/** True for a client tool_use block. */
export function isToolUseBlock(block: AnyContentBlock): block is ToolUseBlock {
  return block.type === 'tool_use';
}

/** True for a text block. */
export function isTextBlock(block: AnyContentBlock): block is TextBlock {
  return block.type === 'text';
}

/** True for a thinking block. */
export function isThinkingBlock(block: AnyContentBlock): block is ThinkingBlock {
  return block.type === 'thinking';
}

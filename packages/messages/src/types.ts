/**
 * The Anthropic Messages wire shapes ai4ts reads and writes: messages, content blocks, usage, stop reasons,
 * request parameters and the raw stream events. Fields the API may add later pass through untouched.
 */

import type { JsonSchema, SdkFields } from '@ai4ts/core';

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

/** A prompt-cache breakpoint at a block, a tool or the system prompt. */
export interface CacheControl {
  type: 'ephemeral';
  ttl?: '5m' | '1h';
}

/** A text block in a request. */
export interface TextBlockParam {
  type: 'text';
  text: string;
  citations?: TextCitation[] | null;
  cache_control?: CacheControl | null;
}

/** The image types the Messages API takes. */
export type ImageMediaType = 'image/jpeg' | 'image/png' | 'image/gif' | 'image/webp';

/** An image: base64 data, a URL, or an uploaded file. */
export interface ImageBlockParam {
  type: 'image';
  source:
    | { type: 'base64'; media_type: ImageMediaType; data: string }
    | { type: 'url'; url: string }
    | { type: 'file'; file_id: string };
  cache_control?: CacheControl | null;
}

/** A document (PDF, plain text, or content blocks) the model reads, and may cite with `citations: { enabled: true }`. */
export interface DocumentBlockParam {
  type: 'document';
  source:
    | { type: 'base64'; media_type: 'application/pdf'; data: string }
    | { type: 'text'; media_type: 'text/plain'; data: string }
    | { type: 'url'; url: string }
    | { type: 'file'; file_id: string }
    | { type: 'content'; content: string | Array<TextBlockParam | ImageBlockParam> };
  title?: string | null;
  context?: string | null;
  citations?: { enabled?: boolean } | null;
  cache_control?: CacheControl | null;
}

/** A search result the application supplies, citable like a document. */
export interface SearchResultBlockParam {
  type: 'search_result';
  source: string;
  title: string;
  content: TextBlockParam[];
  citations?: { enabled?: boolean };
  cache_control?: CacheControl | null;
}

/** A tool_use block sent back in an assistant turn (no `input_error`). */
export interface ToolUseBlockParam {
  type: 'tool_use';
  id: string;
  name: string;
  input: Record<string, unknown>;
  cache_control?: CacheControl | null;
}

/** A server_tool_use block sent back in an assistant turn (no `input_error`). */
export interface ServerToolUseBlockParam {
  type: 'server_tool_use';
  id: string;
  name: string;
  input: Record<string, unknown>;
  cache_control?: CacheControl | null;
}

/** The answer to a tool_use block, sent in the next user message. `is_error` marks a failure the model should see. */
export interface ToolResultBlockParam {
  type: 'tool_result';
  tool_use_id: string;
  content?: string | Array<TextBlockParam | ImageBlockParam | DocumentBlockParam | SearchResultBlockParam>;
  is_error?: boolean;
  cache_control?: CacheControl | null;
}

/**
 * Any block a request may carry: the typed ones, and the blocks of a received message sent back as they came (an
 * {@link UnknownContentBlock} among them, so a block type ai4ts does not know yet still round-trips).
 */
export type ContentBlockParam =
  | TextBlockParam
  | TextBlock
  | ImageBlockParam
  | DocumentBlockParam
  | SearchResultBlockParam
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

/** A `defineTool` tool in Anthropic Messages' wire form (what `toAnthropicTool` makes). */
export interface AnthropicTool {
  name: string;
  description?: string;
  input_schema: JsonSchema;
}

/** A client tool the model may call; `input_schema` is a JSON Schema object. */
export interface ClientToolDefinition {
  name: string;
  description?: string;
  input_schema: { type: 'object'; [key: string]: unknown };
  type?: 'custom' | null;
  cache_control?: CacheControl | null;
  /** Structured outputs for the tool's input. */
  strict?: boolean;
}

/** A tool the server runs (`{ type: 'web_search_20250305', name: 'web_search', ... }`), with its own fields. */
export interface ServerToolDefinition {
  type: string;
  name: string;
  [key: string]: unknown;
}

/** A tool in its wire form. A tool made by `defineTool` belongs to the tool loop's request (`MessagesLoopRequest`). */
export type MessageTool = ClientToolDefinition | ServerToolDefinition;

/** Which tool the model may or must use. */
export type MessageToolChoice =
  | { type: 'auto'; disable_parallel_tool_use?: boolean }
  | { type: 'any'; disable_parallel_tool_use?: boolean }
  | { type: 'tool'; name: string; disable_parallel_tool_use?: boolean }
  | { type: 'none' };

/** Extended thinking: a token budget, adaptive (the model decides), or off. */
export type ThinkingConfig =
  | { type: 'enabled'; budget_tokens: number; display?: 'summarized' | 'omitted' | null }
  | { type: 'adaptive'; display?: 'summarized' | 'omitted' | null }
  | { type: 'disabled' };

/** A remote MCP server the API connects to (`mcp_servers`). */
export interface McpServerDefinition {
  type: 'url';
  url: string;
  name: string;
  authorization_token?: string | null;
  tool_configuration?: { enabled?: boolean | null; allowed_tools?: string[] | null } | null;
}

/**
 * The body of `POST /messages`, the API's documented fields. `stream` is set by the service. A misspelled or
 * unknown field is a type error; a field this type does not know goes in the request options' `extraBody`.
 * `tools` holds wire tools only.
 */
export interface MessageCreateParams extends SdkFields {
  model: string;
  max_tokens: number;
  messages: MessageParam[];
  system?: string | TextBlockParam[];
  tools?: MessageTool[];
  tool_choice?: MessageToolChoice;
  thinking?: ThinkingConfig;
  /** Not accepted with extended thinking, nor by every model. */
  temperature?: number;
  top_p?: number;
  top_k?: number;
  stop_sequences?: string[];
  metadata?: { user_id?: string | null };
  service_tier?: 'auto' | 'standard_only';
  /** A prompt-cache breakpoint for the whole request. */
  cache_control?: CacheControl | null;
  /** The code-execution container to reuse, by id or with skills. */
  container?: string | { id?: string | null; skills?: Array<Record<string, unknown>> | null } | null;
  /** The output's effort level and format (JSON matching a schema). */
  output_config?: {
    effort?: 'low' | 'medium' | 'high' | 'xhigh' | 'max' | null;
    format?: { type: 'json_schema'; schema: Record<string, unknown> } | null;
  };
  /** Where inference runs (data residency). */
  inference_geo?: string | null;
  speed?: 'standard' | 'fast' | null;
  mcp_servers?: McpServerDefinition[];
  context_management?: Record<string, unknown> | null;
}

/**
 * Every field of {@link MessageCreateParams}, for the `strictRequests` check: typed by the request type's keys, so a field added
 * to the type and not here (or the reverse) fails to compile.
 */
const MESSAGES_REQUEST_FIELDS_RECORD: Record<keyof MessageCreateParams, true> = {
  model: true, max_tokens: true, messages: true, system: true, tools: true, tool_choice: true, thinking: true,
  temperature: true, top_p: true, top_k: true, stop_sequences: true, metadata: true, service_tier: true,
  cache_control: true, container: true, output_config: true, inference_geo: true, speed: true, mcp_servers: true,
  context_management: true, telemetry: true,
};

/** The names of {@link MessageCreateParams}'s fields (`telemetry` included). */
export const MESSAGES_REQUEST_FIELDS: ReadonlySet<string> = new Set(Object.keys(MESSAGES_REQUEST_FIELDS_RECORD));

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
 * the Anthropic SDK's, to tell it from `MessagesStreamEvents`, the listener's handler map. Event and delta
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

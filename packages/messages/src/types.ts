/**
 * The Anthropic Messages wire shapes ai4ts reads and writes: messages, content blocks, usage, stop reasons,
 * request parameters and the raw stream events. Fields the API may add later pass through untouched.
 */

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

/**
 * Any other block (`web_search_tool_result`, `mcp_tool_use`, types added later), kept as the API sent it.
 * Narrow with the type guards or compare `type` and cast: TypeScript cannot exclude the known names from `string`.
 */
export interface OtherContentBlock {
  type: string;
  [key: string]: unknown;
}

/** A block of an assistant message, in the order the API indexed them. */
export type ContentBlock =
  | TextBlock
  | ThinkingBlock
  | RedactedThinkingBlock
  | ToolUseBlock
  | ServerToolUseBlock
  | OtherContentBlock;

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

/** An assistant message: the result of `create`, `stream(...).final()` and `collectMessage`. */
export interface Message {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: ContentBlock[];
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

/** The answer to a tool_use block, sent in the next user message. `is_error` marks a failure the model should see. */
export interface ToolResultBlockParam {
  type: 'tool_result';
  tool_use_id: string;
  content?: string | Array<TextBlockParam | { type: string; [key: string]: unknown }>;
  is_error?: boolean;
  [key: string]: unknown;
}

/** Any block a request may carry. */
export type ContentBlockParam =
  | TextBlockParam
  | ToolUseBlockParam
  | ToolResultBlockParam
  | ThinkingBlock
  | RedactedThinkingBlock
  | { type: string; [key: string]: unknown };

/** One turn of the conversation. */
export interface MessageParam {
  role: 'user' | 'assistant';
  content: string | ContentBlockParam[];
}

/** A client tool the model may call; `input_schema` is a JSON Schema object. */
export interface ToolDefinition {
  name: string;
  description?: string;
  input_schema: { type: 'object'; [key: string]: unknown };
  [key: string]: unknown;
}

/** The body of `POST /messages`. `stream` is set by the service; other API fields pass through. */
export interface MessageCreateParams {
  model: string;
  max_tokens: number;
  messages: MessageParam[];
  system?: string | TextBlockParam[];
  tools?: Array<ToolDefinition | { type: string; name: string; [key: string]: unknown }>;
  tool_choice?: { type: 'auto' | 'any' | 'tool' | 'none'; name?: string; disable_parallel_tool_use?: boolean };
  thinking?: { type: 'enabled'; budget_tokens: number } | { type: 'disabled' };
  temperature?: number;
  top_p?: number;
  top_k?: number;
  stop_sequences?: string[];
  metadata?: { user_id?: string };
  [key: string]: unknown;
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
  content_block: ContentBlock;
}

/** A fragment of the block at `index`. */
export interface ContentBlockDeltaEvent {
  type: 'content_block_delta';
  index: number;
  delta:
    | { type: 'text_delta'; text: string }
    | { type: 'thinking_delta'; thinking: string }
    | { type: 'signature_delta'; signature: string }
    | { type: 'input_json_delta'; partial_json: string }
    | { type: 'citations_delta'; citation: TextCitation }
    | { type: string; [key: string]: unknown };
}

/** The block at `index` is complete. */
export interface ContentBlockStopEvent {
  type: 'content_block_stop';
  index: number;
}

/** The stop reason and the final (cumulative) usage counters. */
export interface MessageDeltaEvent {
  type: 'message_delta';
  delta: { stop_reason?: StopReason | null; stop_sequence?: string | null; [key: string]: unknown };
  usage?: Partial<{ [K in keyof MessageUsage]: MessageUsage[K] | null }>;
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

/** Every event of a Messages stream, as the `data` of its SSE event. Unknown types are tolerated and ignored. */
export type MessageStreamEvent =
  | MessageStartEvent
  | ContentBlockStartEvent
  | ContentBlockDeltaEvent
  | ContentBlockStopEvent
  | MessageDeltaEvent
  | MessageStopEvent
  | PingEvent
  | ErrorStreamEvent;

/** True for a client tool_use block. */
export function isToolUseBlock(block: ContentBlock): block is ToolUseBlock {
  return block.type === 'tool_use';
}

/** True for a text block. */
export function isTextBlock(block: ContentBlock): block is TextBlock {
  return block.type === 'text';
}

/** True for a thinking block. */
export function isThinkingBlock(block: ContentBlock): block is ThinkingBlock {
  return block.type === 'thinking';
}

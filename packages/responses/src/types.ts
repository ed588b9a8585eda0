/**
 * The OpenAI Responses API shapes: the request, the response object, its output items and the streaming events.
 * Of what the server sends only the fields ai4ts relies on are spelled out; everything else passes through
 * untouched (every received object keeps an index signature), so a newer API field is never lost. The request
 * lists the documented fields; others go in the request options' `extraBody`.
 */
import type { JsonSchema, SdkFields } from '@ai4ts/core';

/** A response's lifecycle status as the API reports it. */
export type ResponseStatus = 'completed' | 'failed' | 'in_progress' | 'cancelled' | 'queued' | 'incomplete';

/** Token usage as the Responses API reports it (see `toChatUsage` for the chat shape). */
export interface ResponseUsage {
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  input_tokens_details?: { cached_tokens?: number; [key: string]: unknown };
  output_tokens_details?: { reasoning_tokens?: number; [key: string]: unknown };
  [key: string]: unknown;
}

/** A citation or other annotation attached to a span of output text. */
export interface Annotation {
  type: string;
  [key: string]: unknown;
}

/** Answer text inside a message. */
export interface OutputTextPart {
  type: 'output_text';
  text: string;
  annotations: Annotation[];
  [key: string]: unknown;
}

/** The model declined: a refusal is a content part of its own, beside any text. */
export interface RefusalPart {
  type: 'refusal';
  refusal: string;
  [key: string]: unknown;
}

/** A content part of an assistant message. */
export type MessageContentPart = OutputTextPart | RefusalPart;

/** An assistant message. */
export interface OutputMessage {
  type: 'message';
  id: string;
  role: 'assistant';
  status?: string;
  content: MessageContentPart[];
  [key: string]: unknown;
}

/** A call of one of the request's function tools. `arguments` is the JSON argument string exactly as streamed. */
export interface FunctionCallItem {
  type: 'function_call';
  id?: string;
  call_id: string;
  name: string;
  arguments: string;
  status?: string;
  [key: string]: unknown;
}

/** A call of a custom (free-form text input) tool. */
export interface CustomToolCallItem {
  type: 'custom_tool_call';
  id?: string;
  call_id: string;
  name: string;
  input: string;
  [key: string]: unknown;
}

/** One part of a reasoning summary. */
export interface ReasoningSummaryPart {
  type: 'summary_text';
  text: string;
  [key: string]: unknown;
}

/** Raw reasoning text (models that expose it). */
export interface ReasoningTextPart {
  type: 'reasoning_text';
  text: string;
  [key: string]: unknown;
}

/** The model's reasoning: a summary in parts, and for some models the raw text. */
export interface ReasoningItem {
  type: 'reasoning';
  id: string;
  summary: ReasoningSummaryPart[];
  content?: ReasoningTextPart[];
  encrypted_content?: string | null;
  status?: string;
  [key: string]: unknown;
}

/** Item types of tools the API runs itself; their items are kept as they come, with their progress status. */
export type BuiltInToolCallType =
  | 'web_search_call'
  | 'file_search_call'
  | 'code_interpreter_call'
  | 'image_generation_call'
  | 'mcp_call'
  | 'mcp_list_tools'
  | 'mcp_approval_request'
  | 'computer_call'
  | 'local_shell_call'
  | 'shell_call'
  | 'apply_patch_call';

/** A built-in tool call (web search, file search, code interpreter, image generation, MCP, ...), kept generic. */
export interface BuiltInToolCallItem {
  type: BuiltInToolCallType;
  id: string;
  status?: string;
  [key: string]: unknown;
}

/** One item of a response's `output`. */
export type OutputItem = OutputMessage | FunctionCallItem | CustomToolCallItem | ReasoningItem | BuiltInToolCallItem;

/** The error of a failed response. */
export interface ResponseErrorInfo {
  code: string;
  message: string;
  [key: string]: unknown;
}

/** A response object as the server sends it (in lifecycle events, or from `GET /responses/{id}`). */
export interface ResponseSnapshot {
  id: string;
  object: 'response';
  created_at?: number;
  model: string;
  status: ResponseStatus;
  output: OutputItem[];
  usage?: ResponseUsage | null;
  error?: ResponseErrorInfo | null;
  incomplete_details?: { reason?: string; [key: string]: unknown } | null;
  previous_response_id?: string | null;
  [key: string]: unknown;
}

/**
 * A response object as ai4ts returns it: the server's, plus `output_text` (as openai-node adds it): all
 * `output_text` parts of all messages, in order.
 */
export interface ResponseObject extends ResponseSnapshot {
  output_text: string;
}

// ---- the request -------------------------------------------------------------------------------------------------

/** Input content of a message: text, an image, a file or audio. */
export type ResponseInputContent =
  | { type: 'input_text'; text: string }
  | { type: 'input_image'; detail?: 'low' | 'high' | 'auto'; image_url?: string | null; file_id?: string | null }
  | { type: 'input_file'; file_data?: string; file_id?: string | null; file_url?: string; filename?: string }
  | { type: 'input_audio'; input_audio: { data: string; format: 'mp3' | 'wav' } };

/** A message of the conversation; an assistant message sent back may hold output parts. */
export interface ResponseInputMessage {
  type?: 'message';
  role: 'user' | 'assistant' | 'system' | 'developer';
  content: string | Array<ResponseInputContent | MessageContentPart>;
  id?: string;
  status?: 'in_progress' | 'completed' | 'incomplete';
}

/** The result of a `function_call`, answering its `call_id`. */
export interface FunctionCallOutputItem {
  type: 'function_call_output';
  call_id: string;
  output: string | ResponseInputContent[];
  id?: string | null;
  status?: 'in_progress' | 'completed' | 'incomplete' | null;
}

/** The result of a `custom_tool_call`, answering its `call_id`. */
export interface CustomToolCallOutputItem {
  type: 'custom_tool_call_output';
  call_id: string;
  output: string | ResponseInputContent[];
  id?: string;
}

/** The answer to an `mcp_approval_request`. */
export interface McpApprovalResponseItem {
  type: 'mcp_approval_response';
  approval_request_id: string;
  approve: boolean;
  reason?: string | null;
  id?: string | null;
}

/** An item of a stored response or conversation, by id. */
export interface ItemReference {
  type: 'item_reference';
  id: string;
}

/**
 * The result of a tool the application runs for a built-in tool call (computer use, shell, apply_patch), kept
 * generic: its fields follow the call's type.
 */
export interface BuiltInToolOutputItem {
  type: 'computer_call_output' | 'local_shell_call_output' | 'shell_call_output' | 'apply_patch_call_output';
  [key: string]: unknown;
}

/**
 * One Responses input item: a message, a tool's output, a reference, or an output item sent back as it came (the
 * loop sends a response's whole `output` back this way).
 */
export type ResponseInputItem =
  | ResponseInputMessage
  | OutputItem
  | FunctionCallOutputItem
  | CustomToolCallOutputItem
  | McpApprovalResponseItem
  | BuiltInToolOutputItem
  | ItemReference;

/** A function tool in the Responses API's wire form (the openai SDK's `FunctionTool`). */
export interface FunctionTool {
  type: 'function';
  name: string;
  description?: string;
  parameters: JsonSchema;
  strict: boolean;
}

/** @deprecated Renamed {@link FunctionTool}, the openai SDK's name; this alias goes in the next release. */
export type ResponsesTool = FunctionTool;

/** A tool as the wire takes it: a function tool (see `toResponsesTool`) or a built-in one (`web_search`, ...). */
export type ResponseTool = FunctionTool | { type: string; [key: string]: unknown };

/** Which tool the model may or must call. */
export type ResponseToolChoice =
  | 'none'
  | 'auto'
  | 'required'
  | { type: 'function'; name: string }
  | { type: 'custom'; name: string }
  | { type: 'mcp'; server_label: string; name?: string | null }
  | { type: 'allowed_tools'; mode: 'auto' | 'required'; tools: Array<Record<string, unknown>> }
  | {
      type:
        | 'file_search'
        | 'web_search_preview'
        | 'web_search_preview_2025_03_11'
        | 'computer_use_preview'
        | 'image_generation'
        | 'code_interpreter'
        | 'apply_patch'
        | 'shell';
    };

/** The format of the text output: plain, any JSON object, or JSON matching a schema (structured outputs). */
export type ResponseTextFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | {
      type: 'json_schema';
      name: string;
      schema: Record<string, unknown>;
      description?: string;
      strict?: boolean | null;
    };

/** What to add to the response that it leaves out by default. */
export type ResponseIncludable =
  | 'file_search_call.results'
  | 'web_search_call.results'
  | 'web_search_call.action.sources'
  | 'message.input_image.image_url'
  | 'computer_call_output.output.image_url'
  | 'code_interpreter_call.outputs'
  | 'reasoning.encrypted_content'
  | 'message.output_text.logprobs';

/**
 * A `POST /responses` body, the API's documented fields. A misspelled or unknown field is a type error; a field
 * this type does not know goes in the request options' `extraBody`. `tools` holds wire tools only (a `defineTool`
 * tool belongs to the tool loop's request).
 */
export interface ResponseCreateParams extends SdkFields {
  model: string;
  input?: string | ResponseInputItem[];
  instructions?: string | null;
  tools?: ResponseTool[];
  tool_choice?: ResponseToolChoice;
  parallel_tool_calls?: boolean | null;
  max_tool_calls?: number | null;
  previous_response_id?: string | null;
  conversation?: string | { id: string } | null;
  store?: boolean | null;
  /** Runs the response in the background; its stream can be resumed with `ResponsesService.resume`. */
  background?: boolean | null;
  max_output_tokens?: number | null;
  reasoning?: {
    effort?: 'none' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh' | 'max' | null;
    summary?: 'auto' | 'concise' | 'detailed' | null;
  } | null;
  text?: { format?: ResponseTextFormat; verbosity?: 'low' | 'medium' | 'high' | null };
  include?: ResponseIncludable[] | null;
  metadata?: Record<string, string> | null;
  temperature?: number | null;
  top_p?: number | null;
  top_logprobs?: number | null;
  truncation?: 'auto' | 'disabled' | null;
  service_tier?: 'auto' | 'default' | 'flex' | 'scale' | 'priority' | null;
  /** A stored prompt template, with values for its variables. */
  prompt?: { id: string; variables?: Record<string, unknown> | null; version?: string | null } | null;
  prompt_cache_key?: string | null;
  prompt_cache_retention?: 'in_memory' | '24h' | null;
  /** Server-side compaction of a long context. */
  context_management?: Array<{ type: string; compact_threshold?: number | null }> | null;
  safety_identifier?: string | null;
  /** @deprecated Use `safety_identifier` and `prompt_cache_key`. */
  user?: string;
  stream?: boolean | null;
  stream_options?: { include_obfuscation?: boolean } | null;
}

/**
 * Every field of {@link ResponseCreateParams}, for the `strictRequests` check: typed by the request type's keys, so a field added
 * to the type and not here (or the reverse) fails to compile.
 */
const RESPONSES_REQUEST_FIELDS_RECORD: Record<keyof ResponseCreateParams, true> = {
  model: true, input: true, instructions: true, tools: true, tool_choice: true, parallel_tool_calls: true,
  max_tool_calls: true, previous_response_id: true, conversation: true, store: true, background: true,
  max_output_tokens: true, reasoning: true, text: true, include: true, metadata: true, temperature: true, top_p:
  true, top_logprobs: true, truncation: true, service_tier: true, prompt: true, prompt_cache_key: true,
  prompt_cache_retention: true, context_management: true, safety_identifier: true, user: true, stream: true,
  stream_options: true, telemetry: true,
};

/** The names of {@link ResponseCreateParams}'s fields (`telemetry` included). */
export const RESPONSES_REQUEST_FIELDS: ReadonlySet<string> = new Set(Object.keys(RESPONSES_REQUEST_FIELDS_RECORD));

/** Fields every streaming event carries. */
interface EventBase {
  sequence_number?: number;
}

/** Fields of events about one output item. */
interface ItemEventBase extends EventBase {
  output_index: number;
  item_id?: string;
}

/** A lifecycle event carrying the whole response. The last three are terminal. */
export interface ResponseLifecycleEvent extends EventBase {
  type:
    | 'response.created'
    | 'response.in_progress'
    | 'response.queued'
    | 'response.completed'
    | 'response.failed'
    | 'response.incomplete';
  /** The response as the server sent it (without the `output_text` ai4ts adds). */
  response: ResponseSnapshot;
}

export interface OutputItemEvent extends EventBase {
  type: 'response.output_item.added' | 'response.output_item.done';
  output_index: number;
  item: OutputItem;
}

export interface ContentPartEvent extends ItemEventBase {
  type: 'response.content_part.added' | 'response.content_part.done';
  content_index: number;
  part: MessageContentPart | ReasoningTextPart;
}

export interface OutputTextDeltaEvent extends ItemEventBase {
  type: 'response.output_text.delta';
  content_index: number;
  delta: string;
}

export interface OutputTextDoneEvent extends ItemEventBase {
  type: 'response.output_text.done';
  content_index: number;
  text: string;
}

export interface OutputTextAnnotationAddedEvent extends ItemEventBase {
  type: 'response.output_text.annotation.added';
  content_index: number;
  annotation_index: number;
  annotation: Annotation;
}

export interface RefusalDeltaEvent extends ItemEventBase {
  type: 'response.refusal.delta';
  content_index: number;
  delta: string;
}

export interface RefusalDoneEvent extends ItemEventBase {
  type: 'response.refusal.done';
  content_index: number;
  refusal: string;
}

export interface ReasoningSummaryPartEvent extends ItemEventBase {
  type: 'response.reasoning_summary_part.added' | 'response.reasoning_summary_part.done';
  summary_index: number;
  part: ReasoningSummaryPart;
}

export interface ReasoningSummaryTextDeltaEvent extends ItemEventBase {
  type: 'response.reasoning_summary_text.delta';
  summary_index: number;
  delta: string;
}

export interface ReasoningSummaryTextDoneEvent extends ItemEventBase {
  type: 'response.reasoning_summary_text.done';
  summary_index: number;
  text: string;
}

export interface ReasoningTextDeltaEvent extends ItemEventBase {
  type: 'response.reasoning_text.delta';
  content_index: number;
  delta: string;
}

export interface ReasoningTextDoneEvent extends ItemEventBase {
  type: 'response.reasoning_text.done';
  content_index: number;
  text: string;
}

export interface FunctionCallArgumentsDeltaEvent extends ItemEventBase {
  type: 'response.function_call_arguments.delta';
  delta: string;
}

export interface FunctionCallArgumentsDoneEvent extends ItemEventBase {
  type: 'response.function_call_arguments.done';
  arguments: string;
  name?: string;
}

export interface CustomToolCallInputDeltaEvent extends ItemEventBase {
  type: 'response.custom_tool_call_input.delta';
  delta: string;
}

export interface CustomToolCallInputDoneEvent extends ItemEventBase {
  type: 'response.custom_tool_call_input.done';
  input: string;
}

/**
 * Progress of a built-in tool call: `response.web_search_call.searching`, `response.mcp_call.completed`,
 * `response.code_interpreter_call_code.delta`, `response.mcp_call_arguments.delta`, ...
 */
export interface BuiltInToolCallEvent extends ItemEventBase {
  type:
    | `response.${'web_search_call' | 'file_search_call' | 'code_interpreter_call' | 'image_generation_call' | 'mcp_call' | 'mcp_list_tools'}.${string}`
    | `response.${'code_interpreter_call_code' | 'mcp_call_arguments'}.${'delta' | 'done'}`;
  [key: string]: unknown;
}

/** An error reported inside the stream: flat `{code, message}` or nested `{error: {code, message}}`. */
export interface ResponseErrorEvent extends EventBase {
  type: 'error';
  code?: string | null;
  message?: string;
  param?: string | null;
  error?: { code?: string | null; message?: string; type?: string; param?: string | null };
}

/** Every documented streaming event ai4ts understands. */
export type ResponseStreamEvent =
  | ResponseLifecycleEvent
  | OutputItemEvent
  | ContentPartEvent
  | OutputTextDeltaEvent
  | OutputTextDoneEvent
  | OutputTextAnnotationAddedEvent
  | RefusalDeltaEvent
  | RefusalDoneEvent
  | ReasoningSummaryPartEvent
  | ReasoningSummaryTextDeltaEvent
  | ReasoningSummaryTextDoneEvent
  | ReasoningTextDeltaEvent
  | ReasoningTextDoneEvent
  | FunctionCallArgumentsDeltaEvent
  | FunctionCallArgumentsDoneEvent
  | CustomToolCallInputDeltaEvent
  | CustomToolCallInputDoneEvent
  | BuiltInToolCallEvent
  | ResponseErrorEvent;

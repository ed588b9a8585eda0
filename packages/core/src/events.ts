/**
 * The normalized stream events. Every protocol listener (Chat Completions, Responses, Messages) and every bridge
 * dialect reader emits these same events, so the tool loop, the bridge writers and user code handle one model.
 * A listener may emit protocol-specific events beside them (for example `chunk` or the raw `event`).
 */
import { type Ai4tsError, isRecord } from './errors.js';
import { getOwn, setOwn } from './internal/own.js';

/** Token usage in OpenAI's chat shape, whatever the protocol reported. */
export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens?: number; [key: string]: unknown };
  completion_tokens_details?: { reasoning_tokens?: number; [key: string]: unknown };
  [key: string]: unknown;
}

/**
 * Why the model stopped, normalized to Chat Completions' vocabulary where a mapping exists
 * (`stop`, `length`, `tool_calls`, `content_filter`); other protocol values pass through unchanged.
 */
export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | (string & {});

/** A text delta of the answer. `choice` is the choice index (Chat Completions with n > 1), 0 otherwise. */
export interface ContentEvent {
  type: 'content';
  delta: string;
  /** All text of this choice so far. */
  snapshot: string;
  choice: number;
}

/** A delta of the model's reasoning (reasoning_content, thinking blocks, reasoning summaries, <think> text). */
export interface ReasoningEvent {
  type: 'reasoning';
  delta: string;
  snapshot: string;
  choice: number;
}

/** The first fragment of a tool call: its id and name are known. */
export interface ToolCallStartEvent {
  type: 'tool_call.start';
  /** Position of the call in the turn, counted from 0 in arrival order. */
  index: number;
  id: string;
  name: string;
  choice: number;
}

/** A fragment of a tool call's argument string. */
export interface ToolCallDeltaEvent {
  type: 'tool_call.delta';
  index: number;
  id: string;
  delta: string;
  choice: number;
  /**
   * The arguments parsed so far (a partial value, as `object` events carry): only in a tool loop whose request sets
   * `partialToolArguments: true`, and only on deltas that change it.
   */
  partialArguments?: unknown;
}

/** A tool call is complete: `arguments` is the whole argument string exactly as streamed (`"{}"` when none came). */
export interface ToolCallDoneEvent {
  type: 'tool_call.done';
  index: number;
  id: string;
  name: string;
  arguments: string;
  choice: number;
}

/** Usage became known (or grew). `raw` is the protocol's own usage object. */
export interface UsageEvent {
  type: 'usage';
  usage: Usage;
  raw: unknown;
}

/** The model finished a choice. */
export interface FinishEvent {
  type: 'finish';
  finishReason: FinishReason;
  choice: number;
}

/** The stream failed; `error.partial` holds what arrived. */
export interface ErrorEvent {
  type: 'error';
  error: Ai4tsError;
}

/** A tool ran (in the tool loop, or inside a daemon that runs its own tools). */
export interface ToolResultEvent {
  type: 'tool.result';
  id: string;
  name: string;
  /** What the tool returned, or the error text when `isError`. */
  output: unknown;
  isError: boolean;
  durationMs?: number;
}

/** A running tool reported progress (an MCP server's progress notification, or a tool's `ctx.progress`). */
export interface ToolProgressEvent {
  type: 'tool.progress';
  /** The id of the call the tool is answering. */
  id: string;
  name: string;
  progress: number;
  total?: number;
  message?: string;
}

/** Every normalized event. */
export type NormalizedEvent =
  | ContentEvent
  | ReasoningEvent
  | ToolCallStartEvent
  | ToolCallDeltaEvent
  | ToolCallDoneEvent
  | UsageEvent
  | FinishEvent
  | ToolResultEvent
  | ToolProgressEvent
  | ErrorEvent;

/** What a model stream yields: the normalized events but `error` (thrown instead) and the loop's `tool.*` events. */
export type StreamEvent = Exclude<NormalizedEvent, ErrorEvent | ToolResultEvent | ToolProgressEvent>;

/**
 * Every {@link StreamEvent} type, keyed: typed as a record over the whole union, so a new stream event left out of
 * it fails to compile instead of being dropped by stream handles, middleware and the gateway reader. Its key order
 * is the order a listener forwards them to a stream handle.
 */
export const STREAM_EVENT_TYPES = {
  content: true,
  reasoning: true,
  'tool_call.start': true,
  'tool_call.delta': true,
  'tool_call.done': true,
  usage: true,
  finish: true,
} as const satisfies Record<StreamEvent['type'], true>;

/** Whether `name` is the type of a {@link StreamEvent}. */
export function isStreamEventType(name: string): name is StreamEvent['type'] {
  return Object.hasOwn(STREAM_EVENT_TYPES, name);
}

/** The names of the {@link StreamEvent}s, in the order a listener forwards them to a stream handle. */
export const STREAM_EVENT_NAMES: readonly StreamEvent['type'][] = Object.keys(STREAM_EVENT_TYPES).filter(isStreamEventType);

/** A union of events as an emitter's handler map: one handler per `type`, given that event. */
export type HandlersOf<E extends { type: string }> = { [X in E as X['type']]: (event: X) => void };

/** The normalized events as an emitter's handler map: every protocol listener's events include these. */
export type NormalizedEvents = HandlersOf<NormalizedEvent>;

/** Adds two usages field by field (details included), for totals over tool-loop steps. */
export function addUsage(a: Usage | undefined, b: Usage | undefined): Usage | undefined {
  if (!a) return b && { ...b };
  if (!b) return { ...a };
  return sumNumbers(a, b) as Usage;
}

function sumNumbers(a: Record<string, unknown>, b: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...a };
  // Usage is the server's: own keys only, so a `__proto__` key stays a plain field.
  for (const [key, value] of Object.entries(b)) {
    const prev = getOwn(out, key);
    if (typeof value === 'number') setOwn(out, key, (typeof prev === 'number' ? prev : 0) + value);
    else if (isRecord(value)) setOwn(out, key, sumNumbers(isRecord(prev) ? prev : {}, value));
    else if (!Object.hasOwn(out, key)) setOwn(out, key, value);
  }
  return out;
}

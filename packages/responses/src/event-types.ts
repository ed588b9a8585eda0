/** The Responses streaming event types ai4ts understands: the documented ones, and the built-in tools' progress. */
import { isRecord } from '@ai4ts/core/internal';
import type { BuiltInToolCallEvent, ResponseStreamEvent } from './types.js';

/** Every documented event type but the built-in tools' progress (matched by {@link BUILT_IN_EVENT}). */
export const KNOWN_EVENT_TYPES: ReadonlySet<string> = new Set([
  'response.created',
  'response.in_progress',
  'response.queued',
  'response.completed',
  'response.failed',
  'response.incomplete',
  'response.output_item.added',
  'response.output_item.done',
  'response.content_part.added',
  'response.content_part.done',
  'response.output_text.delta',
  'response.output_text.done',
  'response.output_text.annotation.added',
  'response.refusal.delta',
  'response.refusal.done',
  'response.reasoning_summary_part.added',
  'response.reasoning_summary_part.done',
  'response.reasoning_summary_text.delta',
  'response.reasoning_summary_text.done',
  'response.reasoning_text.delta',
  'response.reasoning_text.done',
  'response.function_call_arguments.delta',
  'response.function_call_arguments.done',
  'response.custom_tool_call_input.delta',
  'response.custom_tool_call_input.done',
  'error',
] as const satisfies readonly Exclude<ResponseStreamEvent, BuiltInToolCallEvent>['type'][]);

/** `response.web_search_call.searching`, `response.mcp_call_arguments.delta`, ...: progress of built-in tools. */
export const BUILT_IN_EVENT =
  /^response\.(web_search_call|file_search_call|code_interpreter_call|image_generation_call|mcp_call|mcp_list_tools|code_interpreter_call_code|mcp_call_arguments)\.([a-z_]+)$/;

/**
 * Whether a value is an event of a type listed here. Only the `type` is checked: the fields are the server's
 * word, and each handler checks those it reads (a gateway may send anything).
 */
export function isKnownEvent(value: unknown): value is ResponseStreamEvent {
  if (!isRecord(value)) return false;
  const { type } = value;
  if (typeof type !== 'string') return false;
  // The token events first, by comparison: a set lookup hashes the type, a new string on every event.
  return (
    type === 'response.output_text.delta' ||
    type === 'response.function_call_arguments.delta' ||
    type === 'response.reasoning_summary_text.delta' ||
    type === 'response.reasoning_text.delta' ||
    KNOWN_EVENT_TYPES.has(type) ||
    BUILT_IN_EVENT.test(type)
  );
}

/**
 * A built-in tool event read: the item field its deltas build (`code` for the code interpreter's code, `arguments`
 * for an MCP call's), or none when the event's last word is the item's new status.
 */
export function builtInStep(type: string): { field: 'code' | 'arguments' | undefined; step: string } | undefined {
  const match = BUILT_IN_EVENT.exec(type);
  if (!match) return undefined;
  const [, kind, step = ''] = match;
  const field = kind === 'code_interpreter_call_code' ? 'code' : kind === 'mcp_call_arguments' ? 'arguments' : undefined;
  return { field, step };
}

/** The Responses streaming event types ai4ts understands: the documented ones, and the built-in tools' progress. */
import { isRecord } from '@ai4ts/core/internal';
import type { BuiltInToolCallEvent, ResponseStreamEvent } from './types.js';

/**
 * Every documented event type but the built-in tools' progress (matched by {@link BUILT_IN_EVENT}), keyed: typed as a
 * record over the event union, so a documented type added to the types but not here fails to compile.
 */
const DOCUMENTED_EVENT_TYPES = {
  'response.created': true,
  'response.in_progress': true,
  'response.queued': true,
  'response.completed': true,
  'response.failed': true,
  'response.incomplete': true,
  'response.output_item.added': true,
  'response.output_item.done': true,
  'response.content_part.added': true,
  'response.content_part.done': true,
  'response.output_text.delta': true,
  'response.output_text.done': true,
  'response.output_text.annotation.added': true,
  'response.refusal.delta': true,
  'response.refusal.done': true,
  'response.reasoning_summary_part.added': true,
  'response.reasoning_summary_part.done': true,
  'response.reasoning_summary_text.delta': true,
  'response.reasoning_summary_text.done': true,
  'response.reasoning_text.delta': true,
  'response.reasoning_text.done': true,
  'response.function_call_arguments.delta': true,
  'response.function_call_arguments.done': true,
  'response.custom_tool_call_input.delta': true,
  'response.custom_tool_call_input.done': true,
  'error': true,
} as const satisfies Record<Exclude<ResponseStreamEvent, BuiltInToolCallEvent>['type'], true>;

/** The {@link DOCUMENTED_EVENT_TYPES} as a set, for the lookup of each event's type. */
export const KNOWN_EVENT_TYPES: ReadonlySet<string> = new Set(Object.keys(DOCUMENTED_EVENT_TYPES));

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

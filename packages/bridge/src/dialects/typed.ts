import type { StreamSource } from '@ai4ts/core';
import { defineDialect } from '../dialect.js';
import type { ReadOptions } from '../dialect.js';
import type { BridgeEvent } from '../events.js';

/**
 * The typed-event dialect: one `data:` JSON per event with a `type` field and no `event:` line.
 *
 * | `type` | fields | bridge events |
 * | --- | --- | --- |
 * | `reasoning` | `content` | `reasoning` |
 * | `text` | `content` | `content` |
 * | `tool_start` | `id`, `name`, `arguments` (a JSON string) | `tool_call.start`, `tool_call.delta`, `tool_call.done` |
 * | `tool_result` | `id`, `name`, `output`, `success`, `duration_ms` | `tool.result` |
 * | `tokens` | `prompt`, `completion`, `total` (one inference round) | `usage` (the sum so far) |
 * | `error` | any error body | throws ApiError |
 * | `done` | `tokens`, `tool_calls`, `session_id` | `finish`, `done` |
 *
 * The daemon always streams. Its request is `{ message, session_id? }`.
 */
export const typedEventDialect = defineDialect({
  name: 'typed',
  typeField: 'type',
  events: {
    reasoning: { kind: 'reasoning', text: 'content' },
    text: { kind: 'text', text: 'content' },
    tool_start: { kind: 'tool_call', id: 'id', name: 'name', arguments: 'arguments' },
    tool_result: {
      kind: 'tool_result',
      id: 'id',
      name: 'name',
      output: 'output',
      success: 'success',
      durationMs: 'duration_ms',
    },
    tokens: { kind: 'usage' },
    error: { kind: 'error' },
    done: { kind: 'done', sessionId: 'session_id', usage: 'tokens' },
  },
  request: ({ message, sessionId }) => (sessionId === undefined ? { message } : { message, session_id: sessionId }),
});

/** Reads a typed-event daemon stream (see {@link typedEventDialect}) into bridge events. */
export function readTypedEventDialect(source: StreamSource, options?: ReadOptions): AsyncIterable<BridgeEvent> {
  return typedEventDialect.read(source, options);
}

import type { StreamSource } from '@ai4ts/core';
import { defineDialect } from '../dialect.js';
import type { ReadOptions } from '../dialect.js';
import type { BridgeEvent } from '../events.js';

/**
 * The named-event dialect: the SSE `event:` name is the type, the data is JSON.
 *
 * | `event:` | data | bridge events |
 * | --- | --- | --- |
 * | `start` | `{ "message_id" }` | `start` |
 * | `message` | `{ "content" }` (a token or a batch) | `content` |
 * | `done` | `{ "message_id" }` (null when nothing was produced) | `finish`, `done` |
 * | `error` | `{ "error", "type" }` | throws ApiError (code = `type`) |
 *
 * It reports no usage. Its request is `{ session_id, message, attachments: null }`; the session id is required.
 */
export const namedEventDialect = defineDialect({
  name: 'named',
  events: {
    start: { kind: 'start', messageId: 'message_id' },
    message: { kind: 'text', text: 'content' },
    done: { kind: 'done', messageId: 'message_id' },
    error: { kind: 'error' },
  },
  session: 'required',
  request: ({ message, sessionId }) => ({ session_id: sessionId, message, attachments: null }),
});

/** Reads a named-event chat server's stream (see {@link namedEventDialect}) into bridge events. */
export function readNamedEventDialect(source: StreamSource, options?: ReadOptions): AsyncIterable<BridgeEvent> {
  return namedEventDialect.read(source, options);
}

/** The handle of one streamed Messages request. */
import { ListenerStream } from '@ai4ts/core';
import { isRecord } from '@ai4ts/core/internal';
import type { MessagesStreamEvents, MessagesStreamListener } from './listener.js';
import type { Message } from './types.js';

/** Whether a value is a Message (a cheap shape check): narrows a middleware's `ModelResult`. */
export function isMessage(value: unknown): value is Message {
  return isRecord(value) && Array.isArray(value.content);
}

/**
 * A streaming Messages request in flight: core's {@link ListenerStream}, with the rules of every stream handle. It
 * starts when created and buffers its events from the first; every `for await` yields them all (content,
 * reasoning, tool calls, usage, finish); leaving a loop early aborts a running request; `final()` resolves to the
 * message or rejects with the typed error (`partial`: the message so far, none when the stream never started).
 * The raw `event`, `message` and `error` come through `on()`; `listener` holds the state at any moment (message,
 * text, thinking, toolUses, usage, status, events).
 */
export class MessagesStream extends ListenerStream<MessagesStreamListener, Message, MessagesStreamEvents> {}

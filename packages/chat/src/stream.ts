/** ChatStream: the handle of one streaming Chat Completions request. */
import { ListenerStream } from '@ai4ts/core';
import { isRecord } from '@ai4ts/core/internal';
import type { ChatStreamEvents, ChatStreamListener } from './listener.js';
import type { ChatCompletion } from './types.js';

/**
 * A streaming chat request in flight: core's {@link ListenerStream}, with the rules of every stream handle. It
 * starts when created and buffers its events from the first; every `for await` yields them all (content,
 * reasoning, tool calls, usage, finish); leaving a loop early aborts a running request; `final()` resolves to the
 * completion or rejects with the typed error (`partial`: the completion so far, none when the request failed
 * before the first event). Chat's own `refusal` and `chunk` events, and `error`, come through `on()`;
 * `listener` holds the merged state at any moment.
 *
 * ```ts
 * const stream = chat.stream({ model, messages });
 * for await (const event of stream) if (event.type === 'content') process.stdout.write(event.delta);
 * const completion = await stream.final();
 * ```
 */
export class ChatStream extends ListenerStream<ChatStreamListener, ChatCompletion, ChatStreamEvents> {}

/** Whether a value is a ChatCompletion (a cheap shape check): narrows a middleware's `ModelResult`. */
export function isChatCompletion(value: unknown): value is ChatCompletion {
  return isRecord(value) && Array.isArray(value.choices);
}

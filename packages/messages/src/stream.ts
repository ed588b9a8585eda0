/**
 * One streamed Messages request: the {@link MessageStream} handle and {@link streamMessage}, the single streamed
 * step the service and the tool loop both use.
 */
import { ListenerStream, type Transport } from '@ai4ts/core';
import { callOptionsOf, isRecord, type ModelProtocol } from '@ai4ts/core/internal';
import { type MessageStreamEvents, MessageStreamListener } from './listener.js';
import { MESSAGES_PATH, type MessageRequestOptions, toWireRequest } from './request.js';
import { toChatUsage, toFinishReason } from './convert.js';
import type { Message, MessageCreateParams } from './types.js';

/** Whether a value is a Message (a cheap shape check): narrows a middleware's `ModelResult`. */
export function isMessage(value: unknown): value is Message {
  return isRecord(value) && Array.isArray(value.content);
}

/** How a span, a log line and the cost read a message. */
export const MESSAGES_PROTOCOL: ModelProtocol<Message> = {
  name: 'messages',
  summarize: (message) => ({
    id: message.id,
    model: message.model,
    finishReasons: message.stop_reason ? [toFinishReason(message.stop_reason)] : [],
    usage: toChatUsage(message.usage),
    output: [{ role: message.role, content: message.content }],
  }),
  isResult: isMessage,
};

/**
 * A streaming Messages request in flight: core's {@link ListenerStream}, with the rules of every stream handle. It
 * starts when created and buffers its events from the first; every `for await` yields them all (content,
 * reasoning, tool calls, usage, finish); leaving a loop early aborts a running request; `final()` resolves to the
 * message or rejects with the typed error (`partial`: the message so far, none when the stream never started).
 * The raw `event`, `message` and `error` come through `on()`; `listener` holds the state at any moment (message,
 * text, thinking, toolUses, usage, status, events).
 */
export class MessageStream extends ListenerStream<MessageStreamListener, Message, MessageStreamEvents> {}

/**
 * Sends one streaming request and returns its {@link MessageStream}, already running. The body is
 * `toWireRequest`'s plus `stream: true`.
 *
 * @throws Ai4tsError synchronously for an invalid request. Every later failure rejects `final()` (see
 *   {@link MessageStream}); an HTTP error is the Transport's typed ApiError, without a `partial`.
 */
export function streamMessage(
  transport: Transport,
  request: MessageCreateParams,
  options: MessageRequestOptions = {},
): MessageStream {
  return streamWireBody(transport, toWireRequest(request), callOptionsOf(request, options));
}

/** {@link streamMessage} for a body already built by `toWireRequest` (the tool loop's). Not public. */
export function streamWireBody(
  transport: Transport,
  wire: Record<string, unknown>,
  options: MessageRequestOptions,
): MessageStream {
  const body = { ...wire, stream: true };
  const { signal, ...requestOptions } = options;
  const call = transport.call(MESSAGES_PROTOCOL, body, requestOptions);
  return new MessageStream(
    new MessageStreamListener(),
    (attempt) => transport.stream(MESSAGES_PATH, { body: call.body, options: { ...requestOptions, ...attempt }, watch: call }),
    signal,
    transport.streamRetry(requestOptions),
    call,
  );
}

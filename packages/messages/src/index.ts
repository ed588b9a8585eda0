/**
 * @ai4ts/messages: the Anthropic Messages protocol. `MessageStreamListener` folds stream events into a message and
 * emits ai4ts's normalized events, `collectMessage` reads an SSE stream to a message, `MessagesService` sends plain
 * requests over a Transport, `runMessagesToolLoop` / `streamMessagesToolLoop` run the tool loop, and
 * `toChatCompletion` gives the chat-shaped view.
 */
export { type ChatCompletionView, toChatCompletion } from './convert.js';
export { type CollectMessageOptions, collectMessage } from './collect.js';
export { type MessageStreamEvents, MessageStreamListener, type MessageStreamListenerOptions } from './listener.js';
export {
  type MessageLoopRequest,
  type MessagesToolLoopEvent,
  type MessagesToolLoopResult,
  type MessagesToolLoopStream,
  messagesToolLoopAdapter,
  runMessagesToolLoop,
  streamMessagesToolLoop,
} from './loop.js';
export { MESSAGES_PATH, type MessageRequestOptions } from './request.js';
export { MessagesService } from './service.js';
export { MESSAGES_PROTOCOL, MessageStream, isMessage, streamMessage } from './stream.js';
export { toAssistantTurn, toToolCalls, toToolResultTurn } from './turns.js';
export * from './types.js';

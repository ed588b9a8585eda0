/**
 * @ai4ts/messages: the Anthropic Messages protocol. A stream listener that folds events into a message and emits
 * ai4ts's normalized events, a collector, a service over the shared Transport, and a chat-shaped view.
 */
export { type ChatCompletionView, toChatCompletion, toChatUsage, toFinishReason } from './chat.js';
export { type CollectMessageOptions, collectMessage } from './collect.js';
export { type MessagesListenerEvents, type MessagesListenerStatus, MessagesStreamListener } from './listener.js';
export {
  type MessagesToolLoopEvent,
  type MessagesToolLoopOptions,
  type MessagesToolLoopRequest,
  type MessagesToolLoopResult,
  type MessagesToolLoopStream,
  messagesToolLoopAdapter,
  runMessagesToolLoop,
  streamMessagesToolLoop,
} from './loop.js';
export {
  MESSAGES_PATH,
  MessageStream,
  type MessageStreamItem,
  MessagesService,
  type StreamMessageOptions,
  streamMessage,
} from './service.js';
export { toAssistantTurn, toToolCalls, toToolResultTurn } from './turns.js';
export * from './types.js';

/**
 * @ai4ts/messages: the Anthropic Messages protocol. `MessagesStreamListener` folds stream events into a message and
 * emits ai4ts's normalized events, `collectMessage` reads an SSE stream to a message, `MessagesService` sends plain
 * requests over a Transport, `runMessagesToolLoop` / `streamMessagesToolLoop` run the tool loop, and
 * `toChatCompletion` gives the chat-shaped view.
 */
export { type ChatCompletionView, toChatCompletion } from './convert.js';
export { type CollectMessageOptions, collectMessage } from './collect.js';
export { type MessagesStreamEvents, MessagesStreamListener, type MessagesStreamListenerOptions } from './listener.js';
export type {
  MessagesLoopRequest,
  MessagesLoopState,
  MessagesToolLoopEvent,
  MessagesToolLoopResult,
  MessagesToolLoopStream,
} from './loop.js';
export { MESSAGES_PROTOCOL, type MessagesProtocol } from './protocol.js';
export { MESSAGES_PATH, type MessagesRequestOptions, toAnthropicTool } from './request.js';
export {
  MessagesService,
  messagesToolLoopAdapter,
  resumeMessagesToolLoop,
  runMessagesToolLoop,
  streamMessage,
  streamResumeMessagesToolLoop,
  streamMessagesToolLoop,
} from './service.js';
export { isMessage, MessagesStream } from './stream.js';
export { toAssistantTurn, toToolCalls, toToolResultTurn } from './turns.js';
export * from './types.js';
export * from './deprecated.js';

/**
 * @ai4ts/chat: OpenAI Chat Completions, as every OpenAI-compatible provider streams it.
 * `ChatStreamListener` merges chunks, `collectChatCompletion` reads an SSE stream to a completion, `CHAT_PROTOCOL`
 * defines the protocol once, `ChatService` sends it over a Transport (`create`, `stream`, `runLoop`, `streamLoop`).
 */
export { type CollectChatCompletionOptions, collectChatCompletion } from './collect.js';
export {
  type ChatChoiceState,
  type ChatStreamEvents,
  ChatStreamListener,
  type ChatStreamListenerOptions,
  type ChunkEvent,
  type RefusalEvent,
} from './listener.js';
export type {
  ChatLoopRequest,
  ChatLoopState,
  ChatToolLoopEvent,
  ChatToolLoopResult,
  ChatToolLoopStream,
} from './loop.js';
export { CHAT_PROTOCOL, type ChatProtocol } from './protocol.js';
export { CHAT_COMPLETIONS_PATH, type ChatRequestOptions, toChatTool } from './request.js';
export {
  ChatService,
  chatToolLoopAdapter,
  resumeChatToolLoop,
  runChatToolLoop,
  streamChatCompletion,
  streamResumeChatToolLoop,
  streamChatToolLoop,
} from './service.js';
export { ChatStream, isChatCompletion } from './stream.js';
export * from './types.js';
export * from './deprecated.js';

/**
 * @ai4ts/chat: OpenAI Chat Completions, as every OpenAI-compatible provider streams it.
 * `ChatStreamListener` merges chunks, `collectChatCompletion` reads an SSE stream to a completion, `ChatService`
 * sends plain requests over a Transport, `runChatToolLoop` / `streamChatToolLoop` run the tool loop.
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
export {
  type ChatLoopRequest,
  type ChatToolLoopEvent,
  type ChatToolLoopResult,
  type ChatToolLoopStream,
  chatToolLoopAdapter,
  runChatToolLoop,
  streamChatToolLoop,
} from './loop.js';
export { CHAT_COMPLETIONS_PATH, type ChatRequestOptions } from './request.js';
export { ChatService } from './service.js';
export { CHAT_PROTOCOL, ChatStream, isChatCompletion, streamChatCompletion } from './stream.js';
export * from './types.js';

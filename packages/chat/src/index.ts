/**
 * @ai4ts/chat: OpenAI Chat Completions, as every OpenAI-compatible provider streams it.
 * `ChatStreamListener` merges chunks, `collectChatCompletion` reads SSE bytes to a completion, `ChatService`
 * sends requests over a Transport.
 */
export { type ChatStreamSource, type CollectChatCompletionOptions, collectChatCompletion, readChatEvents } from './collect.js';
export {
  CHAT_STREAM_EVENT_NAMES,
  type ChatChoiceState,
  type ChatStreamEvent,
  type ChatStreamEvents,
  ChatStreamListener,
  type ChatStreamListenerOptions,
  type ChatStreamStatus,
  type ChunkEvent,
  type RefusalEvent,
} from './listener.js';
export {
  CHAT_COMPLETIONS_PATH,
  type ChatRequestOptions,
  ChatService,
  SDK_REQUEST_FIELDS,
  streamChatCompletion,
  toWireRequest,
} from './service.js';
export { ChatStream, type ChatStreamInit, type ChatStreamRunner } from './stream.js';
export * from './types.js';
export {
  type ChatToolLoopEvent,
  type ChatToolLoopOptions,
  type ChatToolLoopResult,
  type ChatToolLoopStream,
  chatToolLoopAdapter,
  runChatToolLoop,
  streamChatToolLoop,
} from './loop.js';

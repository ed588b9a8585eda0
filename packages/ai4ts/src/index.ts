/**
 * ai4ts: a streaming-first TypeScript SDK for LLM APIs with an automatic tool loop. `new Ai4ts(options)` is the
 * front door; the protocol packages' functions, errors, events and listeners are re-exported here.
 * Responses and Messages names that would clash with Chat's are under the `Responses` and `Messages` namespaces.
 */
export {
  Ai4ts,
  type Ai4tsOptions,
  ChatClient,
  type ChatLoopFields,
  type ChatLoopRequest,
  createClient,
  isLoopRequest,
} from './client.js';
export * from '@ai4ts/core';
export * from '@ai4ts/sse';
export * from '@ai4ts/chat';
export * as Responses from '@ai4ts/responses';
export * as Messages from '@ai4ts/messages';
export {
  collectResponse,
  ResponseStream,
  ResponseStreamListener,
  ResponsesService,
  streamResponse,
} from '@ai4ts/responses';
export { collectMessage, MessageStream, MessagesService, MessagesStreamListener, streamMessage } from '@ai4ts/messages';

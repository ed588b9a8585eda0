/**
 * ai4ts: a streaming-first TypeScript SDK for LLM APIs with an automatic tool loop. `new Ai4ts(options)` is the
 * front door; the protocol packages' functions, errors, events and listeners are re-exported here.
 */
export {
  Ai4ts,
  type Ai4tsOptions,
  type ChatClient,
  type ChatMiddlewareContext,
  type MessagesMiddlewareContext,
  type Middleware,
  type MiddlewareContext,
  type ModelResult,
  type ResponsesMiddlewareContext,
  createClient,
  type MessagesClient,
  type PlainRequest,
  ProtocolClient,
  type ProtocolCalls,
  type ProtocolDefinition,
  ResponsesClient,
} from './client.js';
export * from '@ai4ts/core';
export * from '@ai4ts/sse';
export * from '@ai4ts/chat';
export * from '@ai4ts/responses';
export * from '@ai4ts/messages';

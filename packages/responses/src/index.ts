/**
 * @ai4ts/responses: the OpenAI Responses API. A stream state machine that rebuilds the response from its events
 * ({@link ResponseStreamListener}), a collector from SSE bytes ({@link collectResponse}), record and replay of
 * traces, and a service over the shared Transport ({@link ResponsesService}).
 */
export { type CollectResponseOptions, collectResponse, consumeResponseEvents, type ResponseSource } from './collect.js';
export { toChatUsage, toFinishReason } from './convert.js';
export {
  type ResponseListenerEvents,
  ResponseStreamListener,
  type ResponseStreamStatus,
  type ResponseStreamWarning,
} from './listener.js';
export { eventsFromJsonl, eventsToJsonl, replayEvents } from './replay.js';
export {
  type ResponseCreateRequest,
  ResponsesService,
  type ResumeOptions,
  type StreamResponseOptions,
  streamResponse,
} from './service.js';
export { ResponseStream, type ResponseStreamItem } from './stream.js';
export type * from './types.js';
export {
  type ResponseInputItem,
  responsesToolLoopAdapter,
  runResponsesToolLoop,
  streamResponsesToolLoop,
} from './loop.js';

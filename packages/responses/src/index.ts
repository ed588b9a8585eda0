/**
 * @ai4ts/responses: the OpenAI Responses API. A stream state machine that rebuilds the response from its events
 * ({@link ResponseStreamListener}), a collector from any SSE source ({@link collectResponse}), the stream handle
 * ({@link ResponseStream}), record and replay of traces, a service over the shared Transport
 * ({@link ResponsesService}) and the tool loop ({@link runResponsesToolLoop}).
 */
export { type CollectResponseOptions, collectResponse } from './collect.js';
export {
  ResponseStreamListener,
  type ResponseStreamEvents,
  type ResponseStreamListenerOptions,
  type ResponseStreamWarning,
} from './listener.js';
export {
  type ResponseLoopRequest,
  type ResponsesToolLoopEvent,
  type ResponsesToolLoopResult,
  type ResponsesToolLoopStream,
  responsesToolLoopAdapter,
  runResponsesToolLoop,
  streamResponsesToolLoop,
} from './loop.js';
export { eventsFromJsonl, eventsToJsonl, replayEvents } from './replay.js';
export { RESPONSES_PATH, type ResponseRequestOptions } from './request.js';
export { ResponsesService, type ResumeOptions } from './service.js';
export { RESPONSES_PROTOCOL, ResponseStream, isResponseObject, streamResponse } from './stream.js';
export type * from './types.js';

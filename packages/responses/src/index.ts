/**
 * @ai4ts/responses: the OpenAI Responses API. A stream state machine that rebuilds the response from its events
 * ({@link ResponsesStreamListener}), a collector from any SSE source ({@link collectResponse}), the stream handle
 * ({@link ResponsesStream}), record and replay of traces, a service over the shared Transport
 * ({@link ResponsesService}) and the tool loop ({@link runResponsesToolLoop}).
 */
export { type CollectResponseOptions, collectResponse } from './collect.js';
export {
  ResponsesStreamListener,
  type ResponsesStreamEvents,
  type ResponsesStreamListenerOptions,
  type ResponsesStreamWarning,
} from './listener.js';
export type {
  ResponsesLoopRequest,
  ResponsesLoopState,
  ResponsesToolLoopEvent,
  ResponsesToolLoopResult,
  ResponsesToolLoopStream,
} from './loop.js';
export { RESPONSES_PROTOCOL, type ResponsesProtocol } from './protocol.js';
export { eventsFromJsonl, eventsToJsonl, replayEvents } from './replay.js';
export { RESPONSES_PATH, type ResponsesRequestOptions, toResponsesTool } from './request.js';
export {
  ResponsesService,
  type ResumeOptions,
  responsesToolLoopAdapter,
  resumeResponsesToolLoop,
  runResponsesToolLoop,
  streamResponse,
  streamResumeResponsesToolLoop,
  streamResponsesToolLoop,
} from './service.js';
export { isResponseObject, ResponsesStream } from './stream.js';
export type * from './types.js';
export * from './deprecated.js';

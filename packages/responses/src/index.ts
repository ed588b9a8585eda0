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
export type {
  ResponseLoopRequest,
  ResponsesToolLoopEvent,
  ResponsesToolLoopResult,
  ResponsesToolLoopStream,
} from './loop.js';
export { RESPONSES_PROTOCOL, type ResponsesProtocol } from './protocol.js';
export { eventsFromJsonl, eventsToJsonl, replayEvents } from './replay.js';
export { RESPONSES_PATH, type ResponseRequestOptions, toResponsesTool } from './request.js';
export {
  ResponsesService,
  type ResumeOptions,
  responsesToolLoopAdapter,
  runResponsesToolLoop,
  streamResponse,
  streamResponsesToolLoop,
} from './service.js';
export { isResponseObject, ResponseStream } from './stream.js';
export type * from './types.js';

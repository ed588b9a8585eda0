/**
 * @ai4ts/converse: Amazon Bedrock's Converse API (one request shape for every Bedrock model).
 * `ConverseStreamListener` folds stream events into a response and emits ai4ts's normalized events,
 * `ConverseService` sends requests over a Transport (a `bedrock()` preset), `runConverseToolLoop` /
 * `streamConverseToolLoop` run the tool loop.
 */
export { type CollectConverseOptions, collectConverse } from './collect.js';
export { toChatUsage, toFinishReason } from './convert.js';
export { type ConverseStreamEvents, ConverseStreamListener, type ConverseStreamListenerOptions } from './listener.js';
export type { ConverseLoopRequest, ConverseToolLoopEvent, ConverseToolLoopResult, ConverseToolLoopStream } from './loop.js';
export { CONVERSE_PROTOCOL, type ConverseProtocol } from './protocol.js';
export { CONVERSE_PATH, type ConverseRequestOptions, converseEndpoint, toConverseTool } from './request.js';
export {
  ConverseService,
  converseStream,
  converseToolLoopAdapter,
  runConverseToolLoop,
  streamConverseToolLoop,
} from './service.js';
export { ConverseStream, isConverseResponse } from './stream.js';
export { textOf, toToolCalls, toToolResultMessage } from './turns.js';
export * from './types.js';

/**
 * @ai4ts/core: what every protocol shares and users see. Transport, typed errors, the normalized events, the one
 * stream handle, tools and the tool loop. Helpers the sibling packages share but users need not see live in
 * `@ai4ts/core/internal`.
 */
export {
  AbortError,
  Ai4tsError,
  type Ai4tsErrorOptions,
  ApiError,
  type ApiErrorOptions,
  AuthenticationError,
  BadRequestError,
  ConnectionError,
  MAX_ERROR_MESSAGE_LENGTH,
  type OutputIssue,
  OutputRefusalError,
  OutputValidationError,
  ProtocolError,
  RateLimitError,
  ServerError,
  StreamIncompleteError,
  TimeoutError,
  type TimeoutPhase,
  LoopStateError,
  type LoopStateProblem,
  ToolError,
  UnknownFieldError,
} from './errors.js';
export {
  type ContentEvent,
  type ErrorEvent,
  type FinishEvent,
  type FinishReason,
  type HandlersOf,
  type NormalizedEvent,
  type NormalizedEvents,
  type ReasoningEvent,
  STREAM_EVENT_NAMES,
  type StreamEvent,
  type ToolCallDeltaEvent,
  type ToolCallDoneEvent,
  type ToolCallStartEvent,
  type ToolProgressEvent,
  type ToolResultEvent,
  type Usage,
  type UsageEvent,
} from './events.js';
export {
  collectInto,
  type ListenerStatus,
  type ReadOptions,
  readInto,
  type StreamListener,
} from './listener.js';
export { ProtocolListener, type ProtocolListenerEvents } from './protocol-listener.js';
export type { StreamSource } from './source.js';
export {
  EventStream,
  ListenerStream,
  type RetryEvent,
  type RetryEvents,
  type StreamEventHandler,
  type StreamEventHandlers,
  type StreamEventName,
} from './stream.js';
export {
  type DeepPartial,
  type ObjectEvent,
  type OutputRead,
  type StructuredOutput,
  structuredOutput,
} from './output/output.js';
export { PartialJsonParser } from './output/partial-json.js';
export * from './observe/index.js';
export * from './tools/index.js';
export * from './transport/index.js';
export * from './embeddings/index.js';

/**
 * `@ai4ts/core/internal`: helpers the ai4ts packages share. Not public API: names and signatures change without
 * notice; import from `@ai4ts/core` instead.
 */
export { isRecord, type ProviderErrorInfo, readProviderError, requestIdOf, retryAfterMs, truncate } from '../errors.js';
export { addUsage, isStreamEventType, STREAM_EVENT_TYPES } from '../events.js';
export { sseEventsOf } from '../source.js';
export { imagePlaceholder, MODEL_IMAGE_TYPES, partsFor, textOf } from '../tools/content.js';
export { errorResult, toolResultContent, toolsByName } from '../tools/execute.js';
export { runSteps } from '../tools/loop.js';
export { serviceFunctions } from '../tools/entry.js';
export { callOptionsOf, LOOP_FIELDS, loopOptionsOf, stateRequestOf, toolsOf, toWireBody } from '../tools/request.js';
export { ModelCall, type ModelProtocol, type RequestWatch } from '../observe/call.js';
export { loadOtel, type ModelSpan, type ResultSummary, Telemetry } from '../observe/telemetry.js';
export type {
  OtelApi,
  OtelAttributes,
  OtelAttributeValue,
  OtelContext,
  OtelHistogram,
  OtelMeter,
  OtelPropagator,
  OtelSpan,
  OtelTextMapGetter,
  OtelTracer,
} from '../observe/otel.js';
export { readFramedStream, readSseStream, type SseStream, type StreamLimits } from '../transport/stream.js';
export { type RequestInit_, RESUMABLE_HEADER, STREAM_ID_HEADER } from '../transport/transport.js';
export { DROPPED_HEADER } from '../observe/call.js';
export {
  abortError,
  describeError,
  type FailureContext,
  parseOrText,
  readErrorResponse,
  redact,
  redactJsonText,
  scrubJson,
  toAi4tsError,
} from './fail.js';
export { follow, NEVER, withOwnSignal } from './signal.js';
export { getOwn, setOwn } from './own.js';
export { checkRequest, positiveInt } from './check.js';
export { unknownFields } from './fields.js';
export { type CreatedReader, type Endpoint, readCreated, type Route, sendCreate } from './create.js';
export { emitByType } from './emit.js';
export { assertNever } from './never.js';
export { sameText } from './same-text.js';
export {
  forwardStep,
  type OpenEvents,
  type RetryEventTarget,
  type StreamEventSource,
  type StreamRun,
} from '../stream.js';
export { outputOf, readOutput, schemaInstruction } from '../output/output.js';
export {
  type LoopTurns,
  type ProtocolDefinition,
  ProtocolService,
  type StepEmit,
  type StepHandle,
  type StreamHandleClass,
} from '../protocol.js';
export { sleep } from '../transport/retry.js';
export { type CheckedEmbeddings, checkEmbeddings, checkRerank, inputCount, type WireEmbedding } from '../embeddings/check.js';

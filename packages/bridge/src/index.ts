/**
 * @ai4ts/bridge: custom SSE dialects in, OpenAI-compatible (and other) SSE out, and SSE server helpers. The gateway
 * that makes any streaming daemon an OpenAI endpoint is @ai4ts/gateway.
 */
export type { BridgeEvent, DoneEvent, ReasoningSignatureEvent, StartEvent, UnknownEvent } from './events.js';
export {
  type BridgeCompletion,
  type BridgeMessage,
  type BridgeToolCall,
  CompletionBuilder,
  type CompletionOptions,
  type DaemonTool,
  type ToolCallOwner,
} from './completion.js';
export {
  type Dialect,
  type DialectSpec,
  defineDialect,
  type EventRule,
  type ReadOptions,
  type UpstreamInput,
} from './dialect.js';
export { readTypedEventDialect, typedEventDialect } from './dialects/typed.js';
export { readNamedEventDialect, namedEventDialect } from './dialects/named.js';
export {
  type NamedEventOptions,
  type OpenAIErrorObject,
  openAIErrorObject,
  type OpenAIStreamOptions,
  toNamedEventSse,
  toOpenAICompletion,
  toOpenAISse,
} from './writers.js';
export {
  DEFAULT_HEARTBEAT_MS,
  SSE_HEADERS,
  type SseServeOptions,
  type SseMessageSource,
  sseResponse,
  writeSse,
} from './server.js';

/**
 * @ai4ts/bridge: custom SSE dialects in, OpenAI-compatible (and other) SSE out, server helpers, and a proxy that
 * makes any streaming daemon an OpenAI endpoint.
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
export {
  createOpenAIProxy,
  DEFAULT_MAX_CONCURRENT_STREAMS,
  DEFAULT_UPSTREAM_TIMEOUTS,
  type OpenAIProxy,
  type OpenAIProxyOptions,
  type UpstreamTimeouts,
} from './proxy.js';
export {
  DEFAULT_SERVER_TIMEOUTS,
  type ListenOptions,
  type ListeningProxy,
  listenOpenAIProxy,
  type ServerTimeouts,
} from './listen.js';
export { ChatRequestSchema, ChatRequestSchema as ProxyRequestSchema, type ProxyRequest } from './gateway/chat.js';
export type { GatewayProtocol } from './gateway/neutral.js';
export type { RouteSpec, UpstreamSpec } from './gateway/upstreams.js';
export { type AccessLogEntry, jsonLines } from './gateway/log.js';
export type { GatewayTelemetryOptions } from './gateway/telemetry.js';
export {
  DEFAULT_STREAM_MAX_EVENTS,
  DEFAULT_STREAM_TTL_MS,
  MemoryStreamStore,
  type StreamStore,
  type StreamStoreOptions,
} from './gateway/store.js';

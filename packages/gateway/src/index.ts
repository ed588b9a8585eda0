/**
 * @ai4ts/gateway: an LLM gateway that answers Chat Completions, Responses, Messages and Gemini in front of daemons that
 * stream their own SSE dialect (@ai4ts/bridge) and providers of any of the four protocols, translated live; as a node:http
 * server, a node:http listener or a fetch handler. Its Redis stream store is the `@ai4ts/gateway/redis` entry.
 */
export { createGateway, type Gateway } from './gateway.js';
export type { GatewayOptions, UpstreamRetry } from './context.js';
export {
  DEFAULT_SERVER_TIMEOUTS,
  type ListenOptions,
  type ListeningGateway,
  listenGateway,
  type ServerTimeouts,
} from './http/listen.js';
export { DEFAULT_MAX_CONCURRENT_STREAMS } from './http/limits.js';
export { DEFAULT_UPSTREAM_TIMEOUTS, type ResolvedUpstreamTimeouts, type UpstreamTimeouts } from './upstreams/timeouts.js';
export { ChatRequestSchema, ChatRequestSchema as ProxyRequestSchema, type ProxyRequest } from './codecs/chat.js';
export type { GatewayProtocol } from './codecs/neutral.js';
export type { ConversationState, OnUnsupported, UpstreamSpec } from './upstreams/targets.js';
export type { PoolRouteSpec, PoolUpstreamSpec, RouteSpec } from './upstreams/router.js';
export type { Strategy } from './upstreams/strategy.js';
export { type CooldownOptions, DEFAULT_COOLDOWN, type UpstreamHealth, type UpstreamState } from './upstreams/health.js';
export { type AccessLogEntry, jsonLines } from './http/access-log.js';
export type { GatewayTelemetryOptions } from './telemetry.js';
export type { GatewayMetricsOptions } from './metrics.js';
export {
  DEFAULT_STREAM_MAX_EVENTS,
  DEFAULT_STREAM_TTL_MS,
  type StreamInfo,
  type StreamStore,
  type StreamStoreOptions,
} from './state/store.js';
export { MemoryStreamStore, type MemoryStreamStoreOptions } from './state/memory.js';
export {
  DEFAULT_MAX_RESPONSES,
  DEFAULT_RESPONSE_MAX_BYTES,
  DEFAULT_RESPONSE_TTL_MS,
  MemoryResponseStore,
  type MemoryResponseStoreOptions,
  type ResponseStore,
  type ResponseStoreOptions,
  type StoredItem,
  type StoredResponse,
} from './state/responses.js';
export { HttpError } from './http/errors.js';
export type { KeysOptions } from './keys/gate.js';
export {
  issueKey,
  type KeySettings,
  KeySettingsSchema,
  type KeyUpdate,
  KeyUpdateSchema,
  type BudgetPeriod,
  type VirtualKey,
  VirtualKeySchema,
} from './keys/key.js';
export { FileKeyStore, type KeyStore, readKeys } from './keys/store.js';
export { keysReloader, type Reloader, type ReloadOutcome, Reloaders, routesReloader } from './reload.js';
export {
  type Admission,
  type Ask,
  type Counts,
  type KeyCounters,
  MemoryKeyCounters,
  type Refusal,
  type Ticket,
  type Used,
} from './keys/limits.js';
export {
  createOpenAIProxy,
  type ListeningProxy,
  listenOpenAIProxy,
  type OpenAIProxy,
  type OpenAIProxyOptions,
} from './deprecated.js';

export {
  type AuthStyle,
  PROVIDERS,
  type ProviderName,
  type ProviderPreset,
  type ProviderQuirks,
  resolveProvider,
} from './providers.js';
export { type Backoff, MAX_RETRY_AFTER_MS } from './retry.js';
export type { SseStream, StreamLimits } from './stream.js';
export {
  DEFAULT_FIRST_TOKEN_TIMEOUT,
  DEFAULT_IDLE_TIMEOUT,
  RESUMABLE_HEADER,
  STREAM_ID_HEADER,
  type OnRetry,
  type RequestInit_,
  type RequestOptions,
  resolveStreamTimeouts,
  type StreamRetry,
  type StreamTimeouts,
  Transport,
  type TransportOptions,
} from './transport.js';

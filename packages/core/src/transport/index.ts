export {
  type AuthStyle,
  PROVIDERS,
  type ProviderName,
  type ProviderPreset,
  type ProtocolName,
  type ProviderQuirks,
  resolveProvider,
  type StreamFraming,
  type WireRequest,
} from './providers.js';
export {
  type Backoff,
  DEFAULT_BACKOFF,
  DEFAULT_MAX_RETRIES,
  isRetryableBeforeFirstEvent,
  MAX_RETRY_AFTER_MS,
  type OnRetry,
  RETRYABLE_STREAM_ERROR_CODES,
  RetryPolicy,
  type RetryPolicyOptions,
} from './retry.js';
export {
  DEFAULT_FIRST_TOKEN_TIMEOUT,
  DEFAULT_IDLE_TIMEOUT,
  DEFAULT_TIMEOUTS,
  type ResolvedTimeouts,
  resolveStreamTimeouts,
  resolveTimeouts,
  type StreamTimeouts,
  type TimeoutOptions,
  type Timeouts,
} from './timeouts.js';
export type { RequestSigner, SignableRequest } from './sign.js';
export { type AccessToken, type AccessTokenSource, TOKEN_REFRESH_MARGIN_MS } from './token.js';
export {
  type RequestOptions,
  Transport,
  type TransportOptions,
} from './transport.js';
export {
  type GoogleCredentials,
  googleAccessToken,
  VERTEX_ANTHROPIC_VERSION,
  type VertexOptions,
  type VertexPublisher,
  vertex,
} from './vertex.js';

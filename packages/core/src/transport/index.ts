export { type AuthStyle, PROVIDERS, type ProviderName, type ProviderPreset, resolveProvider } from './providers.js';
export { type Backoff, MAX_RETRY_AFTER_MS } from './retry.js';
export type { SseStream, StreamLimits } from './stream.js';
export { type RequestInit_, type RequestOptions, Transport, type TransportOptions } from './transport.js';

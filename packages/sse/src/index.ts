/**
 * @ai4ts/sse: a WHATWG-exact streaming Server-Sent Events decoder, an encoder, and a reconnecting reader over fetch.
 * Zero dependencies; web streams, fetch and TextDecoder only, so it runs in Node 20+, browsers and edge runtimes.
 */
export { type ConnectSseInit, connectSse, type SseRetryOptions } from './connect.js';
export { DEFAULT_MAX_EVENT_SIZE, SseDecoder, type SseDecoderOptions } from './decoder.js';
export type { SseEvent } from './event.js';
export { encodeSse, type SseMessage } from './encode.js';
export { SseError, type SseErrorCode } from './errors.js';
export { type ParseSseOptions, parseSse, type SseEventStream, type SseSource } from './parse.js';
export { isRetryableStatus } from './retryable.js';

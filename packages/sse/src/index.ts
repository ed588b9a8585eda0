/**
 * @ai4ts/sse: a WHATWG-exact streaming Server-Sent Events decoder, an encoder, and a reconnecting reader over fetch;
 * beside it the second framing LLM APIs stream in, AWS's binary event-stream (Amazon Bedrock).
 * Zero dependencies; web streams, fetch and TextDecoder only, so it runs in Node 20+, browsers and edge runtimes.
 */
export { type ConnectSseInit, connectSse, type SseRetryOptions } from './connect.js';
export { DEFAULT_MAX_EVENT_SIZE, SseDecoder, type SseDecoderOptions } from './decoder.js';
export type { SseEvent } from './event.js';
export { encodeSse, type SseMessage } from './encode.js';
export { SseError, type SseErrorCode } from './errors.js';
export {
  DEFAULT_MAX_MESSAGE_SIZE,
  EventStreamDecoder,
  type EventStreamDecoderOptions,
  EventStreamError,
  type EventStreamErrorCode,
  type EventStreamHeaderValue,
  type EventStreamMessage,
} from './event-stream.js';
export { type EventStreamSource, type ParseEventStreamOptions, parseEventStream } from './parse-event-stream.js';
export { type ParseSseOptions, parseSse, type SseEventStream, type SseSource } from './parse.js';
export { isRetryableStatus } from './retryable.js';

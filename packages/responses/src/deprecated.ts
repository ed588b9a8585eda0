/** Names of the previous release, kept for one more: each is its new name under the old one. */
import type { ResponsesStreamEvents, ResponsesStreamListenerOptions, ResponsesStreamWarning } from './listener.js';
import { ResponsesStreamListener } from './listener.js';
import type { ResponsesLoopRequest } from './loop.js';
import type { ResponsesRequestOptions } from './request.js';
import { ResponsesStream } from './stream.js';
import type { ResponseCreateParams } from './types.js';

/** @deprecated Renamed {@link ResponseCreateParams}, the openai SDK's name; goes in the next release. */
export type ResponseCreateRequest = ResponseCreateParams;
/** @deprecated Renamed {@link ResponsesStream} (what ai4ts makes carries its package's name); goes in the next release. */
export const ResponseStream = ResponsesStream;
/** @deprecated Renamed {@link ResponsesStream}; goes in the next release. */
export type ResponseStream = ResponsesStream;
/** @deprecated Renamed {@link ResponsesStreamListener}; goes in the next release. */
export const ResponseStreamListener = ResponsesStreamListener;
/** @deprecated Renamed {@link ResponsesStreamListener}; goes in the next release. */
export type ResponseStreamListener = ResponsesStreamListener;
/** @deprecated Renamed {@link ResponsesStreamEvents}; goes in the next release. */
export type ResponseStreamEvents = ResponsesStreamEvents;
/** @deprecated Renamed {@link ResponsesStreamListenerOptions}; goes in the next release. */
export type ResponseStreamListenerOptions = ResponsesStreamListenerOptions;
/** @deprecated Renamed {@link ResponsesStreamWarning}; goes in the next release. */
export type ResponseStreamWarning = ResponsesStreamWarning;
/** @deprecated Renamed {@link ResponsesLoopRequest}; goes in the next release. */
export type ResponseLoopRequest = ResponsesLoopRequest;
/** @deprecated Renamed {@link ResponsesRequestOptions}; goes in the next release. */
export type ResponseRequestOptions = ResponsesRequestOptions;

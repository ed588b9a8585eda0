/** Names of the previous release, kept for one more: each is its new name under the old one. */
import type { MessagesStreamEvents, MessagesStreamListenerOptions } from './listener.js';
import { MessagesStreamListener } from './listener.js';
import type { MessagesLoopRequest } from './loop.js';
import type { MessagesRequestOptions } from './request.js';
import { MessagesStream } from './stream.js';

/** @deprecated Renamed {@link MessagesStream} (what ai4ts makes carries its package's name); goes in the next release. */
export const MessageStream = MessagesStream;
/** @deprecated Renamed {@link MessagesStream}; goes in the next release. */
export type MessageStream = MessagesStream;
/** @deprecated Renamed {@link MessagesStreamListener}; goes in the next release. */
export const MessageStreamListener = MessagesStreamListener;
/** @deprecated Renamed {@link MessagesStreamListener}; goes in the next release. */
export type MessageStreamListener = MessagesStreamListener;
/** @deprecated Renamed {@link MessagesStreamEvents}; goes in the next release. */
export type MessageStreamEvents = MessagesStreamEvents;
/** @deprecated Renamed {@link MessagesStreamListenerOptions}; goes in the next release. */
export type MessageStreamListenerOptions = MessagesStreamListenerOptions;
/** @deprecated Renamed {@link MessagesLoopRequest}; goes in the next release. */
export type MessageLoopRequest = MessagesLoopRequest;
/** @deprecated Renamed {@link MessagesRequestOptions}; goes in the next release. */
export type MessageRequestOptions = MessagesRequestOptions;

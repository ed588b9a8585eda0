/**
 * Where resumable streams are kept while they run and for a while after: the SSE messages of each stream, in order,
 * numbered from 1, with who created it and in which protocol. A client that reconnects reads the messages after the
 * last one it saw, then the live rest. The in-memory store (memory.ts) serves one process; the Redis store (redis.ts,
 * the `/redis` entry) serves several behind a load balancer.
 */
import type { SseMessage } from '@ai4ts/sse';
import type { GatewayProtocol } from '../codecs/neutral.js';
import { HttpError, invalid } from '../http/errors.js';
import type { ResponseStore } from './responses.js';

/** What a store keeps of a stream besides its messages. */
export interface StreamInfo {
  /** The protocol the stream was created in: its errors take that protocol's shape. */
  protocol: GatewayProtocol;
  /** Who may read it: `ownerOf` the request that created it (a hash, never the credential). */
  owner: string;
}

/**
 * What a stream store offers the gateway. Every failure of the store itself is an {@link HttpError} 503
 * `store_unavailable` with `Retry-After`, in the gateway's words.
 */
export interface StreamStore {
  /** Opens a stream; throws the 503 `store_unavailable` when the store cannot take one more. */
  create(id: string, info: StreamInfo): Promise<void>;
  /** Appends message number `seq` (1, 2, ... in order) of stream `id`. */
  append(id: string, seq: number, message: SseMessage): Promise<void>;
  /**
   * Nothing more will be appended: readers end once they have every message, and with `failure` they then throw it
   * (the stream did not end as its writer meant).
   */
  end(id: string, failure?: HttpError): Promise<void>;
  /** The stream's info; undefined when the store does not have it. */
  info(id: string): Promise<StreamInfo | undefined>;
  /**
   * The messages after number `after`, then each one as it is appended, until the end. Throws a 404
   * `stream_not_found` when the stream is unknown, expired or lost, or when the messages asked for were dropped (over
   * `maxEvents`); a 400 `invalid_event_id` when the stream ended before message `after`; the `failure` it ended with.
   * Aborting `signal` ends the read quietly.
   */
  read(id: string, after: number, signal: AbortSignal): AsyncIterable<SseMessage>;
  /**
   * A response store on the same connection (the Redis store's); without it the gateway keeps responses in its
   * memory.
   */
  responses?(): ResponseStore;
  /**
   * Asks every instance sharing the store to cancel background response `id` (a shared store's); the instance that
   * runs it aborts it. Without it a response runs on this instance or on none.
   */
  requestCancel?(id: string): Promise<void>;
  /** Calls `cancel` with the id of each response any instance asks to cancel; resolves once listening. */
  listenForCancels?(cancel: (id: string) => void): Promise<void>;
  /** Whether the store can serve (for `/readyz`). */
  ready(): Promise<boolean>;
  /** Releases timers and connections. */
  close(): Promise<void>;
}

/** Limits of a store. */
export interface StreamStoreOptions {
  /** Milliseconds a stream is kept after its last message. Default 600000 (10 minutes). */
  ttlMs?: number;
  /** Messages kept per stream; older ones are dropped, and resuming before them is refused. Default 10000. */
  maxEvents?: number;
}

export const DEFAULT_STREAM_TTL_MS = 600_000;
export const DEFAULT_STREAM_MAX_EVENTS = 10_000;

/** The 404 for a stream the store does not have (never existed, expired, or lost with the store's data). */
export function streamGone(id: string, why = 'is unknown, expired or was lost'): HttpError {
  return new HttpError(404, {
    message: `The stream ${id} ${why}; send the request again`,
    type: 'invalid_request_error',
    param: null,
    code: 'stream_not_found',
  });
}

/** The 400 for a `Last-Event-ID` after the last message of a stream that has ended. */
export function eventPastEnd(id: string, last: number): HttpError {
  return new HttpError(
    400,
    invalid(`Last-Event-ID is past the end of stream ${id}, which ended at message ${last}`, 'last-event-id', 'invalid_event_id'),
  );
}

/**
 * The 503 for a store that cannot serve: unreachable, stalled, full. `why` is the gateway's own words, never the
 * client library's message (it may name hosts or limits that are not the client's business).
 */
export function storeFailed(why: string): HttpError {
  return new HttpError(
    503,
    { message: `The gateway's stream store ${why}; retry later`, type: 'server_error', param: null, code: 'store_unavailable' },
    { 'retry-after': '1' },
  );
}

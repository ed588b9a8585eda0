/**
 * Where resumable streams are kept while they run and for a while after: the SSE messages of each stream, in order,
 * numbered from 1. A client that reconnects reads the messages after the last one it saw, then the live rest. The
 * in-memory store (memory.ts) serves one process; the Redis store (redis.ts, the `/redis` entry) serves several
 * behind a load balancer.
 */
import type { SseMessage } from '@ai4ts/sse';
import { HttpError } from '../http/errors.js';

/** What a stream store offers the gateway. */
export interface StreamStore {
  /** Opens a stream. */
  create(id: string): Promise<void>;
  /** Appends message number `seq` (1, 2, ... in order) of stream `id`. */
  append(id: string, seq: number, message: SseMessage): Promise<void>;
  /** Nothing more will be appended: readers end once they have every message. */
  end(id: string): Promise<void>;
  /**
   * The messages after number `after`, then each one as it is appended, until the end. Throws a
   * `streamGone` HttpError when the stream is unknown, expired or lost, or when the messages asked for were
   * dropped (over `maxEvents`). Aborting `signal` ends the read quietly.
   */
  read(id: string, after: number, signal: AbortSignal): AsyncIterable<SseMessage>;
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

/**
 * Resumable streams in Redis Streams, shared by every gateway instance behind a load balancer: the instance that runs
 * a generation appends its events, any instance serves a reconnection from them. One Redis stream per gateway stream:
 * entry `0-1` opens it, message n is entry `0-(n+1)`, and an `end` entry closes it; the key expires `ttlMs` after the
 * last entry, and `MAXLEN` keeps the last `maxEvents`.
 */
import type { SseMessage } from '@ai4ts/sse';
import { Redis, type RedisOptions } from 'ioredis';
import {
  DEFAULT_STREAM_MAX_EVENTS,
  DEFAULT_STREAM_TTL_MS,
  type StreamStore,
  type StreamStoreOptions,
  streamGone,
} from './store.js';

/** Options of a {@link RedisStreamStore}. */
export interface RedisStreamStoreOptions extends StreamStoreOptions {
  /** A `redis://` URL, or ioredis options. */
  redis: string | RedisOptions;
  /** Prefix of every key; `ai4ts:stream:` by default. */
  keyPrefix?: string;
  /** Milliseconds a reader blocks on Redis before it checks that its stream still exists. Default 1000. */
  blockMs?: number;
}

type Entry = [id: string, fields: string[]];

/** The entry's fields as a map (`t`: `open`, `msg` or `end`; `m`: a message as JSON). */
function fieldsOf(fields: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (let i = 0; i + 1 < fields.length; i += 2) out.set(fields[i] ?? '', fields[i + 1] ?? '');
  return out;
}

/** The message number of an entry id `0-(n+1)`. */
function seqOf(id: string): number {
  return Number(id.slice(id.indexOf('-') + 1)) - 1;
}

function messageOf(json: string | undefined): SseMessage {
  const value: unknown = JSON.parse(json ?? '{}');
  if (typeof value !== 'object' || value === null || !('data' in value) || typeof value.data !== 'string')
    throw new Error('A stored message has no data');
  const message: SseMessage = { data: value.data };
  if ('event' in value && typeof value.event === 'string') message.event = value.event;
  if ('id' in value && typeof value.id === 'string') message.id = value.id;
  return message;
}

/** See the file comment. Readers each hold a connection of their own while they wait (XREAD BLOCK). */
export class RedisStreamStore implements StreamStore {
  readonly #redis: Redis;
  readonly #options: RedisOptions | string;
  readonly #prefix: string;
  readonly #ttlMs: number;
  readonly #maxEvents: number;
  readonly #blockMs: number;
  readonly #readers = new Set<Redis>();

  constructor(options: RedisStreamStoreOptions) {
    this.#options = options.redis;
    this.#redis = this.#connect();
    this.#prefix = options.keyPrefix ?? 'ai4ts:stream:';
    this.#ttlMs = options.ttlMs ?? DEFAULT_STREAM_TTL_MS;
    this.#maxEvents = options.maxEvents ?? DEFAULT_STREAM_MAX_EVENTS;
    this.#blockMs = options.blockMs ?? 1000;
  }

  #connect(): Redis {
    const redis = typeof this.#options === 'string' ? new Redis(this.#options) : new Redis(this.#options);
    // Errors surface on the commands that fail; an unhandled 'error' event would crash the process.
    redis.on('error', () => undefined);
    return redis;
  }

  #key(id: string): string {
    return `${this.#prefix}${id}`;
  }

  async #add(id: string, seq: number, fields: string[]): Promise<void> {
    const key = this.#key(id);
    await this.#redis
      .multi()
      .xadd(key, 'MAXLEN', String(this.#maxEvents + 1), `0-${seq + 1}`, ...fields)
      .pexpire(key, this.#ttlMs)
      .exec()
      .then((results) => {
        const failed = results?.find(([error]) => error);
        if (failed?.[0]) throw failed[0];
      });
  }

  async create(id: string): Promise<void> {
    await this.#add(id, 0, ['t', 'open']);
  }

  async append(id: string, seq: number, message: SseMessage): Promise<void> {
    await this.#add(id, seq, ['t', 'msg', 'm', JSON.stringify(message)]);
  }

  async end(id: string): Promise<void> {
    const last = await this.#redis.xrevrange(this.#key(id), '+', '-', 'COUNT', 1);
    const top = last[0];
    if (!top) return;
    await this.#add(id, seqOf(top[0]) + 1, ['t', 'end']);
  }

  async *read(id: string, after: number, signal: AbortSignal): AsyncGenerator<SseMessage> {
    const key = this.#key(id);
    const first = (await this.#redis.xrange(key, '-', '+', 'COUNT', 1))[0];
    if (!first) throw streamGone(id);
    // Trimmed past what the client needs: while the opening entry is kept, every message is.
    const oldest = fieldsOf(first[1]).get('t') === 'open' ? 1 : seqOf(first[0]);
    if (oldest > after + 1) throw streamGone(id, `no longer holds message ${after + 1}`);
    const reader = this.#connect();
    this.#readers.add(reader);
    const stop = () => reader.disconnect();
    signal.addEventListener('abort', stop, { once: true });
    let lastId = `0-${after + 1}`;
    try {
      for (;;) {
        if (signal.aborted) return;
        let result: [string, Entry[]][] | null;
        try {
          result = (await reader.xread('COUNT', 200, 'BLOCK', this.#blockMs, 'STREAMS', key, lastId)) as [string, Entry[]][] | null;
        } catch (error) {
          if (signal.aborted) return;
          throw error;
        }
        const entries = result?.[0]?.[1] ?? [];
        if (entries.length === 0) {
          // Nothing new for a while: the stream may have expired, or Redis lost it (a restart).
          if ((await this.#redis.exists(key)) === 0) throw streamGone(id);
          continue;
        }
        for (const [entryId, fields] of entries) {
          lastId = entryId;
          const entry = fieldsOf(fields);
          if (entry.get('t') === 'end') return;
          if (entry.get('t') === 'msg') yield messageOf(entry.get('m'));
        }
      }
    } finally {
      signal.removeEventListener('abort', stop);
      this.#readers.delete(reader);
      reader.disconnect();
    }
  }

  async ready(): Promise<boolean> {
    const timeout = new Promise<false>((resolve) => setTimeout(() => resolve(false), 1000).unref());
    return Promise.race([this.#redis.ping().then((pong) => pong === 'PONG'), timeout]).catch(() => false);
  }

  async close(): Promise<void> {
    for (const reader of this.#readers) reader.disconnect();
    this.#readers.clear();
    await this.#redis.quit().catch(() => this.#redis.disconnect());
  }
}

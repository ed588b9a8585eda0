/**
 * Resumable streams in Redis Streams, shared by every gateway instance behind a load balancer: the instance that runs
 * a generation appends its events, any instance serves a reconnection from them. One Redis stream per gateway stream:
 * entry `0-1` opens it, message n is entry `0-(n+1)`, and an `end` entry closes it (with the failure, when it
 * failed); its protocol and owner are in a key beside it (`<key>:info`). Both keys expire `ttlMs` after the last
 * entry, and `MAXLEN` keeps the last `maxEvents`. Each append is also published on a channel named like the key,
 * which wakes the readers: all readers of one instance share one subscriber connection.
 *
 * The store fails fast: a lost connection fails every command at once (and wakes every reader to fail), a stalled
 * Redis fails it after `commandTimeoutMs`, and each failure is a `storeFailed` 503 in the gateway's words.
 */
import type { SseMessage } from '@ai4ts/sse';
import { Redis, type RedisOptions } from 'ioredis';
import type { GatewayProtocol } from '../codecs/neutral.js';
import { HttpError } from '../http/errors.js';
import { RedisResponseStore } from './redis-responses.js';
import { DEFAULT_RESPONSE_TTL_MS, type ResponseStore, type ResponseStoreOptions } from './responses.js';
import {
  DEFAULT_STREAM_MAX_EVENTS,
  DEFAULT_STREAM_TTL_MS,
  eventPastEnd,
  type StreamInfo,
  type StreamStore,
  type StreamStoreOptions,
  storeFailed,
  streamGone,
} from './store.js';

/** Options of a {@link RedisStreamStore}. */
export interface RedisStreamStoreOptions extends StreamStoreOptions {
  /** A `redis://` URL, or ioredis options (they override the store's fail-fast ones). */
  redis: string | RedisOptions;
  /** Prefix of every key; `ai4ts:stream:` by default. */
  keyPrefix?: string;
  /** Milliseconds a reader waits for a new message before it checks that its stream still exists. Default 1000. */
  blockMs?: number;
  /** Milliseconds a Redis command may take before the store counts Redis as stalled. Default 2000. */
  commandTimeoutMs?: number;
}

type Entry = [id: string, fields: string[]];

const PROTOCOLS: ReadonlySet<string> = new Set<GatewayProtocol>(['chat', 'responses', 'messages']);

/** The entry's fields as a map (`t`: `open`, `msg` or `end`; `m`: a message as JSON; `e`: a failure as JSON). */
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

/** Stored info back; undefined (no such stream) for anything else, so that nobody owns a stream by a bad record. */
function infoOf(json: string): StreamInfo | undefined {
  try {
    const value: unknown = JSON.parse(json);
    if (typeof value !== 'object' || value === null || !('protocol' in value) || !('owner' in value)) return undefined;
    const { protocol, owner } = value;
    return isProtocol(protocol) && typeof owner === 'string' ? { protocol, owner } : undefined;
  } catch {
    return undefined;
  }
}

function isProtocol(value: unknown): value is GatewayProtocol {
  return typeof value === 'string' && PROTOCOLS.has(value);
}

function failureJson(failure: HttpError): string {
  return JSON.stringify({ status: failure.status, error: failure.error });
}

/** A stored failure back as the HttpError it was; a store failure when it cannot be read. */
function failureOf(json: string): HttpError {
  try {
    const { status, error } = JSON.parse(json) as { status: number; error: HttpError['error'] };
    return new HttpError(status, error);
  } catch {
    return storeFailed('lost the end of the stream');
  }
}

/** A client library's error in the gateway's words: its message may name hosts and limits. */
function storeFailure(error: unknown): HttpError {
  if (error instanceof HttpError) return error;
  // A transaction Redis refused (EXECABORT) carries the reason of the command it refused.
  const refused = error instanceof Error && 'previousErrors' in error ? error.previousErrors : undefined;
  const cause: unknown = Array.isArray(refused) ? refused[0] : error;
  const message = cause instanceof Error ? cause.message : '';
  if (message.startsWith('OOM')) return storeFailed('is out of memory');
  if (/timed out/i.test(message)) return storeFailed('does not answer');
  return storeFailed('cannot be reached');
}

/** The readers waiting on one channel, and the failure published on it, if any. */
interface Channel {
  readers: number;
  wakes: Set<() => void>;
  /** Settles once the subscriber connection listens on the channel. */
  subscribed: Promise<void>;
  failure: HttpError | undefined;
}

/** See the file comment. */
export class RedisStreamStore implements StreamStore {
  readonly #redis: Redis;
  readonly #options: RedisOptions | string;
  readonly #commandTimeoutMs: number;
  readonly #prefix: string;
  readonly #ttlMs: number;
  readonly #maxEvents: number;
  readonly #blockMs: number;
  /** Set while the connection is down after it was up: commands then fail at once rather than queue. */
  #lost = false;
  #subscriber: Redis | undefined;
  readonly #channels = new Map<string, Channel>();
  /** Who hears the cancels asked on the cancel channel, and the subscription to it once asked for. */
  readonly #cancels = new Set<(id: string) => void>();
  #cancelsHeard: Promise<void> | undefined;
  /**
   * The last message number sent for each stream this instance writes, so that `end` needs no read: a command that
   * timed out may still run once a stalled Redis wakes, and the end entry must come after it.
   */
  readonly #last = new Map<string, number>();

  constructor(options: RedisStreamStoreOptions) {
    this.#options = options.redis;
    this.#commandTimeoutMs = options.commandTimeoutMs ?? 2000;
    this.#prefix = options.keyPrefix ?? 'ai4ts:stream:';
    this.#ttlMs = options.ttlMs ?? DEFAULT_STREAM_TTL_MS;
    this.#maxEvents = options.maxEvents ?? DEFAULT_STREAM_MAX_EVENTS;
    this.#blockMs = options.blockMs ?? 1000;
    this.#redis = this.#connect();
    this.#redis.on('close', () => {
      this.#lost = true;
      this.#wakeAll();
    });
    this.#redis.on('ready', () => {
      this.#lost = false;
    });
  }

  #connect(): Redis {
    // Fail fast: one retry per command across a reconnection, a stalled command given up after the timeout.
    const failFast: RedisOptions = { maxRetriesPerRequest: 1, commandTimeout: this.#commandTimeoutMs };
    const redis =
      typeof this.#options === 'string' ? new Redis(this.#options, failFast) : new Redis({ ...failFast, ...this.#options });
    // Errors surface on the commands that fail; an unhandled 'error' event would crash the process.
    redis.on('error', () => undefined);
    return redis;
  }

  /** A command on the main connection: at once a 503 while Redis is known down, and every failure a 503. */
  async #run<T>(command: (redis: Redis) => Promise<T>): Promise<T> {
    if (this.#lost) throw storeFailed('cannot be reached');
    try {
      return await command(this.#redis);
    } catch (error) {
      throw storeFailure(error);
    }
  }

  /** The channel of cancels: not a stream key (those end in a stream id, a UUID). */
  get #cancelChannel(): string {
    return `${this.#prefix}cancel`;
  }

  #key(id: string): string {
    return `${this.#prefix}${id}`;
  }

  /** The stream's {@link StreamInfo}, beside it rather than in its opening entry, which `MAXLEN` may trim. */
  #infoKey(id: string): string {
    return `${this.#prefix}${id}:info`;
  }

  /** Adds an entry and keeps both keys alive `ttlMs` more; with `info`, the stream is new. */
  async #add(id: string, seq: number, fields: string[], publish: string | undefined, info?: StreamInfo): Promise<void> {
    const key = this.#key(id);
    const infoKey = this.#infoKey(id);
    const results = await this.#run((redis) => {
      const multi = redis.multi();
      if (info) multi.set(infoKey, JSON.stringify(info), 'PX', this.#ttlMs);
      else multi.pexpire(infoKey, this.#ttlMs);
      multi.xadd(key, 'MAXLEN', String(this.#maxEvents + 1), `0-${seq + 1}`, ...fields).pexpire(key, this.#ttlMs);
      return (publish === undefined ? multi : multi.publish(key, publish)).exec();
    });
    const failed = results?.find(([error]) => error);
    if (failed?.[0]) throw storeFailure(failed[0]);
  }

  async create(id: string, info: StreamInfo): Promise<void> {
    this.#last.set(id, 0);
    try {
      await this.#add(id, 0, ['t', 'open'], undefined, info);
    } catch (error) {
      this.#last.delete(id);
      throw error;
    }
  }

  async append(id: string, seq: number, message: SseMessage): Promise<void> {
    this.#last.set(id, seq);
    await this.#add(id, seq, ['t', 'msg', 'm', JSON.stringify(message)], '');
  }

  async end(id: string, failure?: HttpError): Promise<void> {
    let last = this.#last.get(id);
    this.#last.delete(id);
    if (last === undefined) {
      const top = (await this.#run((redis) => redis.xrevrange(this.#key(id), '+', '-', 'COUNT', 1)))[0];
      if (!top) return;
      last = seqOf(top[0]);
    }
    const fields = ['t', 'end', ...(failure ? ['e', failureJson(failure)] : [])];
    try {
      await this.#add(id, last + 1, fields, failure ? failureJson(failure) : '');
    } catch (error) {
      if (!failure) throw error;
      // A full Redis refuses even the end entry: the stream cannot be finished, so it goes, and the readers waiting
      // now are told why (neither DEL nor PUBLISH needs memory; a full Redis refuses them in a transaction).
      const key = this.#key(id);
      await this.#run(async (redis) => {
        await redis.publish(key, failureJson(failure));
        await redis.del(key, this.#infoKey(id));
      });
    }
  }

  async info(id: string): Promise<StreamInfo | undefined> {
    const json = await this.#run((redis) => redis.get(this.#infoKey(id)));
    return json === null ? undefined : infoOf(json);
  }

  async *read(id: string, after: number, signal: AbortSignal): AsyncGenerator<SseMessage> {
    const key = this.#key(id);
    const [first, top] = await this.#run(async (redis) => {
      const [head, tail] = await Promise.all([
        redis.xrange(key, '-', '+', 'COUNT', 1),
        redis.xrevrange(key, '+', '-', 'COUNT', 1),
      ]);
      return [head[0], tail[0]];
    });
    if (!first) throw streamGone(id);
    // Trimmed past what the client needs: while the opening entry is kept, every message is.
    const oldest = fieldsOf(first[1]).get('t') === 'open' ? 1 : seqOf(first[0]);
    if (oldest > after + 1) throw streamGone(id, `no longer holds message ${after + 1}`);
    if (top && fieldsOf(top[1]).get('t') === 'end' && after > seqOf(top[0]) - 1) throw eventPastEnd(id, seqOf(top[0]) - 1);
    const channel = await this.#subscribe(key);
    let lastId = `0-${after + 1}`;
    let wake = () => undefined;
    try {
      for (;;) {
        if (signal.aborted) return;
        // Listening before the read: a message appended during it still wakes this reader.
        const woken = new Promise<void>((resolve) => {
          wake = () => {
            channel.wakes.delete(wake);
            resolve();
          };
          channel.wakes.add(wake);
        });
        const result = (await this.#run((redis) => redis.xread('COUNT', 200, 'STREAMS', key, lastId))) as
          | [string, Entry[]][]
          | null;
        const entries = result?.[0]?.[1] ?? [];
        for (const [entryId, fields] of entries) {
          lastId = entryId;
          const entry = fieldsOf(fields);
          if (entry.get('t') === 'end') {
            const failure = entry.get('e');
            if (failure !== undefined) throw failureOf(failure);
            return;
          }
          if (entry.get('t') === 'msg') yield messageOf(entry.get('m'));
        }
        if (entries.length > 0) {
          channel.wakes.delete(wake);
          continue;
        }
        if (channel.failure) throw channel.failure;
        // Nothing new: wait for a wake, then check that the stream still exists (it may have expired, or Redis
        // lost it in a restart).
        await waitFor(woken, signal, this.#blockMs);
        channel.wakes.delete(wake);
        if (signal.aborted) return;
        if (channel.failure) throw channel.failure;
        if ((await this.#run((redis) => redis.exists(key))) === 0) throw streamGone(id);
      }
    } finally {
      channel.wakes.delete(wake);
      this.#unsubscribe(key, channel);
    }
  }

  /** The channel of `key`, subscribed on the one subscriber connection of this instance, with one more reader. */
  async #subscribe(key: string): Promise<Channel> {
    let channel = this.#channels.get(key);
    if (!channel) {
      const subscribed = this.#lost
        ? Promise.reject(storeFailed('cannot be reached'))
        : this.#listener()
            .subscribe(key)
            .then(() => undefined);
      channel = { readers: 0, wakes: new Set(), failure: undefined, subscribed };
      this.#channels.set(key, channel);
    }
    channel.readers++;
    try {
      await channel.subscribed;
    } catch (error) {
      this.#unsubscribe(key, channel);
      throw storeFailure(error);
    }
    return channel;
  }

  #unsubscribe(key: string, channel: Channel): void {
    if (--channel.readers > 0 || this.#channels.get(key) !== channel) return;
    this.#channels.delete(key);
    this.#subscriber?.unsubscribe(key).catch(() => undefined);
  }

  #listener(): Redis {
    if (this.#subscriber) return this.#subscriber;
    const subscriber = this.#connect();
    subscriber.on('message', (key: string, payload: string) => {
      if (key === this.#cancelChannel) {
        for (const cancel of this.#cancels) cancel(payload);
        return;
      }
      const channel = this.#channels.get(key);
      if (!channel) return;
      if (payload !== '') channel.failure = failureOf(payload);
      for (const wake of [...channel.wakes]) wake();
    });
    subscriber.on('close', () => this.#wakeAll());
    this.#subscriber = subscriber;
    return subscriber;
  }

  #wakeAll(): void {
    for (const channel of this.#channels.values()) for (const wake of [...channel.wakes]) wake();
  }

  /**
   * A response store on this store's connection, its keys beside the streams' (`<keyPrefix>resp:<id>`): what
   * `--redis` gives stored Responses, shared by every instance.
   */
  responses(options: ResponseStoreOptions = {}): ResponseStore {
    return new RedisResponseStore((command) => this.#run(command), this.#prefix, options.ttlMs ?? DEFAULT_RESPONSE_TTL_MS);
  }

  async requestCancel(id: string): Promise<void> {
    await this.#run((redis) => redis.publish(this.#cancelChannel, id));
  }

  async listenForCancels(cancel: (id: string) => void): Promise<void> {
    this.#cancels.add(cancel);
    if (!this.#cancelsHeard) {
      // Asked again after a failure: ioredis re-subscribes on a reconnection only to what it once subscribed.
      const heard = this.#lost
        ? Promise.reject(storeFailed('cannot be reached'))
        : this.#listener()
            .subscribe(this.#cancelChannel)
            .then(() => undefined);
      this.#cancelsHeard = heard.catch((error: unknown) => {
        this.#cancelsHeard = undefined;
        throw storeFailure(error);
      });
    }
    await this.#cancelsHeard;
  }

  async ready(): Promise<boolean> {
    if (this.#lost) return false;
    const timeout = new Promise<false>((resolve) => setTimeout(() => resolve(false), 1000).unref());
    return Promise.race([this.#redis.ping().then((pong) => pong === 'PONG'), timeout]).catch(() => false);
  }

  async close(): Promise<void> {
    this.#wakeAll();
    await Promise.all(
      [this.#redis, this.#subscriber].map((redis) => redis?.quit().catch(() => redis.disconnect())),
    );
  }
}

/** Resolves on `woken`, after `ms`, or when `signal` aborts, whichever comes first. */
function waitFor(woken: Promise<void>, signal: AbortSignal, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    void woken.then(done);
  });
}

/**
 * Virtual keys and their counters in Redis, shared by every gateway instance: the keys as JSON in one hash (and their
 * ids by hash in another), the counters in keys that expire with their window, each admission and each settlement one
 * Lua script, so that no two instances read the same count and both take the last unit.
 */
import { Redis, type RedisOptions } from 'ioredis';
import { HttpError } from '../http/errors.js';
import { type VirtualKey, VirtualKeySchema } from './key.js';
import { type Admission, type Ask, type KeyCounters, limitsOf, periodOf, type Refusal, type Ticket, type Used } from './limits.js';
import { minuteAt } from './spend.js';
import type { KeyStore } from './store.js';

/** Options of {@link RedisKeyStore} and {@link RedisKeyCounters}. */
export interface RedisKeysOptions {
  /** A `redis://` URL, or ioredis options (they override the fail-fast ones). */
  redis: string | RedisOptions;
  /** Prefix of every key; `ai4ts:keys:` by default. */
  keyPrefix?: string;
  /** Milliseconds a Redis command may take before it fails. Default 2000. */
  commandTimeoutMs?: number;
}

/** The 503 of a key store or counters that cannot be reached: the message names no host. */
function keysUnavailable(): HttpError {
  return new HttpError(
    503,
    { message: "The gateway's key store cannot be reached; retry later", type: 'server_error', param: null, code: 'key_store_unavailable' },
    { 'retry-after': '1' },
  );
}

/** A fail-fast connection, as the stream store's: one retry per command, a stalled one given up after the timeout. */
function connect(options: RedisKeysOptions): Redis {
  const failFast: RedisOptions = { maxRetriesPerRequest: 1, commandTimeout: options.commandTimeoutMs ?? 2000 };
  const redis =
    typeof options.redis === 'string' ? new Redis(options.redis, failFast) : new Redis({ ...failFast, ...options.redis });
  // Errors surface on the commands that fail; an unhandled 'error' event would crash the process.
  redis.on('error', () => undefined);
  return redis;
}

async function run<T>(command: () => Promise<T>): Promise<T> {
  try {
    return await command();
  } catch {
    throw keysUnavailable();
  }
}

const FIND = `local id = redis.call('HGET', KEYS[2], ARGV[1])
if not id then return false end
return redis.call('HGET', KEYS[1], id)`;

/** The keys in Redis; see the file comment. A stored record that does not read back as a key is no key. */
export class RedisKeyStore implements KeyStore {
  readonly #redis: Redis;
  readonly #keys: string;
  readonly #hashes: string;

  constructor(options: RedisKeysOptions) {
    this.#redis = connect(options);
    const prefix = options.keyPrefix ?? 'ai4ts:keys:';
    this.#keys = `${prefix}records`;
    this.#hashes = `${prefix}hashes`;
  }

  async find(hash: string): Promise<VirtualKey | undefined> {
    const json = await run(() => this.#redis.eval(FIND, 2, this.#keys, this.#hashes, hash));
    return typeof json === 'string' ? keyOf(json) : undefined;
  }

  async get(id: string): Promise<VirtualKey | undefined> {
    const json = await run(() => this.#redis.hget(this.#keys, id));
    return json === null ? undefined : keyOf(json);
  }

  async list(): Promise<VirtualKey[]> {
    const all = await run(() => this.#redis.hvals(this.#keys));
    return all.map(keyOf).filter((key) => key !== undefined);
  }

  async put(key: VirtualKey): Promise<void> {
    const results = await run(() =>
      this.#redis.multi().hset(this.#keys, key.id, JSON.stringify(key)).hset(this.#hashes, key.hash, key.id).exec(),
    );
    if (results?.some(([error]) => error)) throw keysUnavailable();
  }

  async ready(): Promise<boolean> {
    return (await this.#redis.ping().catch(() => '')) === 'PONG';
  }

  async close(): Promise<void> {
    await this.#redis.quit().catch(() => undefined);
  }
}

function keyOf(json: string): VirtualKey | undefined {
  try {
    const parsed = VirtualKeySchema.safeParse(JSON.parse(json));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/**
 * KEYS: the minute's hash (`r` requests, `t` tokens), the period's spend, the streams open. ARGV: rpm, tpm, budget,
 * max streams (-1: none), then the ask (tokens, nano-dollars, stream 0/1), then the spend key's lifetime (0: none).
 * The same rule as limits.ts's refusalOf; returns {refusal (0: admitted), requests, tokens, spent}.
 */
const ADMIT = `local r = tonumber(redis.call('HGET', KEYS[1], 'r') or '0')
local t = tonumber(redis.call('HGET', KEYS[1], 't') or '0')
local s = tonumber(redis.call('GET', KEYS[2]) or '0')
local c = tonumber(redis.call('GET', KEYS[3]) or '0')
local rpm, tpm, budget, maxs = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local tokens, nano, stream, ttl = tonumber(ARGV[5]), tonumber(ARGV[6]), ARGV[7] == '1', tonumber(ARGV[8])
local refusal = 0
if rpm >= 0 and r + 1 > rpm then refusal = 1
elseif tpm >= 0 and t + tokens > tpm then refusal = 2
elseif budget >= 0 and s + nano > budget then refusal = 3
elseif stream and maxs >= 0 and c + 1 > maxs then refusal = 4 end
if refusal > 0 then return {refusal, r, t, s} end
redis.call('HINCRBY', KEYS[1], 'r', 1)
redis.call('HINCRBY', KEYS[1], 't', tokens)
redis.call('PEXPIRE', KEYS[1], 120000)
redis.call('INCRBY', KEYS[2], nano)
if ttl > 0 then redis.call('PEXPIRE', KEYS[2], ttl) end
if stream then
  redis.call('INCR', KEYS[3])
  redis.call('PEXPIRE', KEYS[3], 3600000)
end
return {0, r + 1, t + tokens, s + nano}`;

/** KEYS as ADMIT's; ARGV: tokens and nano-dollars to add (negative: given back), stream 0/1. Past windows stay closed. */
const SETTLE = `if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('HINCRBY', KEYS[1], 't', ARGV[1]) end
if redis.call('EXISTS', KEYS[2]) == 1 then redis.call('INCRBY', KEYS[2], ARGV[2]) end
if ARGV[3] == '1' and tonumber(redis.call('GET', KEYS[3]) or '0') > 0 then redis.call('DECR', KEYS[3]) end
return 1`;

const REFUSALS: readonly (Refusal | undefined)[] = [undefined, 'requests', 'tokens', 'budget', 'streams'];

/**
 * The counters in Redis, for several instances; see the file comment. The streams counter expires an hour after the
 * last stream opened, so that an instance that died with streams open does not hold them for ever.
 */
export class RedisKeyCounters implements KeyCounters {
  readonly #redis: Redis;
  readonly #prefix: string;

  constructor(options: RedisKeysOptions) {
    this.#redis = connect(options);
    this.#prefix = options.keyPrefix ?? 'ai4ts:keys:';
  }

  #keys(keyId: string, minute: number, periodStart: number): [string, string, string] {
    return [`${this.#prefix}rate:${keyId}:${minute}`, `${this.#prefix}spend:${keyId}:${periodStart}`, `${this.#prefix}streams:${keyId}`];
  }

  async admit(key: VirtualKey, ask: Ask, now: number): Promise<Admission> {
    const minute = minuteAt(now).start;
    const period = periodOf(key, now);
    const limits = limitsOf(key);
    const ttl = Number.isFinite(period.end) ? period.end - now + 60_000 : 0;
    const reply = await run(() =>
      this.#redis.eval(
        ADMIT,
        3,
        ...this.#keys(key.id, minute, period.start),
        limits.rpm ?? -1,
        limits.tpm ?? -1,
        limits.budgetNano ?? -1,
        limits.maxStreams ?? -1,
        ask.tokens,
        ask.nano,
        ask.stream ? 1 : 0,
        ttl,
      ),
    );
    if (!Array.isArray(reply) || reply.length !== 4) throw keysUnavailable();
    const [code, requests, tokens, spentNano] = reply.map(Number);
    const counts = { requests: requests ?? 0, tokens: tokens ?? 0, spentNano: spentNano ?? 0 };
    const refusal = REFUSALS[code ?? 0];
    if (refusal) return { admitted: false, refusal, counts };
    return { admitted: true, ticket: { keyId: key.id, minute, period, ...ask }, counts };
  }

  async settle(ticket: Ticket, used: Used): Promise<void> {
    await run(() =>
      this.#redis.eval(
        SETTLE,
        3,
        ...this.#keys(ticket.keyId, ticket.minute, ticket.period.start),
        used.tokens - ticket.tokens,
        used.nano - ticket.nano,
        ticket.stream ? 1 : 0,
      ),
    );
  }

  async spent(key: VirtualKey, now: number): Promise<number> {
    const [, spendKey] = this.#keys(key.id, minuteAt(now).start, periodOf(key, now).start);
    return Number((await run(() => this.#redis.get(spendKey))) ?? 0);
  }

  async ready(): Promise<boolean> {
    return (await this.#redis.ping().catch(() => '')) === 'PONG';
  }

  async close(): Promise<void> {
    await this.#redis.quit().catch(() => undefined);
  }
}

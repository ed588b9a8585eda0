/**
 * The response store in Redis, on the stream store's connection (so that its fail-fast rules and 503s hold here too):
 * each response a JSON string `<prefix>resp:<id>`, each of its items a key `<prefix>item:<owner>:<item id>` naming it, all
 * expiring `ttlMs` after the response's last write. Redis's `maxmemory` bounds them: a Redis that refuses a write is
 * the 503 `store_unavailable`, never a silent drop.
 */
import type { Redis } from 'ioredis';
import { itemIds, type ResponseStore, type StoredResponse, StoredResponseSchema } from './responses.js';

/** A command on the stream store's connection, its failures already the gateway's 503. */
export type RedisRun = <T>(command: (redis: Redis) => Promise<T>) => Promise<T>;

/** Reads a stored record back; undefined for anything malformed, so that nobody owns a response by a bad record. */
function recordOf(json: string | null): StoredResponse | undefined {
  if (json === null) return undefined;
  try {
    const parsed = StoredResponseSchema.safeParse(JSON.parse(json));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** See the file comment. */
export class RedisResponseStore implements ResponseStore {
  readonly #run: RedisRun;
  readonly #prefix: string;
  readonly #ttlMs: number;

  constructor(run: RedisRun, prefix: string, ttlMs: number) {
    this.#run = run;
    this.#prefix = prefix;
    this.#ttlMs = ttlMs;
  }

  #key(id: string): string {
    return `${this.#prefix}resp:${id}`;
  }

  /** Per owner (a hash), so that one credential's item ids never shadow another's. */
  #itemKey(owner: string, id: string): string {
    return `${this.#prefix}item:${owner}:${id}`;
  }

  async put(record: StoredResponse): Promise<void> {
    const ttl = String(this.#ttlMs);
    await this.#run(async (redis) => {
      const multi = redis.multi().set(this.#key(record.id), JSON.stringify(record), 'PX', ttl);
      for (const item of itemIds(record)) multi.set(this.#itemKey(record.owner, item), record.id, 'PX', ttl);
      const results = await multi.exec();
      const failed = results?.find(([error]) => error);
      if (failed?.[0]) throw failed[0];
    });
  }

  async get(id: string): Promise<StoredResponse | undefined> {
    return recordOf(await this.#run((redis) => redis.get(this.#key(id))));
  }

  async itemHolder(owner: string, id: string): Promise<StoredResponse | undefined> {
    const holder = await this.#run((redis) => redis.get(this.#itemKey(owner, id)));
    return holder === null ? undefined : this.get(holder);
  }

  async delete(id: string): Promise<boolean> {
    return (await this.#run((redis) => redis.del(this.#key(id)))) > 0;
  }
}

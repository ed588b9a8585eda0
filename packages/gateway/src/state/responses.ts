/**
 * The response store: every Responses answer the gateway gives with `store` not false, kept with the items it was
 * generated from, so that a next turn by `previous_response_id` or `item_reference` finds it (on any instance, with a
 * shared store), and so that `GET /v1/responses/{id}` reads it. The in-memory store here serves one process; the
 * Redis one (redis-responses.ts) shares the stream store's connection.
 */
import { z } from 'zod';
import { HttpError, invalid } from '../http/errors.js';

/** A Responses item (a message, a reasoning item, a function call or its output, ...) as JSON, with its `id`. */
export type StoredItem = Record<string, unknown> & { id: string };

/** One stored response. */
export interface StoredResponse {
  id: string;
  /** `ownerOf` the request that created it: only the same credential reads, continues, cancels or deletes it. */
  owner: string;
  /** The response object as the client last saw it (its `status` says whether it still runs). */
  response: Record<string, unknown>;
  /** The items it was generated from, in order: the previous responses' input and output, then its own input. */
  input: StoredItem[];
  /** The stream store's id of its events, when they were kept there (background and resumable answers). */
  streamId?: string | undefined;
}

/** A stored record as read back from a shared store. */
export const StoredResponseSchema: z.ZodType<StoredResponse> = z.object({
  id: z.string(),
  owner: z.string(),
  response: z.record(z.string(), z.unknown()),
  input: z.array(z.looseObject({ id: z.string() })),
  streamId: z.string().optional(),
});

/**
 * Where responses are kept. Every failure of the store itself is an {@link HttpError}: a 503 `store_unavailable`, or
 * the 507 `response_store_full`.
 */
export interface ResponseStore {
  /** Writes (or rewrites) a response and indexes its items by id; throws the 507 `response_store_full` rather than drop one. */
  put(record: StoredResponse): Promise<void>;
  /** The response; undefined when unknown, expired or deleted. */
  get(id: string): Promise<StoredResponse | undefined>;
  /**
   * The newest stored response of `owner` holding item `id` in its input or output; undefined when none. Indexed per
   * owner: a client naming its own items like another's items changes nothing for the other.
   */
  itemHolder(owner: string, id: string): Promise<StoredResponse | undefined>;
  /** Deletes a response; false when it was not there. */
  delete(id: string): Promise<boolean>;
}

/** Limits of a response store. */
export interface ResponseStoreOptions {
  /** Milliseconds a response is kept after its last write. Default 3600000 (1 hour). */
  ttlMs?: number;
}

/** Limits of the in-memory response store. */
export interface MemoryResponseStoreOptions extends ResponseStoreOptions {
  /** Characters of JSON kept in all responses together. Default 67108864 (64 MiB). */
  maxBytes?: number;
  /** Responses kept at once. Default 10000. */
  maxResponses?: number;
}

export const DEFAULT_RESPONSE_TTL_MS = 3_600_000;
export const DEFAULT_RESPONSE_MAX_BYTES = 64 * 1024 * 1024;
export const DEFAULT_MAX_RESPONSES = 10_000;

/** The 507 for a store at one of its bounds: a response is refused rather than another one dropped. */
export function storeFull(why: string): HttpError {
  return new HttpError(
    507,
    {
      message: `The gateway's response store ${why}; retry once older responses expire, or send store: false`,
      type: 'server_error',
      param: null,
      code: 'response_store_full',
    },
    { 'retry-after': '60' },
  );
}

/** The 404 for a response the store does not have, or that another credential created (not told apart). */
export function responseNotFound(id: string): HttpError {
  return new HttpError(404, invalid(`Response with id '${id}' not found.`, 'previous_response_id', 'response_not_found'));
}

/** The 404 for an `item_reference` to an item no response of this credential holds. */
export function itemNotFound(id: string): HttpError {
  return new HttpError(404, invalid(`Item with id '${id}' not found.`, 'input', 'item_not_found'));
}

/** The ids of every item a response holds: its input's and its output's. */
export function itemIds(record: StoredResponse): string[] {
  const output = Array.isArray(record.response.output) ? record.response.output : [];
  const ids = output.map((item: unknown) => (typeof item === 'object' && item !== null && 'id' in item ? item.id : undefined));
  return [...record.input.map((item) => item.id), ...ids.filter((id): id is string => typeof id === 'string')];
}

interface Kept {
  record: StoredResponse;
  bytes: number;
  expires: number;
}

/**
 * Responses in this process's memory, bounded by `maxResponses` and `maxBytes` in all and expired `ttlMs` after their
 * last write. Past a bound a new response is refused with the 507 (expired ones are let go first); none is evicted.
 */
export class MemoryResponseStore implements ResponseStore {
  readonly #responses = new Map<string, Kept>();
  /** `<owner>:<item id>` to the id of the newest response of that owner holding the item. */
  readonly #items = new Map<string, string>();
  readonly #ttlMs: number;
  readonly #maxBytes: number;
  readonly #maxResponses: number;
  #bytes = 0;

  constructor(options: MemoryResponseStoreOptions = {}) {
    this.#ttlMs = options.ttlMs ?? DEFAULT_RESPONSE_TTL_MS;
    this.#maxBytes = options.maxBytes ?? DEFAULT_RESPONSE_MAX_BYTES;
    this.#maxResponses = options.maxResponses ?? DEFAULT_MAX_RESPONSES;
  }

  /** Responses held now. */
  get size(): number {
    return this.#responses.size;
  }

  async put(record: StoredResponse): Promise<void> {
    const bytes = JSON.stringify(record).length;
    const previous = this.#responses.get(record.id);
    const added = bytes - (previous?.bytes ?? 0);
    const count = previous ? 0 : 1;
    if (!this.#fits(count, added)) {
      this.#expire();
      if (!this.#fits(count, added))
        throw storeFull(
          this.#responses.size + count > this.#maxResponses
            ? `holds its maximum of ${this.#maxResponses} responses`
            : `holds its maximum of ${this.#maxBytes} characters`,
        );
    }
    // Re-inserted at the end: the map stays in order of last write, so the oldest expire first.
    this.#responses.delete(record.id);
    this.#responses.set(record.id, { record, bytes, expires: Date.now() + this.#ttlMs });
    this.#bytes += added;
    for (const id of itemIds(record)) this.#items.set(`${record.owner}:${id}`, record.id);
  }

  async get(id: string): Promise<StoredResponse | undefined> {
    const kept = this.#responses.get(id);
    if (kept && kept.expires <= Date.now()) {
      this.#remove(id, kept);
      return undefined;
    }
    return kept?.record;
  }

  async itemHolder(owner: string, id: string): Promise<StoredResponse | undefined> {
    const holder = this.#items.get(`${owner}:${id}`);
    return holder === undefined ? undefined : this.get(holder);
  }

  async delete(id: string): Promise<boolean> {
    const kept = this.#responses.get(id);
    if (kept) this.#remove(id, kept);
    return kept !== undefined && kept.expires > Date.now();
  }

  #fits(count: number, bytes: number): boolean {
    return this.#responses.size + count <= this.#maxResponses && this.#bytes + bytes <= this.#maxBytes;
  }

  /** Lets go of every expired response: they are in order of last write, so the first live one ends the sweep. */
  #expire(): void {
    const now = Date.now();
    for (const [id, kept] of this.#responses) {
      if (kept.expires > now) return;
      this.#remove(id, kept);
    }
  }

  #remove(id: string, kept: Kept): void {
    this.#responses.delete(id);
    this.#bytes -= kept.bytes;
    for (const item of itemIds(kept.record)) {
      const key = `${kept.record.owner}:${item}`;
      if (this.#items.get(key) === id) this.#items.delete(key);
    }
  }
}

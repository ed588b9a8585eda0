/**
 * Where virtual keys live: a JSON file for one instance ({@link FileKeyStore}), Redis for several (`RedisKeyStore` in
 * `@ai4ts/gateway/redis`). Both keep only hashes: a stolen file or dump holds no usable key.
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { parseDocument } from 'yaml';
import { z } from 'zod';
import { closestIssue, lineAndColumn, position } from '../upstreams/routes-file.js';
import { type VirtualKey, VirtualKeySchema } from './key.js';

/** The keys, by hash (each request), by id (the admin API) or all (a list). */
export interface KeyStore {
  /** The key with this hash, revoked and expired ones included (the caller refuses them with a 401). */
  find(hash: string): Promise<VirtualKey | undefined>;
  get(id: string): Promise<VirtualKey | undefined>;
  list(): Promise<VirtualKey[]>;
  /** Creates the key, or replaces the one with its id (an update, a revocation). */
  put(key: VirtualKey): Promise<void>;
  /** Whether the store can be read (`/readyz`). */
  ready(): Promise<boolean>;
  close(): Promise<void>;
}

const KeysFile = z.strictObject({ keys: z.array(VirtualKeySchema) });

/**
 * Reads a keys file's text: `{"keys": [...]}`. Throws an Error naming the line and the field at fault, and never a
 * value of the file (a hash is not a key, but the message has no need of it).
 */
export function readKeys(text: string): VirtualKey[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const message = (error instanceof Error ? error.message : String(error)).replace(/\s+/g, ' ');
    const offset = Number(/at position (\d+)/.exec(message)?.[1] ?? parseDocument(text).errors[0]?.pos[0] ?? Number.NaN);
    throw new Error(`the keys file is not JSON${Number.isNaN(offset) ? '' : ` (${lineAndColumn(text, offset)})`}`);
  }
  const parsed = KeysFile.safeParse(value);
  if (!parsed.success) {
    const issue = closestIssue(parsed.error.issues);
    const path = issue?.path ?? [];
    const at = position(parseDocument(text), text, path);
    throw new Error(`the keys file: ${path.map(String).join('.') || 'root'}${at ? ` (${at})` : ''}: ${issue?.message ?? 'invalid'}`);
  }
  const ids = new Set<string>();
  for (const key of parsed.data.keys) {
    if (ids.has(key.id)) throw new Error(`the keys file: the id ${key.id} is there twice`);
    ids.add(key.id);
  }
  return parsed.data.keys;
}

/**
 * The keys in one JSON file, for one instance. Read at once (a bad file throws), and again by {@link reload}: on
 * SIGHUP and on change when it is given to the gateway's `Reloaders` (`keysReloader`, reload.ts), as the routes file
 * is; a bad file then keeps the keys read before. Written whole to a temporary file and renamed over it, so that a
 * reader never sees half a file.
 */
export class FileKeyStore implements KeyStore {
  readonly #path: string;
  #byHash = new Map<string, VirtualKey>();
  #byId = new Map<string, VirtualKey>();

  /** Reads `path` (a missing file is no keys yet); throws on a bad file. */
  constructor(path: string) {
    this.#path = path;
    this.#take(this.#read());
  }

  /** The file it reads. */
  get path(): string {
    return this.#path;
  }

  #read(): VirtualKey[] {
    let text: string;
    try {
      text = readFileSync(this.#path, 'utf8');
    } catch (error) {
      if (error instanceof Error && 'code' in error && error.code === 'ENOENT') return [];
      throw error;
    }
    return readKeys(text);
  }

  #take(keys: readonly VirtualKey[]): void {
    this.#byHash = new Map(keys.map((key) => [key.hash, key]));
    this.#byId = new Map(keys.map((key) => [key.id, key]));
  }

  /** Rereads the file; rejects with its fault (its line and field) when it is bad, the keys in use kept. */
  async reload(): Promise<void> {
    this.#take(this.#read());
  }

  async find(hash: string): Promise<VirtualKey | undefined> {
    return this.#byHash.get(hash);
  }

  async get(id: string): Promise<VirtualKey | undefined> {
    return this.#byId.get(id);
  }

  async list(): Promise<VirtualKey[]> {
    return [...this.#byId.values()];
  }

  async put(key: VirtualKey): Promise<void> {
    // Reread first: another writer (the CLI beside a running gateway) may have added keys since.
    const keys = new Map(this.#read().map((stored) => [stored.id, stored]));
    keys.set(key.id, key);
    const temporary = `${this.#path}.${process.pid}.tmp`;
    writeFileSync(temporary, `${JSON.stringify({ keys: [...keys.values()] }, null, 2)}\n`, { mode: 0o600 });
    renameSync(temporary, this.#path);
    this.#take([...keys.values()]);
  }

  async ready(): Promise<boolean> {
    return true;
  }

  async close(): Promise<void> {}
}

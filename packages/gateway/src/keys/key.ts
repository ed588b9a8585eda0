/**
 * Virtual keys: keys the gateway issues to its clients, each with its own models, limits and budget. A key is shown
 * once, when it is created; what is kept is its SHA-256 (with a purpose prefix), an id, and a short prefix that is
 * not secret (the first characters of the key, enough to tell keys apart in a list).
 */
import { z } from 'zod';
import { globPattern } from '../upstreams/router.js';

/** How every virtual key starts: a secret scanner, and a person, can tell it from a provider's key. */
export const KEY_PREFIX = 'ai4ts-vk-';

/** Characters of the random part shown in lists: 4 base64url characters, 24 of the key's 256 random bits. */
const SHOWN = 4;

/** The period a budget covers; each starts at 00:00 UTC (a week on Monday, a month on its 1st). */
export type BudgetPeriod = 'day' | 'week' | 'month';

const Budget = z.strictObject({ usd: z.number().positive(), period: z.enum(['day', 'week', 'month']) });

/** Each setting's check, shared by creation and update. */
const settings = {
  name: z.string().min(1).max(128),
  /** Model patterns (`gpt-*`); every model when empty. */
  models: z.array(z.string().min(1)),
  budget: Budget,
  /** Requests per minute. */
  rpm: z.number().int().positive(),
  /** Input plus output tokens per minute. */
  tpm: z.number().int().positive(),
  /** Streams of this key served at once. */
  maxStreams: z.number().int().positive(),
  /** ISO time after which the key is refused. */
  expiresAt: z.iso.datetime(),
  /** Who the key is for (`team`, `user`, ...): shown in lists, never used to decide. */
  metadata: z.record(z.string(), z.string()),
};

/** What a key may do, as an operator sets it (`keys create`, `POST /admin/keys`). */
export const KeySettingsSchema = z.strictObject({
  ...settings,
  models: settings.models.default([]),
  budget: settings.budget.optional(),
  rpm: settings.rpm.optional(),
  tpm: settings.tpm.optional(),
  maxStreams: settings.maxStreams.optional(),
  expiresAt: settings.expiresAt.optional(),
  metadata: settings.metadata.default({}),
});

/** A change of a key's settings (`keys update`, `PATCH /admin/keys/{id}`): `null` removes a limit. */
export const KeyUpdateSchema = z.strictObject({
  name: settings.name.optional(),
  models: settings.models.optional(),
  metadata: settings.metadata.optional(),
  budget: settings.budget.nullable().optional(),
  rpm: settings.rpm.nullable().optional(),
  tpm: settings.tpm.nullable().optional(),
  maxStreams: settings.maxStreams.nullable().optional(),
  expiresAt: settings.expiresAt.nullable().optional(),
});

export type KeyUpdate = z.infer<typeof KeyUpdateSchema>;

/** The key with `update` applied; `null` removes a setting. */
export function updated(key: VirtualKey, update: KeyUpdate): VirtualKey {
  const { budget, rpm, tpm, maxStreams, expiresAt, ...always } = update;
  const next: VirtualKey = { ...key, ...always };
  const removable = { rpm, tpm, maxStreams };
  if (budget === null) delete next.budget;
  else if (budget !== undefined) next.budget = budget;
  for (const field of ['rpm', 'tpm', 'maxStreams'] as const) {
    const value = removable[field];
    if (value === null) delete next[field];
    else if (value !== undefined) next[field] = value;
  }
  if (expiresAt === null) delete next.expiresAt;
  else if (expiresAt !== undefined) next.expiresAt = expiresAt;
  return next;
}

/** A key as it is stored: its settings, its hash and the non-secret parts that name it. */
export const VirtualKeySchema = KeySettingsSchema.extend({
  id: z.string().regex(/^key_[0-9a-f]{16}$/),
  /** SHA-256 (hex) of the purpose prefix and the key. */
  hash: z.string().regex(/^[0-9a-f]{64}$/),
  /** The key's first characters, `ai4ts-vk-AbCd`: not enough to use it. */
  prefix: z.string(),
  createdAt: z.iso.datetime(),
  revokedAt: z.iso.datetime().optional(),
});

export type KeySettings = z.infer<typeof KeySettingsSchema>;
export type VirtualKey = z.infer<typeof VirtualKeySchema>;

/** Domain separation from the owner hash (http/owner.ts): the same token hashed for another purpose differs. */
const PURPOSE = 'ai4ts-gateway-key:';

/** The stored hash of a key. */
export async function hashKey(key: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(PURPOSE + key));
  return Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, '0')).join('');
}

function base64url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes))
    .replaceAll('+', '-')
    .replaceAll('/', '_')
    .replace(/=+$/, '');
}

/** A new key with its record: the key is returned once and kept nowhere. */
export async function issueKey(settings: KeySettings, now = new Date()): Promise<{ key: string; record: VirtualKey }> {
  const key = KEY_PREFIX + base64url(crypto.getRandomValues(new Uint8Array(32)));
  const id = `key_${Array.from(crypto.getRandomValues(new Uint8Array(8)), (byte) => byte.toString(16).padStart(2, '0')).join('')}`;
  const record: VirtualKey = {
    ...settings,
    id,
    hash: await hashKey(key),
    prefix: key.slice(0, KEY_PREFIX.length + SHOWN),
    createdAt: now.toISOString(),
  };
  return { key, record };
}

/** Whether a token looks like a virtual key (the static proxy token is checked otherwise). */
export function isVirtualKey(token: string): boolean {
  return token.startsWith(KEY_PREFIX);
}

/** Whether the key may call `model`: any model when it lists none, else one of its patterns. */
export function allowsModel(key: VirtualKey, model: string): boolean {
  return key.models.length === 0 || key.models.some((pattern) => globPattern(pattern).test(model));
}

const UNIT_MS: Readonly<Record<string, number>> = { d: 86_400_000, h: 3_600_000, m: 60_000 };

/** A duration like `30d`, `12h`, `90m` in milliseconds; undefined when it is not one. */
export function durationMs(text: string): number | undefined {
  const match = /^(\d+)([dhm])$/.exec(text);
  const unit = match && UNIT_MS[match[2] ?? ''];
  return unit ? Number(match[1]) * unit : undefined;
}

/** What a list shows of a key: everything but its hash. */
export function publicView(key: VirtualKey): Omit<VirtualKey, 'hash'> {
  const { hash: _hash, ...shown } = key;
  return shown;
}

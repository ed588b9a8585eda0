/**
 * `ai4ts-gateway keys ...`: virtual keys from the command line, on the store a gateway reads (`--keys FILE` or
 * `--keys redis://...`, else AI4TS_KEYS). `create` prints the key once, on stdout alone; nothing else ever prints it.
 */
import { parseArgs } from 'node:util';
import type { z } from 'zod';
import { durationMs, issueKey, type KeySettings, KeySettingsSchema, type KeyUpdate, KeyUpdateSchema, publicView, updated } from './key.js';
import { type KeyCounters, spendOf } from './limits.js';
import { FileKeyStore, type KeyStore } from './store.js';

export const KEYS_USAGE = `Usage: ai4ts-gateway keys create --name N [--models 'gpt-*,claude-*'] [--budget USD [--period day|week|month]]
                        [--rpm N] [--tpm N] [--max-streams N] [--expires 30d] [--team T] [--user U]
       ai4ts-gateway keys list | get ID | revoke ID | spend ID
       ai4ts-gateway keys update ID [the create flags]
  each with --keys FILE|redis://URL (default: the AI4TS_KEYS variable), the store the gateway reads`;

/** Thrown for a bad command line: printed with the usage, exit status 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

const OPTIONS = {
  keys: { type: 'string' },
  name: { type: 'string' },
  models: { type: 'string' },
  budget: { type: 'string' },
  period: { type: 'string' },
  rpm: { type: 'string' },
  tpm: { type: 'string' },
  'max-streams': { type: 'string' },
  expires: { type: 'string' },
  team: { type: 'string' },
  user: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

type Flags = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>['values'];

/**
 * The keys at `location`: a file, or Redis with its counters. The command line gets counters only from Redis: a file
 * store's are in the running gateway's memory.
 */
export async function openKeys(location: string | undefined): Promise<{ store: KeyStore; counters?: KeyCounters }> {
  if (location === undefined) throw new UsageError('give --keys FILE or --keys redis://URL (or set AI4TS_KEYS)');
  if (!/^rediss?:\/\//.test(location)) return { store: new FileKeyStore(location) };
  const redis = await import('./redis.js').catch(() => {
    throw new UsageError('--keys redis://... needs the ioredis package, an optional peer dependency: npm install ioredis');
  });
  return { store: new redis.RedisKeyStore({ redis: location }), counters: new redis.RedisKeyCounters({ redis: location }) };
}

function positive(flag: string, raw: string | undefined, integer: boolean): number | undefined {
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (!(value > 0) || (integer && !Number.isInteger(value))) throw new UsageError(`--${flag} must be a positive ${integer ? 'integer' : 'number'}: ${raw}`);
  return value;
}

/** The settings the flags give (only those given). */
function settingsOf(flags: Flags): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (flags.name !== undefined) out.name = flags.name;
  if (flags.models !== undefined) out.models = flags.models.split(',').map((model) => model.trim()).filter(Boolean);
  const budget = positive('budget', flags.budget, false);
  if (budget !== undefined) out.budget = { usd: budget, period: flags.period ?? 'month' };
  else if (flags.period !== undefined) throw new UsageError('--period needs --budget');
  for (const [flag, field] of [
    ['rpm', 'rpm'],
    ['tpm', 'tpm'],
    ['max-streams', 'maxStreams'],
  ] as const) {
    const value = positive(flag, flags[flag], true);
    if (value !== undefined) out[field] = value;
  }
  if (flags.expires !== undefined) {
    const ms = durationMs(flags.expires);
    if (ms === undefined) throw new UsageError(`--expires must be like 30d, 12h or 90m: ${flags.expires}`);
    out.expiresAt = new Date(Date.now() + ms).toISOString();
  }
  const metadata = { ...(flags.team && { team: flags.team }), ...(flags.user && { user: flags.user }) };
  if (Object.keys(metadata).length) out.metadata = metadata;
  return out;
}

function validated<T>(schema: z.ZodType<T>, value: unknown): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new UsageError(`${issue?.path.map(String).join('.') || 'the key'}: ${issue?.message ?? 'invalid'}`);
}

/**
 * Runs `keys <command> ...`; resolves to the exit status. Writes results to `out` (stdout) and notes to `err`.
 */
export async function keysCommand(
  args: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  out: (text: string) => void,
  err: (text: string) => void,
): Promise<number> {
  let parsed: { values: Flags; positionals: string[] };
  try {
    parsed = parseArgs({ args: [...args], options: OPTIONS, allowPositionals: true });
  } catch (error) {
    err(`ai4ts-gateway keys: ${error instanceof Error ? error.message : String(error)}\n${KEYS_USAGE}\n`);
    return 2;
  }
  if (parsed.values.help) {
    out(`${KEYS_USAGE}\n`);
    return 0;
  }
  const [command, id, ...extra] = parsed.positionals;
  let opened: { store: KeyStore; counters?: KeyCounters } | undefined;
  try {
    if (extra.length) throw new UsageError(`unexpected ${extra.join(' ')}`);
    opened = await openKeys(parsed.values.keys ?? env.AI4TS_KEYS);
    const { store, counters } = opened;
    const one = async () => {
      if (id === undefined) throw new UsageError(`keys ${command} needs a key id`);
      const key = await store.get(id);
      if (!key) throw new Error(`no key ${id}`);
      return key;
    };
    switch (command) {
      case 'create': {
        const settings: KeySettings = validated(KeySettingsSchema, settingsOf(parsed.values));
        const { key, record } = await issueKey(settings);
        await store.put(record);
        err(`created ${record.id} (${record.name}); the key below is shown this once\n`);
        out(`${key}\n`);
        return 0;
      }
      case 'list':
        out(`${JSON.stringify((await store.list()).map(publicView), null, 2)}\n`);
        return 0;
      case 'get':
        out(`${JSON.stringify(publicView(await one()), null, 2)}\n`);
        return 0;
      case 'update': {
        const update: KeyUpdate = validated(KeyUpdateSchema, settingsOf(parsed.values));
        const next = updated(await one(), update);
        await store.put(next);
        out(`${JSON.stringify(publicView(next), null, 2)}\n`);
        return 0;
      }
      case 'revoke': {
        const key = await one();
        const revoked = { ...key, revokedAt: key.revokedAt ?? new Date().toISOString() };
        await store.put(revoked);
        err(`revoked ${key.id} (${key.name})\n`);
        return 0;
      }
      case 'spend': {
        const key = await one();
        if (!counters)
          throw new Error('a file store keeps no spend: the gateway counts it in its memory; ask GET /admin/keys/{id}/spend');
        out(`${JSON.stringify(await spendOf(counters, key), null, 2)}\n`);
        return 0;
      }
      default:
        throw new UsageError(command === undefined ? 'give a command' : `unknown command ${command}`);
    }
  } catch (error) {
    const usage = error instanceof UsageError ? `\n${KEYS_USAGE}` : '';
    err(`ai4ts-gateway keys: ${error instanceof Error ? error.message : String(error)}${usage}\n`);
    return 2;
  } finally {
    await opened?.store.close();
    await opened?.counters?.close();
  }
}

/** Environment access that stays browser-safe: `process` is read through `globalThis` and may be absent. */

type Env = Record<string, string | undefined>;

/** The first non-empty value among the named environment variables, or undefined (always in a browser). */
export function readEnv(names: readonly string[]): string | undefined {
  const env = (globalThis as { process?: { env?: Env } }).process?.env;
  if (!env) return undefined;
  for (const name of names) {
    const value = env[name]?.trim();
    if (value) return value;
  }
  return undefined;
}

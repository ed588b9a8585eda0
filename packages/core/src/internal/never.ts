/**
 * The `default` of a switch meant to cover a union: once every member has its case, `value` is `never`, so a new
 * member without one fails to compile there instead of being skipped silently.
 */

/** Throws for a value no case covered; unreachable while the types hold. */
export function assertNever(value: never): never {
  throw new TypeError(`No case for ${describe(value)}`);
}

/** The value as JSON when it has one (a circular or bigint value has none), else as a string. */
function describe(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

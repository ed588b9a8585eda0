/** The monotonicity rule of partial JSON values, as tests of partial parsing and of `object` events check it. */
import { expect } from 'vitest';

/**
 * Whether `earlier` holds nothing `later` does not: strings only grow, numbers, booleans and null are final when
 * shown (no `44` on the way to `443037`), arrays and objects only gain entries, each of them within its final value.
 * The monotonicity rule of partial JSON values, shared by the parser's tests and the protocols' `object` events.
 */
export function within(earlier: unknown, later: unknown): boolean {
  if (typeof earlier === 'string') return typeof later === 'string' && later.startsWith(earlier);
  if (Array.isArray(earlier)) {
    return Array.isArray(later) && earlier.length <= later.length && earlier.every((item, i) => within(item, later[i]));
  }
  if (typeof earlier === 'object' && earlier !== null) {
    if (typeof later !== 'object' || later === null || Array.isArray(later)) return false;
    return Object.entries(earlier).every(([key, value]) => Object.hasOwn(later, key) && within(value, Reflect.get(later, key)));
  }
  return Object.is(earlier, later);
}

/** Each partial within the next one and within the final value. */
export function expectMonotone(partials: readonly unknown[], final: unknown): void {
  for (const [i, partial] of partials.entries()) {
    expect(within(partial, final), `partial ${i} ${JSON.stringify(partial)}`).toBe(true);
    if (i > 0) expect(within(partials[i - 1], partial), `partial ${i - 1} -> ${i}`).toBe(true);
  }
}

import { inspect } from 'node:util';
import { expect } from 'vitest';

/** Asserts a secret appears nowhere in an error: message, String(), JSON, stack, or anything it holds (causes included). */
export function expectNoSecret(error: unknown, secret: string): void {
  expect(error).toBeInstanceOf(Error);
  const views = [
    String(error),
    JSON.stringify(error),
    (error as Error).stack ?? '',
    inspect(error, { depth: 20, showHidden: true }),
  ];
  for (let cause = (error as Error).cause; cause !== undefined; cause = (cause as Error).cause) {
    views.push(String(cause), inspect(cause, { depth: 20, showHidden: true }));
    if (!(cause instanceof Error)) break;
  }
  for (const view of views) expect(view).not.toContain(secret);
}

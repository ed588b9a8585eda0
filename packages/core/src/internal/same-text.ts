/**
 * Token comparison for servers that check a bearer token (the gateway, `serveMcp`): an early exit at the first
 * differing character would tell an attacker, by timing, how much of a guess was right.
 */

/** Whether `a` and `b` are equal, in time that depends only on their lengths. */
export function sameText(a: string, b: string): boolean {
  let diff = a.length ^ b.length;
  for (let i = 0; i < Math.max(a.length, b.length); i++) diff |= (a.charCodeAt(i) | 0) ^ (b.charCodeAt(i) | 0);
  return diff === 0;
}

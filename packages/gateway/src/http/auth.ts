/**
 * The bearer check on clients. The tokens live in a `#private` field, so that the check can be logged or inspected
 * without showing them, and a refusal names neither the token sent nor the ones expected.
 */
import { HttpError, invalid } from './errors.js';

/** The bearer tokens clients must send, or none (an open gateway). */
export class BearerAuth {
  readonly #tokens: readonly string[] | undefined;

  constructor(auth: string | readonly string[] | undefined) {
    this.#tokens = auth === undefined ? undefined : typeof auth === 'string' ? [auth] : [...auth];
  }

  /** The tokens, for scrubbing them from anything the gateway sends. */
  get secrets(): readonly string[] {
    return this.#tokens ?? [];
  }

  /**
   * Checks the client's token: the `Authorization` bearer, else `x-api-key` (Anthropic's clients). Throws a 401 that
   * names the header it read but neither the token sent nor the ones expected; every token is compared in full, in
   * time that depends only on the lengths.
   */
  check(authorization: string | undefined, apiKey?: string | undefined): void {
    if (!this.#tokens) return;
    const byApiKey = authorization === undefined && apiKey !== undefined;
    const token = byApiKey ? apiKey.trim() : (/^Bearer\s+(.+)$/i.exec(authorization ?? '')?.[1]?.trim() ?? '');
    let accepted = false;
    for (const expected of this.#tokens) accepted = sameText(expected, token) || accepted;
    if (!accepted)
      throw new HttpError(
        401,
        invalid(
          byApiKey ? 'Incorrect API key in the x-api-key header' : 'Incorrect or missing bearer token in the Authorization header',
          null,
          'invalid_api_key',
        ),
        { 'www-authenticate': 'Bearer' },
      );
  }
}

/** Compares two tokens in time that depends only on their lengths. */
function sameText(a: string, b: string): boolean {
  let diff = a.length ^ b.length;
  for (let i = 0; i < Math.max(a.length, b.length); i++) diff |= (a.charCodeAt(i) | 0) ^ (b.charCodeAt(i) | 0);
  return diff === 0;
}

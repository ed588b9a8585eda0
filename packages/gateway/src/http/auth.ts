/**
 * The bearer check on clients. The tokens live in a `#private` field, so that the check can be logged or inspected
 * without showing them, and a refusal names neither the token sent nor the ones expected.
 */
import { sameText } from '@ai4ts/core/internal';
import { HttpError, invalid } from './errors.js';

/** A key a client sent outside the `Authorization` header, and where it was (for the refusal's message). */
export interface ApiKey {
  key: string;
  source: string;
}

/** The token a client presents: the `Authorization` bearer, else the key sent another way; `''` for none. */
export function tokenOf(authorization: string | undefined, apiKey: ApiKey | undefined): string {
  if (authorization === undefined && apiKey !== undefined) return apiKey.key.trim();
  return /^Bearer\s+(.+)$/i.exec(authorization ?? '')?.[1]?.trim() ?? '';
}

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
   * Checks the client's token: the `Authorization` bearer, else the key sent another way (`x-api-key` from
   * Anthropic's clients, `x-goog-api-key` or `key=` from Gemini's). Throws a 401 that names where it read the token
   * but neither the token sent nor the ones expected; every token is compared in full, in time that depends only on
   * the lengths.
   */
  check(authorization: string | undefined, apiKey?: ApiKey | undefined): void {
    if (!this.#tokens) return;
    const byApiKey = authorization === undefined && apiKey !== undefined;
    const token = tokenOf(authorization, apiKey);
    let accepted = false;
    for (const expected of this.#tokens) accepted = sameText(expected, token) || accepted;
    if (!accepted)
      throw new HttpError(
        401,
        invalid(
          byApiKey ? `Incorrect API key in ${apiKey.source}` : 'Incorrect or missing bearer token in the Authorization header',
          null,
          'invalid_api_key',
        ),
        { 'www-authenticate': 'Bearer' },
      );
  }
}


/**
 * Access tokens that expire (OAuth2: Google Cloud's Vertex AI, Microsoft Entra ID), as opposed to a static API key.
 * The Transport asks an {@link AccessTokenSource} for one, keeps it until shortly before it expires, shares one fetch
 * between the requests that need it at once, and asks again once when the server refuses it (401).
 *
 * A token is a secret like an API key: it is redacted from errors, logs and server data by the same rules, and an
 * error about getting one never quotes it.
 */
import { Ai4tsError, AuthenticationError } from '../errors.js';
import { describeError, redact } from '../internal/fail.js';

/** An access token and when it stops working. */
export interface AccessToken {
  token: string;
  /** When the token expires, in ms since the epoch (`Date.now()`'s clock). Without it, it is kept until a 401. */
  expiresAt?: number;
}

/**
 * Gets an access token, sent as `Authorization: Bearer TOKEN`. `refresh` is true when the server refused the last
 * one (401): return a new token, not one the source cached itself. A throw fails the request with an
 * {@link AuthenticationError} whose `cause` is the throw.
 */
export type AccessTokenSource = (request: { refresh: boolean }) => string | AccessToken | Promise<string | AccessToken>;

/** A token is asked for again this long before it expires, so no request leaves with one about to lapse. */
export const TOKEN_REFRESH_MARGIN_MS = 60_000;

/** One source's token, cached: see the module comment. */
export class AccessTokenCache {
  readonly #source: AccessTokenSource;
  #current: AccessToken | undefined;
  #pending: Promise<string> | undefined;

  constructor(source: AccessTokenSource) {
    this.#source = source;
  }

  /** The last token the source gave, for redaction; undefined before the first. Not for display. */
  get token(): string | undefined {
    return this.#current?.token;
  }

  /** The token to send: the cached one while it is fresh, else one new fetch shared by every caller waiting for it. */
  get(): Promise<string> {
    const current = this.#current;
    if (current && (current.expiresAt === undefined || current.expiresAt - TOKEN_REFRESH_MARGIN_MS > Date.now())) {
      return Promise.resolve(current.token);
    }
    return this.#fetch(false);
  }

  /**
   * A new token after the server refused `refused`. Requests refused with the same token at once share one fetch;
   * one refused with a token already replaced gets the replacement.
   */
  refresh(refused: string): Promise<string> {
    if (this.#pending) return this.#pending;
    if (this.#current && this.#current.token !== refused) return Promise.resolve(this.#current.token);
    this.#current = undefined;
    return this.#fetch(true);
  }

  #fetch(refresh: boolean): Promise<string> {
    this.#pending ??= this.#ask(refresh).finally(() => {
      this.#pending = undefined;
    });
    return this.#pending;
  }

  async #ask(refresh: boolean): Promise<string> {
    let answer: string | AccessToken;
    try {
      answer = await this.#source({ refresh });
    } catch (error) {
      if (error instanceof Ai4tsError) throw error;
      const message = redact(`Could not get an access token: ${describeError(error)}`, [this.#current?.token]);
      throw new AuthenticationError(message, { cause: error });
    }
    const token = typeof answer === 'string' ? { token: answer } : answer;
    if (typeof token.token !== 'string' || token.token === '') {
      throw new AuthenticationError('The access token source gave no token');
    }
    if (token.expiresAt !== undefined && !Number.isFinite(token.expiresAt)) {
      throw new AuthenticationError('The access token source gave an expiresAt that is not a time in ms');
    }
    this.#current = token.expiresAt === undefined ? { token: token.token } : { token: token.token, expiresAt: token.expiresAt };
    return token.token;
  }
}

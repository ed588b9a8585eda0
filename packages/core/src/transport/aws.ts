/**
 * AWS credentials and SigV4 signing (through `aws4fetch`, loaded on the first signed request, so an app that never
 * reaches AWS never runs it).
 */
import { Ai4tsError, AuthenticationError } from '../errors.js';
import { describeError, redact } from '../internal/fail.js';
import { readEnv } from './env.js';
import type { RequestSigner, SignableRequest } from './sign.js';

/** AWS credentials: long-lived keys, or temporary ones (STS, SSO, an assumed role) with their session token. */
export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  /** When temporary credentials stop working: a Date or ms since the epoch. Without it they are kept for good. */
  expiration?: Date | number;
}

/**
 * Where credentials come from: fixed ones, or a function called when none are cached or they are about to expire
 * (temporary credentials from `@aws-sdk/credential-providers`' `fromNodeProviderChain()`, for one). Without either,
 * `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` and `AWS_SESSION_TOKEN` are read at request time.
 */
export type AwsCredentialSource = AwsCredentials | (() => AwsCredentials | Promise<AwsCredentials>);

/** Temporary credentials are asked for again this long before they expire. */
const EXPIRY_MARGIN_MS = 60_000;

/** Signs with SigV4 for one service and region; the credentials cached until shortly before they expire. */
export class AwsSigner implements RequestSigner {
  readonly #service: string;
  readonly #region: string;
  readonly #source: AwsCredentialSource | undefined;
  #current: AwsCredentials | undefined;
  #pending: Promise<AwsCredentials> | undefined;
  /** aws4fetch's derived signing keys, by day: one HMAC chain a day instead of one a request. */
  readonly #keys = new Map<string, ArrayBuffer>();

  constructor(options: { service: string; region: string; credentials?: AwsCredentialSource | undefined }) {
    this.#service = options.service;
    this.#region = options.region;
    this.#source = options.credentials;
  }

  secrets(): readonly string[] {
    const source = this.#source;
    const current = this.#current ?? (source === undefined ? this.#fromEnv() : typeof source === 'function' ? undefined : source);
    if (!current) return [];
    return [current.secretAccessKey, current.sessionToken, current.accessKeyId].filter(
      (secret): secret is string => secret !== undefined && secret !== '',
    );
  }

  /** `datetime` (`20150830T123600Z`) is for the published test vectors; requests are signed at the current time. */
  async sign(request: SignableRequest, datetime?: string): Promise<Headers> {
    const credentials = await this.#credentials();
    const { AwsV4Signer } = await loadAws4fetch();
    const signer = new AwsV4Signer({
      method: request.method,
      url: request.url.href,
      headers: request.headers,
      body: request.body,
      accessKeyId: credentials.accessKeyId,
      secretAccessKey: credentials.secretAccessKey,
      sessionToken: credentials.sessionToken,
      service: this.#service,
      region: this.#region,
      cache: this.#keys,
      datetime,
    });
    return (await signer.sign()).headers;
  }

  #credentials(): Promise<AwsCredentials> {
    const current = this.#current;
    if (current && !expiresSoon(current)) return Promise.resolve(current);
    const source = this.#source;
    if (source === undefined) {
      const env = this.#fromEnv();
      if (!env) {
        return Promise.reject(
          new AuthenticationError(
            'Missing AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN), or pass credentials',
          ),
        );
      }
      return Promise.resolve(env);
    }
    if (typeof source !== 'function') return Promise.resolve(checked(source));
    this.#pending ??= this.#ask(source).finally(() => {
      this.#pending = undefined;
    });
    return this.#pending;
  }

  async #ask(source: () => AwsCredentials | Promise<AwsCredentials>): Promise<AwsCredentials> {
    let answer: AwsCredentials;
    try {
      answer = await source();
    } catch (error) {
      if (error instanceof Ai4tsError) throw error;
      throw new AuthenticationError(redact(`Could not get AWS credentials: ${describeError(error)}`, this.secrets()), {
        cause: error,
      });
    }
    this.#current = checked(answer);
    return this.#current;
  }

  /** The environment's keys, read now (the env may be set after the client is made). */
  #fromEnv(): AwsCredentials | undefined {
    const accessKeyId = readEnv(['AWS_ACCESS_KEY_ID']);
    const secretAccessKey = readEnv(['AWS_SECRET_ACCESS_KEY']);
    if (!accessKeyId || !secretAccessKey) return undefined;
    const sessionToken = readEnv(['AWS_SESSION_TOKEN']);
    return sessionToken ? { accessKeyId, secretAccessKey, sessionToken } : { accessKeyId, secretAccessKey };
  }
}

function expiresSoon(credentials: AwsCredentials): boolean {
  const { expiration } = credentials;
  if (expiration === undefined) return false;
  return Number(expiration) - EXPIRY_MARGIN_MS <= Date.now();
}

/** Credentials a user's function gave, checked without quoting them. */
function checked(credentials: AwsCredentials): AwsCredentials {
  if (typeof credentials?.accessKeyId !== 'string' || typeof credentials.secretAccessKey !== 'string') {
    throw new AuthenticationError('The AWS credentials have no accessKeyId or secretAccessKey string');
  }
  if (credentials.expiration !== undefined && !Number.isFinite(Number(credentials.expiration))) {
    throw new AuthenticationError('The AWS credentials have an expiration that is not a time');
  }
  return credentials;
}

type Aws4fetch = typeof import('aws4fetch');
let aws4fetch: Promise<Aws4fetch> | undefined;

function loadAws4fetch(): Promise<Aws4fetch> {
  aws4fetch ??= import('aws4fetch');
  return aws4fetch;
}

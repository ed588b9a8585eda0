/**
 * The SDK's log: one line per HTTP request and one per model call's outcome, through any logger with
 * debug/info/warn/error (console, pino, winston). Every line is redacted with the call's secrets and never holds an
 * auth header; bodies are logged only at `debug` and only when asked for (`logBodies`).
 */
import { Ai4tsError } from '../errors.js';
import { redact } from '../internal/fail.js';
import { readEnv } from '../transport/env.js';
import { AUTH_HEADERS } from '../transport/providers.js';

/** Anything with these four methods: `console`, pino, winston, or your own. */
export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/** The least severe level written; `off` writes nothing. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'off';

/** The log settings of a client. */
export interface LogOptions {
  /** Where lines go (default `console` when a level is set). */
  logger?: Logger;
  /** Default: `AI4TS_LOG`, else `info` when a `logger` is given, else `off`. */
  logLevel?: LogLevel;
  /** Also log request and response bodies (redacted) at `debug`. Off by default: bodies hold users' content. */
  logBodies?: boolean;
}

const RANK: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3, off: 4 };
const LEVELS = Object.keys(RANK);

function isLevel(value: string): value is LogLevel {
  return LEVELS.includes(value);
}

/** A logger with its level applied, whose every line is redacted. */
export class Log {
  readonly #logger: Logger;
  readonly #rank: number;
  /** Whether bodies may be logged (at `debug`). */
  readonly bodies: boolean;

  constructor(logger: Logger, level: LogLevel, bodies: boolean) {
    this.#logger = logger;
    this.#rank = RANK[level];
    this.bodies = bodies && level === 'debug';
  }

  /** Whether lines of `level` are written (check before building costly fields). */
  enabled(level: Exclude<LogLevel, 'off'>): boolean {
    return RANK[level] >= this.#rank;
  }

  /** Writes one line, every string field (nested too) redacted with `secrets`. */
  write(
    level: Exclude<LogLevel, 'off'>,
    message: string,
    fields: Record<string, unknown>,
    secrets: readonly string[],
  ): void {
    if (!this.enabled(level)) return;
    const clean = secrets.length > 0 ? redactRecord(fields, secrets) : fields;
    try {
      this.#logger[level](`ai4ts: ${message}`, clean);
    } catch {
      // A broken logger must not break the request it reports.
    }
  }
}

/** The log of a client's options, or undefined when nothing is written (the default). */
export function resolveLog(options: LogOptions): Log | undefined {
  const env = readEnv(['AI4TS_LOG'])?.toLowerCase();
  if (env !== undefined && !isLevel(env)) {
    throw new Ai4tsError(`AI4TS_LOG must be one of ${LEVELS.join(', ')}, not "${env}"`);
  }
  const level = options.logLevel ?? env ?? (options.logger ? 'info' : 'off');
  if (level === 'off') return undefined;
  return new Log(options.logger ?? console, level, options.logBodies === true);
}

/**
 * A body for a log line, as its JSON text: a logger that prints objects (`console`) would cut it at depth 2
 * (`messages: [ [Object] ]`), and one line of JSON is what a structured logger stores anyway.
 */
export function bodyText(body: unknown): string {
  try {
    return JSON.stringify(body) ?? String(body);
  } catch {
    return String(body);
  }
}

/** Header names that carry credentials: never logged, whatever the level. */
const CREDENTIAL_HEADERS = new Set<string>([
  ...Object.values(AUTH_HEADERS),
  'proxy-authorization',
  'cookie',
  // AWS's temporary-credentials token, sent beside a SigV4 signature.
  'x-amz-security-token',
]);

/** Headers as a plain object for a log line, credentials replaced by `[redacted]`. */
export function loggableHeaders(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of headers) out[name] = CREDENTIAL_HEADERS.has(name) ? '[redacted]' : value;
  return out;
}

function redactRecord(record: object, secrets: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(record)) out[key] = redactValue(item, secrets);
  return out;
}

function redactValue(value: unknown, secrets: readonly string[]): unknown {
  if (typeof value === 'string') return redact(value, secrets);
  if (Array.isArray(value)) return value.map((item) => redactValue(item, secrets));
  if (value !== null && typeof value === 'object') return redactRecord(value, secrets);
  return value;
}

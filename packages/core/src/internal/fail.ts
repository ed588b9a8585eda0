/**
 * Turning whatever was thrown into the typed {@link Ai4tsError}, once for every package: ours pass through, an
 * abort wins over the error it caused, an SSE decoding error is a protocol error, the rest is the connection.
 */
import { SseError, type SseEvent } from '@ai4ts/sse';
import { AbortError, Ai4tsError, ApiError, ConnectionError, ProtocolError } from '../errors.js';

/** What {@link toAi4tsError} needs to know about the failure's surroundings. */
export interface FailureContext<P = unknown> {
  /** The caller's signal: when it aborted, the failure is an AbortError whatever was thrown. */
  signal?: AbortSignal | undefined;
  /** Everything received so far, attached to a new error (an Ai4tsError passed in keeps its own when it has one). */
  partial?: P | undefined;
}

/** The one AbortError: the signal's reason is its cause, `partial` what arrived before. */
export function abortError<P>(signal: AbortSignal, partial?: P): AbortError<P> {
  return new AbortError<P>('The request was aborted', { cause: signal.reason, partial });
}

/** Maps any thrown value to an {@link Ai4tsError}; see the module comment for the rules. */
export function toAi4tsError<P>(error: unknown, context: FailureContext<P> = {}): Ai4tsError<P> {
  const { signal, partial } = context;
  if (error instanceof Ai4tsError) {
    if (error.partial === undefined && partial !== undefined) error.partial = partial;
    return error;
  }
  if (signal?.aborted) return abortError(signal, partial);
  if (error instanceof SseError) return new ProtocolError<P>(error.message, { cause: error, partial });
  return new ConnectionError<P>(`The connection broke while reading the stream: ${describeError(error)}`, {
    cause: error,
    partial,
  });
}

/** `message: cause message`, the way undici nests the socket's reason (`terminated: other side closed`). */
export function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? error.cause.message : undefined;
  return cause && cause !== error.message ? `${error.message}: ${cause}` : error.message;
}

/**
 * Shorter secrets are not searched for: no real API key is this short, and replacing a 1-3 character "key" (a
 * test's `'k'`) everywhere would mangle the model's text.
 */
export const MIN_SECRET_LENGTH = 8;

/** Replaces every occurrence of each secret with `[redacted]`. Absent and too-short secrets are skipped. */
export function redact(text: string, secrets: readonly (string | undefined)[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret && secret.length >= MIN_SECRET_LENGTH && out.includes(secret)) out = out.replaceAll(secret, '[redacted]');
  }
  return out;
}

/**
 * Text that may be JSON with every secret redacted, however JSON spells it: raw, or with `\u` escapes (`\u0073k-…`)
 * or `\"` / `\\` that only parsing reveals; then the text is scrubbed as JSON values ({@link scrubJson}) and
 * serialized again. Text without such a spelling is only searched: the `\u` check is one scan.
 */
export function redactJsonText(text: string, secrets: readonly (string | undefined)[]): string {
  const out = redact(text, secrets);
  if (!spellsSecret(out, secrets)) return out;
  try {
    return JSON.stringify(scrubJson(JSON.parse(out), secrets));
  } catch {
    return redact(out.replace(UNICODE_ESCAPE, unescapeUnicode), secrets);
  }
}

const UNICODE_ESCAPE = /\\u([0-9a-fA-F]{4})/g;
const unescapeUnicode = (_: string, hex: string) => String.fromCharCode(Number.parseInt(hex, 16));

/** True when a secret hides in `text` behind a JSON escape (a false positive only costs a parse). */
function spellsSecret(text: string, secrets: readonly (string | undefined)[]): boolean {
  const live = secrets.filter((secret): secret is string => secret !== undefined && secret.length >= MIN_SECRET_LENGTH);
  if (live.length === 0) return false;
  if (live.some((secret) => secret !== escaped(secret) && text.includes(escaped(secret)))) return true;
  if (!text.includes('\\u')) return false;
  const decoded = text.replace(UNICODE_ESCAPE, unescapeUnicode);
  return live.some((secret) => decoded.includes(secret));
}

function escaped(secret: string): string {
  return JSON.stringify(secret).slice(1, -1);
}

/** A copy of a JSON value with every secret replaced by `[redacted]` in its strings and keys, however deep. */
export function scrubJson(value: unknown, secrets: readonly (string | undefined)[]): unknown {
  if (typeof value === 'string') return redact(value, secrets);
  if (Array.isArray(value)) return value.map((item) => scrubJson(item, secrets));
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value))
    // defineProperty: a `__proto__` key stays plain data.
    Object.defineProperty(out, redact(key, secrets), {
      value: scrubJson(item, secrets),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  return out;
}

/** The event with every secret redacted from its data; the same object when there was none (the common case). */
export function redactEvent(event: SseEvent, secrets: readonly (string | undefined)[]): SseEvent {
  const data = redactJsonText(event.data, secrets);
  return data === event.data ? event : { ...event, data };
}

/**
 * Reads an HTTP error response into the typed {@link ApiError} (the subclass for its status), with every secret
 * scrubbed from what the server echoed back. A body that cannot be read still gives the status's error, or an
 * AbortError when the caller aborted meanwhile.
 */
export async function readErrorResponse(
  response: Response,
  options: { signal?: AbortSignal | undefined; secrets?: readonly (string | undefined)[] } = {},
): Promise<Ai4tsError> {
  const secrets = options.secrets ?? [];
  let text = '';
  try {
    text = redactJsonText(await response.text(), secrets);
  } catch {
    if (options.signal?.aborted) return abortError(options.signal);
  }
  return ApiError.fromResponse(response.status, parseOrText(text), redactHeaders(response.headers, secrets));
}

/** The headers with every secret redacted from their values (a server may echo the key in a header). */
export function redactHeaders(headers: Headers, secrets: readonly (string | undefined)[]): Headers {
  const out = new Headers();
  for (const [name, value] of headers) out.append(name, redact(value, secrets));
  return out;
}

/** JSON when the text is JSON, else the text itself (provider error bodies are often plain text or HTML). */
export function parseOrText(text: string): unknown {
  if (text === '') return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

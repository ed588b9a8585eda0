/**
 * Scrubbing secrets out of what a daemon sends back. JSON is scrubbed as values, never as text: a token written
 * with JSON escapes (`\u0073k-…`, `\"`) is only visible once parsed, and a short token must not cut into keys.
 */
import { redact } from '@ai4ts/core/internal';

/** A copy of a JSON value with every secret replaced by `[redacted]` in its strings and keys, however deep. */
export function scrubJson(value: unknown, secrets: readonly string[]): unknown {
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

/** A text scrubbed: as JSON values when it is JSON, else as text. Unchanged when no secret can be in it. */
export function scrubText(text: string, secrets: readonly string[]): string {
  // Cheap test first: with no secret in any form (raw or JSON-escaped as `\"`, `\\`) the text passes unchanged. A
  // `\u` escape anywhere could spell one, so it takes the JSON path too.
  const mayHold = text.includes('\\u') || secrets.some((s) => s && (text.includes(s) || text.includes(escaped(s))));
  if (!mayHold) return text;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return redact(text, secrets);
  }
  return JSON.stringify(scrubJson(json, secrets));
}

function escaped(secret: string): string {
  return JSON.stringify(secret).slice(1, -1);
}

/**
 * An HTTP error response with every secret scrubbed from its body (as JSON values when it is JSON), for
 * `readErrorResponse`, which redacts the raw text and the headers only. A body that cannot be read is left to it.
 */
export async function scrubbedErrorResponse(response: Response, secrets: readonly string[]): Promise<Response> {
  if (secrets.length === 0) return response;
  let text: string;
  try {
    text = await response.text();
  } catch {
    return response;
  }
  const { status, statusText, headers } = response;
  return new Response(scrubText(text, secrets), { status, statusText, headers });
}

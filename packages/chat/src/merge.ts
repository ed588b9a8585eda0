/**
 * The pure helpers of the chat listener: reading a usage object, and keeping the fields a provider adds to a delta or
 * a tool-call fragment (merged over the deltas into containers the listener owns, copied out for every snapshot).
 */
import type { Usage } from '@ai4ts/core';
import { getOwn, isRecord, setOwn } from '@ai4ts/core/internal';

/** A string that carries something: empty strings (sent as placeholders by many providers) do not. */
export function nonEmpty(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function num(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/** Usage in OpenAI's shape; `input_tokens`/`output_tokens` (some gateways) are read too. */
export function normalizeUsage(raw: Record<string, unknown>): Usage {
  const prompt = num(raw.prompt_tokens) ?? num(raw.input_tokens) ?? 0;
  const completion = num(raw.completion_tokens) ?? num(raw.output_tokens) ?? 0;
  return {
    ...raw,
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: num(raw.total_tokens) ?? prompt + completion,
  };
}

/**
 * Merges the fields of `source` the listener does not read itself into `extra` (created on the first one). Every
 * container in `extra` is the listener's own, so merging into it never touches a chunk.
 */
export function mergeExtra(
  extra: Record<string, unknown> | undefined,
  source: Record<string, unknown>,
  known: ReadonlySet<string>,
): Record<string, unknown> | undefined {
  // for...in: no key array per chunk on the hot path; own keys only, and `__proto__` set as data (see setOwn).
  for (const key in source) {
    if (known.has(key) || !Object.hasOwn(source, key)) continue;
    const value = source[key];
    if (value === null || value === undefined) continue;
    extra ??= {};
    setOwn(extra, key, mergeValue(getOwn(extra, key), value));
  }
  return extra;
}

/** Arrays are concatenated (OpenRouter's `reasoning_details` arrive a piece per delta), objects merged, the rest replaced. */
function mergeValue(prev: unknown, value: unknown): unknown {
  if (Array.isArray(value)) {
    if (!Array.isArray(prev)) return [...value];
    for (const item of value) prev.push(item);
    return prev;
  }
  if (isRecord(value)) {
    const target: Record<string, unknown> = isRecord(prev) ? prev : {};
    for (const key of Object.keys(value)) {
      const inner = value[key];
      if (inner !== null && inner !== undefined) setOwn(target, key, mergeValue(getOwn(target, key), inner));
    }
    return target;
  }
  return value;
}

/** A deep copy of merged provider fields, so a snapshot never changes as more deltas arrive. */
export function copyExtra(extra: Record<string, unknown> | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (extra) for (const key of Object.keys(extra)) setOwn(out, key, copyValue(extra[key]));
  return out;
}

function copyValue(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(copyValue);
  if (isRecord(value)) return copyExtra(value);
  return value;
}

const WHITESPACE = new Set([0x20, 0x09, 0x0a, 0x0d]);

/**
 * Whether a growing text is one complete JSON value, each character read once: `JSON.parse` runs only when a
 * top-level object, array or string has just closed, and text that closed without parsing can never become JSON
 * (after its top-level value only whitespace may follow). So re-checking arguments that keep growing costs their
 * new characters, not their whole length. A top-level number or literal is parsed as is: its valid but unfinished
 * prefixes are a few characters (`-`, `1e`, `tru`), and anything else fails or succeeds at once.
 */
export class JsonProgress {
  #read = 0;
  #depth = 0;
  #inString = false;
  #escaped = false;
  #state: 'start' | 'open' | 'closed' | 'scalar' | 'never' = 'start';

  /** Whether `text` (the text of the last call, with more appended) is complete JSON. */
  complete(text: string): boolean {
    for (; this.#read < text.length && this.#state !== 'scalar' && this.#state !== 'never'; this.#read++) {
      this.#step(text.charCodeAt(this.#read));
    }
    if (this.#state === 'scalar') return isJson(text);
    if (this.#state !== 'closed') return false;
    if (isJson(text)) return true;
    this.#state = 'never';
    return false;
  }

  #step(code: number): void {
    if (this.#state === 'closed') {
      if (!WHITESPACE.has(code)) this.#state = 'never';
    } else if (this.#inString) {
      if (this.#escaped) this.#escaped = false;
      else if (code === 0x5c) this.#escaped = true;
      else if (code === 0x22) {
        this.#inString = false;
        if (this.#depth === 0) this.#state = 'closed';
      }
    } else if (code === 0x22) {
      this.#inString = true;
      this.#state = 'open';
    } else if (code === 0x7b || code === 0x5b) {
      this.#depth++;
      this.#state = 'open';
    } else if (code === 0x7d || code === 0x5d) {
      this.#depth--;
      if (this.#depth <= 0) this.#state = 'closed';
    } else if (this.#state === 'start' && !WHITESPACE.has(code)) this.#state = 'scalar';
  }
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * The pure helpers of the chat listener: reading a usage object, and keeping the fields a provider adds to a delta or
 * a tool-call fragment (merged over the deltas into containers the listener owns, copied out for every snapshot).
 */
import type { Usage } from '@ai4ts/core';
import { isRecord } from '@ai4ts/core/internal';

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
  // for...in: no key array per chunk on the hot path; parsed JSON has no inherited enumerable keys.
  for (const key in source) {
    if (known.has(key)) continue;
    const value = source[key];
    if (value === null || value === undefined) continue;
    extra ??= {};
    extra[key] = mergeValue(extra[key], value);
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
    for (const key in value) {
      const inner = value[key];
      if (inner !== null && inner !== undefined) target[key] = mergeValue(target[key], inner);
    }
    return target;
  }
  return value;
}

/** A deep copy of merged provider fields, so a snapshot never changes as more deltas arrive. */
export function copyExtra(extra: Record<string, unknown> | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (extra) for (const key in extra) out[key] = copyValue(extra[key]);
  return out;
}

function copyValue(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(copyValue);
  if (isRecord(value)) return copyExtra(value);
  return value;
}

/**
 * The request-field check behind `strictRequests`: a field that is none of the protocol's (the keys of its request
 * type, kept by the compiler in the protocol's types.ts) nor the SDK's (the loop's and `telemetry`) is a typo to
 * report.
 */
import { SDK_FIELD_SET } from '../tools/request.js';

/** The request's fields that none of `known` nor the SDK's fields name, each with the nearest known name. */
export function unknownFields(
  request: object,
  known: ReadonlySet<string>,
): { field: string; suggestion: string | undefined }[] {
  const unknown = [];
  for (const field of Object.keys(request)) {
    if (known.has(field) || SDK_FIELD_SET.has(field)) continue;
    unknown.push({ field, suggestion: nearest(field, [...known, ...SDK_FIELD_SET]) });
  }
  return unknown;
}

/** The name closest to `field` by edit distance, when it is within a third of its length (at least 2 edits). */
function nearest(field: string, names: readonly string[]): string | undefined {
  const limit = Math.max(2, Math.floor(field.length / 3));
  let best: string | undefined;
  let bestDistance = limit + 1;
  for (const name of names) {
    const distance = editDistance(field.toLowerCase(), name.toLowerCase());
    if (distance < bestDistance) {
      best = name;
      bestDistance = distance;
    }
  }
  return best;
}

/** Levenshtein distance, one row at a time. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row[j] = Math.min((previous[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost);
    }
    previous = row;
  }
  return previous[b.length] ?? 0;
}

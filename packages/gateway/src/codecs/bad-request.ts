/** Bad requests, the same way in every protocol: a 400 naming the first bad field (each protocol renders its shape). */
import type { z } from 'zod';
import { HttpError, invalid } from '../http/errors.js';

/**
 * How deep a request body may nest (objects and arrays). Real requests stay far below it (a tool schema a few dozen
 * levels); past it a body is refused before anything walks it recursively (zod, JSON.stringify, an upstream).
 */
export const MAX_BODY_DEPTH = 128;

/** A 400 `invalid_request_error`. */
export function badRequest(message: string, param: string | null = null): HttpError {
  return new HttpError(400, invalid(message, param));
}

/** A path as OpenAI's `param` names it: `tools[0].function.name`. */
export function paramOf(path: readonly PropertyKey[]): string {
  return path.map((key, i) => (typeof key === 'number' ? `[${key}]` : `${i ? '.' : ''}${String(key)}`)).join('');
}

/**
 * The issue to report: inside a union that nothing matched, the branch that came closest (its issue deepest, then
 * the fewest issues), so that a `tool_choice` function without a name is named `tool_choice.function.name` rather
 * than "invalid input" at `tool_choice`.
 */
function closestIssue(issues: readonly z.core.$ZodIssue[]): z.core.$ZodIssue | undefined {
  const issue = issues[0];
  if (issue?.code !== 'invalid_union' || issue.errors.length === 0) return issue;
  const depth = (branch: readonly z.core.$ZodIssue[]) => Math.max(...branch.map((each) => each.path.length));
  const best = issue.errors.reduce((a, b) => (depth(b) > depth(a) || (depth(b) === depth(a) && b.length < a.length) ? b : a));
  const closest = closestIssue(best);
  return closest ? { ...closest, path: [...issue.path, ...closest.path] } : issue;
}

/** The body checked with zod; a 400 naming the first bad field otherwise. */
export function parseBody<S extends z.ZodType>(schema: S, json: unknown): z.infer<S> {
  const parsed = schema.safeParse(json);
  if (parsed.success) return parsed.data;
  const issue = closestIssue(parsed.error.issues);
  const param = issue?.path.length ? paramOf(issue.path) : null;
  throw badRequest(`${param ?? 'body'}: ${issue?.message ?? 'invalid request'}`, param);
}

/**
 * Refuses a body nested deeper than {@link MAX_BODY_DEPTH}, naming the field where it passes the limit. Walked with
 * a stack of its own: a recursive walk is what such a body is built to break.
 */
export function checkDepth(json: unknown): void {
  const stack: { value: unknown; path: PropertyKey[] }[] = [{ value: json, path: [] }];
  for (let next = stack.pop(); next; next = stack.pop()) {
    const { value, path } = next;
    if (typeof value !== 'object' || value === null) continue;
    if (path.length >= MAX_BODY_DEPTH) {
      // The top-level field and a few levels under it say where; the rest of a 100,000-level path says nothing.
      const param = paramOf(path.slice(0, 4));
      throw badRequest(`${param}: nested deeper than ${MAX_BODY_DEPTH} levels`, param);
    }
    const entries: [PropertyKey, unknown][] = Array.isArray(value) ? value.map((item, i) => [i, item]) : Object.entries(value);
    for (const [key, item] of entries) if (typeof item === 'object' && item !== null) stack.push({ value: item, path: [...path, key] });
  }
}

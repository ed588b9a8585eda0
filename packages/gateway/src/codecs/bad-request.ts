/** Bad requests, the same way in every protocol: a 400 naming the first bad field (each protocol renders its shape). */
import type { z } from 'zod';
import { HttpError, invalid } from '../http/errors.js';

/** A 400 `invalid_request_error`. */
export function badRequest(message: string, param: string | null = null): HttpError {
  return new HttpError(400, invalid(message, param));
}

/** The body checked with zod; a 400 naming the first bad field otherwise. */
export function parseBody<S extends z.ZodType>(schema: S, json: unknown): z.infer<S> {
  const parsed = schema.safeParse(json);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const param = issue?.path.join('.') || null;
  throw badRequest(`${param ?? 'body'}: ${issue?.message ?? 'invalid request'}`, param);
}

/**
 * Boundary checks with zod/mini: a few KB in a browser bundle, where classic zod's builders cost about 90 KB. zod/mini
 * loads no locale, so every message would read "Invalid input": the checks here pass zod's English messages per
 * parse, and leave the app's own zod configuration alone.
 */
import en from 'zod/v4/locales/en.js';
import * as z from 'zod/mini';
import { Ai4tsError } from '../errors.js';

/** Parse options giving zod's English messages (`schema.safeParse(value, ENGLISH)`). */
export const ENGLISH = { error: en().localeError };

/**
 * Checks a request against its boundary schema.
 *
 * @throws Ai4tsError (no `partial`) naming every problem: `Invalid <what> request:` and zod's prettified issues.
 */
export function checkRequest(schema: z.ZodMiniType, request: unknown, what: string): void {
  const checked = schema.safeParse(request, ENGLISH);
  if (!checked.success) {
    throw new Ai4tsError(`Invalid ${what} request:\n${z.prettifyError(checked.error)}`, { cause: checked.error });
  }
}

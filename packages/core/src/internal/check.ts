/**
 * Boundary checks with zod/mini: a few KB in a browser bundle, where classic zod's builders cost about 90 KB. zod/mini
 * loads no locale, so every message would read "Invalid input". zod's English locale costs about 1 KB gzip in every
 * browser bundle for message kinds (emails, IPs, JWTs, ...) no request schema here has; the checks pass their own
 * English messages, worded as zod's, per parse, and leave the app's own zod configuration alone.
 */
import * as z from 'zod/mini';
import { Ai4tsError } from '../errors.js';

/** zod's English message for the issue kinds the request schemas raise; zod's "Invalid input" for any other. */
function message(issue: z.core.$ZodRawIssue): string | undefined {
  switch (issue.code) {
    case 'invalid_type':
      return `Invalid input: expected ${issue.expected}, received ${typeName(issue.input)}`;
    case 'invalid_value':
      return issue.values.length === 1
        ? `Invalid input: expected ${quote(issue.values[0])}`
        : `Invalid option: expected one of ${issue.values.map(quote).join('|')}`;
    case 'too_small': {
      const bound = `${issue.inclusive ? '>=' : '>'}${issue.minimum}`;
      const unit = issue.origin === 'string' ? 'characters' : issue.origin === 'array' ? 'items' : undefined;
      return `Too small: expected ${issue.origin} to ${unit ? `have ${bound} ${unit}` : `be ${bound}`}`;
    }
    default:
      return undefined;
  }
}

function quote(value: unknown): string {
  return typeof value === 'string' ? `"${value}"` : String(value);
}

function typeName(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
}

/** Parse options giving English messages. */
const ENGLISH = { error: message };

/**
 * A positive integer (a token limit, a choice count). One custom check: `z.int().check(z.positive())` brings three
 * more zod classes into every browser bundle.
 */
export function positiveInt(): z.ZodMiniCustom<number, number> {
  return z.custom<number>((value) => Number.isInteger(value) && Number(value) > 0, 'Invalid input: expected a positive integer');
}

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

/** The Messages endpoint, the per-request options, and the wire body every call sends. */
import { type RequestOptions, toAnthropicTool } from '@ai4ts/core';
import { checkRequest, toWireBody } from '@ai4ts/core/internal';
import * as z from 'zod/mini';
import type { MessageCreateParams } from './types.js';

/** The endpoint, under an Anthropic baseURL such as `https://api.anthropic.com/v1`. */
export const MESSAGES_PATH = '/messages';

/** Per-request options (headers, query, `extraBody`, `signal`, timeouts, retries): core's, the same in loop mode. */
export type MessageRequestOptions = RequestOptions;

/** The request fields every call needs; the rest passes through to the API, which checks it. */
const requestSchema = z.looseObject({
  model: z.string().check(z.minLength(1)),
  max_tokens: z.int().check(z.positive()),
  messages: z.array(
    z.looseObject({
      role: z.enum(['user', 'assistant']),
      content: z.union([z.string(), z.array(z.looseObject({ type: z.string() }))]),
    }),
  ),
});

/**
 * The request as the API receives it (without `stream`, which the service sets), built by core's `toWireBody`:
 * loop fields, `undefined` values and an empty `tools` array left off, tools made by `defineTool` converted with
 * `toAnthropicTool`, every other field kept. Never mutates `request`. Takes a plain request or a tool-loop request.
 *
 * @throws Ai4tsError (synchronously, no `partial`) when `model`, `max_tokens` or `messages` are missing or invalid.
 */
export function toWireRequest(
  request: Omit<MessageCreateParams, 'tools'> & { readonly tools?: readonly unknown[] | undefined },
): Record<string, unknown> {
  const body = toWireBody(request, toAnthropicTool);
  checkRequest(requestSchema, body, 'Messages');
  return body;
}

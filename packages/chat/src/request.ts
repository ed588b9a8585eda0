/** The Chat Completions endpoint, the per-request options, and the wire body every call sends. */
import { type RequestOptions, toChatTool } from '@ai4ts/core';
import { checkRequest, toWireBody } from '@ai4ts/core/internal';
import type { ChatLoopRequest } from './loop.js';
import { type ChatCompletionRequest, ChatCompletionRequestSchema } from './types.js';

/** The endpoint, relative to the provider's baseURL. */
export const CHAT_COMPLETIONS_PATH = '/chat/completions';

/** Per-request options, the same in plain and loop mode: the transport's overrides plus `thinkTags`. */
export interface ChatRequestOptions extends RequestOptions {
  /** Move `<think>...</think>` text out of streamed content into the reasoning. Default true. */
  thinkTags?: boolean;
}

/**
 * The request as the API receives it, built by core's `toWireBody`: loop fields, `undefined` values and an empty
 * `tools` array left off, tools made by `defineTool` converted with `toChatTool`, everything else (OpenAI's fields
 * and any provider's own) kept. Never mutates `request`.
 *
 * @throws Ai4tsError (synchronously, no `partial`) when `model` or `messages` fail {@link ChatCompletionRequestSchema}.
 */
export function toWireRequest(request: ChatCompletionRequest | ChatLoopRequest): Record<string, unknown> {
  const body = toWireBody(request, toChatTool);
  checkRequest(ChatCompletionRequestSchema, body, 'chat');
  return body;
}


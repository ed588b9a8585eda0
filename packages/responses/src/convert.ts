/** A finished response read in the chat vocabulary every ai4ts protocol shares: finish reason and usage. */
import type { FinishReason, Usage } from '@ai4ts/core';
import { isRecord } from '@ai4ts/core/internal';
import type { OutputItem, ResponseObject, ResponseUsage } from './types.js';

/**
 * The chat finish reason of a response: `incomplete` for `max_output_tokens` is `length` (other reasons, such as
 * `content_filter`, pass through); otherwise `tool_calls` when it produced function calls, else `stop`.
 */
export function toFinishReason(response: Pick<ResponseObject, 'status' | 'output' | 'incomplete_details'>): FinishReason {
  if (response.status === 'incomplete') {
    const reason = isRecord(response.incomplete_details) ? response.incomplete_details.reason : undefined;
    return typeof reason === 'string' && reason !== 'max_output_tokens' ? reason : 'length';
  }
  return response.output.some((item: OutputItem) => item.type === 'function_call') ? 'tool_calls' : 'stop';
}

/** Maps Responses usage (`input_tokens`, `output_tokens` and their details) to OpenAI's chat usage shape. */
export function toChatUsage(usage: ResponseUsage): Usage {
  const chat: Usage = {
    prompt_tokens: usage.input_tokens,
    completion_tokens: usage.output_tokens,
    total_tokens: usage.total_tokens ?? usage.input_tokens + usage.output_tokens,
  };
  if (usage.input_tokens_details) chat.prompt_tokens_details = { ...usage.input_tokens_details };
  if (usage.output_tokens_details) chat.completion_tokens_details = { ...usage.output_tokens_details };
  return chat;
}

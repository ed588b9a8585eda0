/** Converse's usage and stop reasons in the shared shapes every protocol reports. */
import type { FinishReason, Usage } from '@ai4ts/core';
import type { StopReason, TokenUsage } from './types.js';

/**
 * Maps a stop reason onto the shared ones: `end_turn` and `stop_sequence` -> `stop`, `tool_use` -> `tool_calls`,
 * `max_tokens` -> `length`, `guardrail_intervened` and `content_filtered` -> `content_filter`. Any other reason
 * passes through unchanged (the original stays on the response's `stopReason`).
 */
export function toFinishReason(reason: StopReason): FinishReason {
  return FINISH_REASONS.get(reason) ?? reason;
}

/** A Map: a reason of `constructor` or `__proto__` must not find an inherited value. */
const FINISH_REASONS: ReadonlyMap<string, FinishReason> = new Map([
  ['end_turn', 'stop'],
  ['stop_sequence', 'stop'],
  ['tool_use', 'tool_calls'],
  ['max_tokens', 'length'],
  ['guardrail_intervened', 'content_filter'],
  ['content_filtered', 'content_filter'],
]);

/**
 * Maps Converse usage onto the chat shape as the Messages protocol does (Bedrock counts cache reads and writes
 * apart from `inputTokens`): `prompt_tokens = inputTokens + cacheReadInputTokens + cacheWriteInputTokens`,
 * `cached_tokens` the reads and `cache_creation_tokens` the writes when reported, `total_tokens` the API's.
 */
export function toChatUsage(usage: TokenUsage): Usage {
  const cacheRead = usage.cacheReadInputTokens;
  const cacheWrite = usage.cacheWriteInputTokens;
  const prompt = (usage.inputTokens ?? 0) + (cacheRead ?? 0) + (cacheWrite ?? 0);
  const completion = usage.outputTokens ?? 0;
  const out: Usage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: usage.totalTokens ?? prompt + completion };
  if (cacheRead !== undefined || cacheWrite !== undefined) {
    out.prompt_tokens_details = {};
    if (cacheRead !== undefined) out.prompt_tokens_details.cached_tokens = cacheRead;
    if (cacheWrite !== undefined) out.prompt_tokens_details.cache_creation_tokens = cacheWrite;
  }
  return out;
}

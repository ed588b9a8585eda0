/** Gemini's usage and finish reasons in the shared shapes every protocol reports. */
import type { FinishReason, Usage } from '@ai4ts/core';
import type { GeminiFinishReason, UsageMetadata } from './types.js';

/**
 * Maps a finish reason onto the shared ones: STOP -> `stop` (`tool_calls` when the turn called functions: Gemini
 * says STOP for those too), MAX_TOKENS -> `length`, the filters' reasons (SAFETY, RECITATION, BLOCKLIST,
 * PROHIBITED_CONTENT, SPII, IMAGE_SAFETY) -> `content_filter`. Any other reason (MALFORMED_FUNCTION_CALL, OTHER,
 * LANGUAGE, ...) passes through unchanged: mapping it to `stop` would hide an unfinished turn. The original stays on
 * the candidate (`finishReason`).
 */
export function toFinishReason(reason: GeminiFinishReason, calledFunctions = false): FinishReason {
  if (reason === 'STOP') return calledFunctions ? 'tool_calls' : 'stop';
  return FINISH_REASONS.get(reason) ?? reason;
}

/** A Map: a reason of `constructor` or `__proto__` must not find an inherited value. */
const FINISH_REASONS: ReadonlyMap<string, FinishReason> = new Map([
  ['MAX_TOKENS', 'length'],
  ['SAFETY', 'content_filter'],
  ['RECITATION', 'content_filter'],
  ['BLOCKLIST', 'content_filter'],
  ['PROHIBITED_CONTENT', 'content_filter'],
  ['SPII', 'content_filter'],
  ['IMAGE_SAFETY', 'content_filter'],
]);

/**
 * Maps Gemini usage onto the chat shape: `prompt_tokens = promptTokenCount + toolUsePromptTokenCount`,
 * `completion_tokens = candidatesTokenCount + thoughtsTokenCount` (Gemini counts thoughts apart; chat's completion
 * includes reasoning), `total_tokens` the API's total when given. `cached_tokens` is `cachedContentTokenCount`,
 * `reasoning_tokens` is `thoughtsTokenCount`, `tool_use_prompt_tokens` the tool-use prompt's share.
 */
export function toChatUsage(usage: UsageMetadata): Usage {
  const toolUse = usage.toolUsePromptTokenCount;
  const thoughts = usage.thoughtsTokenCount;
  const prompt = (usage.promptTokenCount ?? 0) + (toolUse ?? 0);
  const completion = (usage.candidatesTokenCount ?? 0) + (thoughts ?? 0);
  const out: Usage = {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: usage.totalTokenCount ?? prompt + completion,
  };
  if (usage.cachedContentTokenCount !== undefined || toolUse !== undefined) {
    out.prompt_tokens_details = {};
    if (usage.cachedContentTokenCount !== undefined) out.prompt_tokens_details.cached_tokens = usage.cachedContentTokenCount;
    if (toolUse !== undefined) out.prompt_tokens_details.tool_use_prompt_tokens = toolUse;
  }
  if (thoughts !== undefined) out.completion_tokens_details = { reasoning_tokens: thoughts };
  return out;
}

/**
 * The chat-shaped view of a Messages result, for code that wants one shape whatever the protocol.
 */
import type { FinishReason, Usage } from '@ai4ts/core';
import { toToolCalls } from './turns.js';
import { isTextBlock, isThinkingBlock, type Message, type MessageUsage, type StopReason } from './types.js';

/** A Messages result in the Chat Completions shape (`object: 'chat.completion'`, one choice). */
export interface ChatCompletionView {
  id: string;
  object: 'chat.completion';
  /** Unix seconds at conversion: a Messages result carries no timestamp. */
  created: number;
  model: string;
  choices: [
    {
      index: 0;
      message: {
        role: 'assistant';
        /** The text blocks joined, or null when there were none. */
        content: string | null;
        /** The thinking blocks joined; absent when there were none. */
        reasoning_content?: string;
        tool_calls?: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }>;
        refusal: null;
      };
      finish_reason: FinishReason | null;
      logprobs: null;
    },
  ];
  usage: Usage;
}

/**
 * Maps a stop reason onto Chat Completions' finish reasons: end_turn and stop_sequence -> stop, max_tokens -> length,
 * tool_use -> tool_calls, refusal -> content_filter. pause_turn (a server-tool turn the API paused; send the message
 * back to let it continue) has no chat equivalent and passes through as `pause_turn`, as does any unknown value:
 * mapping it to `stop` would hide that the turn is unfinished.
 */
export function toFinishReason(stopReason: StopReason): FinishReason;
export function toFinishReason(stopReason: StopReason | null): FinishReason | null;
export function toFinishReason(stopReason: StopReason | null): FinishReason | null {
  if (stopReason === null) return null;
  return FINISH_REASONS.get(stopReason) ?? stopReason;
}

/** A Map: a stop reason of `constructor` or `__proto__` must not find an inherited value. */
const FINISH_REASONS: ReadonlyMap<string, FinishReason> = new Map([
  ['end_turn', 'stop'],
  ['stop_sequence', 'stop'],
  ['max_tokens', 'length'],
  ['tool_use', 'tool_calls'],
  ['refusal', 'content_filter'],
]);

/**
 * Maps Anthropic usage onto the chat shape. Anthropic's `input_tokens` excludes cached input, so
 * `prompt_tokens = input_tokens + cache_read_input_tokens + cache_creation_input_tokens`;
 * `completion_tokens = output_tokens`. `prompt_tokens_details` carries `cached_tokens` (cache reads) and
 * `cache_creation_tokens` when the API reported them.
 */
export function toChatUsage(usage: MessageUsage): Usage {
  const cacheRead = usage.cache_read_input_tokens ?? undefined;
  const cacheCreation = usage.cache_creation_input_tokens ?? undefined;
  const prompt = (usage.input_tokens ?? 0) + (cacheRead ?? 0) + (cacheCreation ?? 0);
  const completion = usage.output_tokens ?? 0;
  const out: Usage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
  if (cacheRead !== undefined || cacheCreation !== undefined) {
    out.prompt_tokens_details = {};
    if (cacheRead !== undefined) out.prompt_tokens_details.cached_tokens = cacheRead;
    if (cacheCreation !== undefined) out.prompt_tokens_details.cache_creation_tokens = cacheCreation;
  }
  return out;
}

/**
 * A Messages result as a chat completion: text blocks become `content`, thinking blocks `reasoning_content`,
 * client tool_use blocks `tool_calls` (arguments as JSON text; the raw text when the input was invalid),
 * the stop reason `finish_reason` (`toFinishReason`) and usage the chat shape (`toChatUsage`).
 * Server tool blocks and other blocks have no chat equivalent and are left out.
 */
export function toChatCompletion(message: Message): ChatCompletionView {
  let text: string | null = null;
  let reasoning: string | undefined;
  for (const block of message.content) {
    if (isTextBlock(block)) text = (text ?? '') + block.text;
    else if (isThinkingBlock(block)) reasoning = (reasoning ?? '') + block.thinking;
  }
  const toolCalls = toToolCalls(message).map(({ id, name, arguments: args }) => ({
    id,
    type: 'function' as const,
    function: { name, arguments: args },
  }));
  const chatMessage: ChatCompletionView['choices'][0]['message'] = { role: 'assistant', content: text, refusal: null };
  if (reasoning !== undefined) chatMessage.reasoning_content = reasoning;
  if (toolCalls.length) chatMessage.tool_calls = toolCalls;
  return {
    id: message.id,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: message.model,
    choices: [{ index: 0, message: chatMessage, finish_reason: toFinishReason(message.stop_reason), logprobs: null }],
    usage: toChatUsage(message.usage),
  };
}

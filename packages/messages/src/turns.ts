/**
 * What the tool loop needs from a Messages turn: its tool calls, the assistant turn to send back as received, and
 * the user turn of tool results.
 */
import type { ToolCall, ToolResult } from '@ai4ts/core';
import type {
  ContentBlock,
  ContentBlockParam,
  Message,
  MessageParam,
  TextBlock,
  ToolResultBlockParam,
  ToolUseBlock,
} from './types.js';

/**
 * The assistant message to send back before the tool results. Thinking and redacted_thinking blocks go back
 * unchanged with their signatures, as the API requires when tools are used; `input_error` is stripped from
 * tool_use and server_tool_use blocks; empty text blocks are dropped (the API rejects them); every other block
 * goes back as received.
 */
export function toAssistantTurn(message: Message): MessageParam {
  const content: ContentBlockParam[] = [];
  for (const block of message.content) {
    if (block.type === 'text' && (block as TextBlock).text === '') continue;
    content.push(withoutInputError(block) as ContentBlockParam);
  }
  return { role: 'assistant', content };
}

function withoutInputError(block: ContentBlock): ContentBlock {
  if ((block.type !== 'tool_use' && block.type !== 'server_tool_use') || !('input_error' in block)) return block;
  const { input_error: _, ...rest } = block as ToolUseBlock;
  return rest;
}

/**
 * The turn's client tool calls in index order, as the tool loop reads them: `arguments` is `JSON.stringify(input)`,
 * or the raw text when `input_error` is set, so the loop's validation rejects it with an error result.
 */
export function toToolCalls(message: Message): ToolCall[] {
  const calls: ToolCall[] = [];
  for (const block of message.content) {
    if (block.type !== 'tool_use') continue;
    const use = block as ToolUseBlock;
    calls.push({
      id: use.id,
      name: use.name,
      arguments: use.input_error ? use.input_error.raw : JSON.stringify(use.input),
    });
  }
  return calls;
}

/**
 * The user message answering a turn's tool_use blocks: one tool_result block per result, in the given order,
 * `content` as the loop rendered it, `is_error: true` for failures, unknown tools and invalid input.
 */
export function toToolResultTurn(
  results: readonly Pick<ToolResult, 'toolCallId' | 'content' | 'isError'>[],
): MessageParam {
  return {
    role: 'user',
    content: results.map((result) => {
      const block: ToolResultBlockParam = {
        type: 'tool_result',
        tool_use_id: result.toolCallId,
        content: result.content,
      };
      if (result.isError) block.is_error = true;
      return block;
    }),
  };
}

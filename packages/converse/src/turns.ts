/** What the tool loop needs from a Converse turn: its calls, the assistant message as received, the results' message. */
import type { ToolCall, ToolResult } from '@ai4ts/core';
import { type ConverseResponse, isTextBlock, isToolUseBlock, type Message } from './types.js';

/** The turn's calls in order, as the tool loop reads them: `arguments` is `JSON.stringify(input)`. */
export function toToolCalls(response: ConverseResponse): ToolCall[] {
  return response.output.message.content.filter(isToolUseBlock).map(({ toolUse }) => ({
    id: toolUse.toolUseId,
    name: toolUse.name,
    arguments: JSON.stringify(toolUse.input ?? {}),
  }));
}

/** The answer text of a turn: its text blocks joined. */
export function textOf(response: ConverseResponse): string {
  let text = '';
  for (const block of response.output.message.content) if (isTextBlock(block)) text += block.text;
  return text;
}

/**
 * The user message answering a turn's calls: one `toolResult` block per result, in the given order, its content
 * the text the model reads and `status: 'error'` when the call failed.
 */
export function toToolResultMessage(results: readonly Pick<ToolResult, 'toolCallId' | 'content' | 'isError'>[]): Message {
  return {
    role: 'user',
    content: results.map((result) => ({
      toolResult: { toolUseId: result.toolCallId, content: [{ text: result.content }], status: result.isError ? 'error' : 'success' },
    })),
  };
}

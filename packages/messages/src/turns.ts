/**
 * What the tool loop needs from a Messages turn: its tool calls, the assistant turn to send back as received, and
 * the user turn of tool results.
 */
import type { ToolCall, ToolResult } from '@ai4ts/core';
import { imagePlaceholder, MODEL_IMAGE_TYPES, partsFor } from '@ai4ts/core/internal';
import {
  type AnyContentBlock,
  type ContentBlockParam,
  isKnownBlock,
  isTextBlock,
  type ImageMediaType,
  isToolUseBlock,
  type Message,
  type MessageParam,
  type ToolResultBlockParam,
} from './types.js';

/**
 * The assistant message to send back before the tool results, as received: thinking and redacted_thinking blocks
 * unchanged with their signatures (the API requires it when tools are used), unknown blocks and every field the
 * API sent on a block kept; only ai4ts's own `input_error` is stripped from tool_use and server_tool_use blocks,
 * and empty text blocks are dropped (the API rejects them).
 */
export function toAssistantTurn(message: Message): MessageParam {
  const content: ContentBlockParam[] = [];
  for (const block of message.content) {
    if (isTextBlock(block) && block.text === '') continue;
    content.push(toBlockParam(block));
  }
  return { role: 'assistant', content };
}

function toBlockParam(block: AnyContentBlock): ContentBlockParam {
  if (!isKnownBlock(block)) return block;
  if (block.type === 'tool_use') {
    const { input_error: _, ...sent } = block;
    return sent;
  }
  if (block.type === 'server_tool_use') {
    const { input_error: _, ...sent } = block;
    return sent;
  }
  return block;
}

/**
 * The turn's client tool calls in index order, as the tool loop reads them: `arguments` is `JSON.stringify(input)`,
 * or the raw text when `input_error` is set, so the loop's validation rejects it with an error result.
 */
export function toToolCalls(message: Message): ToolCall[] {
  return message.content.filter(isToolUseBlock).map((use) => ({
    id: use.id,
    name: use.name,
    arguments: use.input_error ? use.input_error.raw : JSON.stringify(use.input),
  }));
}

/**
 * The user message answering a turn's tool_use blocks: one tool_result block per result, in the given order,
 * `content` as the loop rendered it (text and `image` blocks when the tool returned an image), `is_error: true` for
 * failures, unknown tools and invalid input.
 */
export function toToolResultTurn(
  results: readonly Pick<ToolResult, 'toolCallId' | 'content' | 'parts' | 'isError'>[],
): MessageParam {
  return {
    role: 'user',
    content: results.map((result) => {
      const parts = partsFor(result.parts, MODEL_IMAGE_TYPES);
      const block: ToolResultBlockParam = {
        type: 'tool_result',
        tool_use_id: result.toolCallId,
        content: parts
          ? parts.map((part) =>
              part.type === 'text'
                ? { type: 'text', text: part.text }
                : isImageMediaType(part.mimeType)
                  ? { type: 'image', source: { type: 'base64', media_type: part.mimeType, data: part.data } }
                  : { type: 'text', text: imagePlaceholder(part.mimeType) },
            )
          : result.content,
      };
      if (result.isError) block.is_error = true;
      return block;
    }),
  };
}

/** `partsFor` keeps only the image types the API takes; this tells the type checker so. */
function isImageMediaType(type: string): type is ImageMediaType {
  return MODEL_IMAGE_TYPES.has(type);
}

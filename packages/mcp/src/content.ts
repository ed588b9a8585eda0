/**
 * MCP tool results to ai4ts tool results and back. An MCP result is a list of content items (text, image, audio,
 * embedded resource, resource link) with optional `structuredContent` and `isError`; ai4ts keeps text and images as
 * parts ({@link ToolContent}) and each protocol sends them in its own form (docs/mcp.md has the table).
 */
import { ToolContent, type ToolResult, type ToolResultPart } from '@ai4ts/core';
import { assertNever, isRecord } from '@ai4ts/core/internal';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

/** One content item of an MCP tool result, as the SDK parsed it. */
type McpContent = CallToolResult['content'][number];

/**
 * An MCP tool result as ai4ts tool content: text and images as parts, everything else as text the model can read
 * (audio and binary resources by MIME type and size, since no protocol takes them in a tool result). With
 * `structuredContent` the result's `output` is that object, and it becomes the text when the server sent no content.
 * `isError: true` makes it an error result the model sees.
 */
export function fromMcpResult(result: CallToolResult): ToolContent {
  const parts = result.content.map(toPart);
  const structured = result.structuredContent;
  if (parts.length === 0 && structured !== undefined) parts.push({ type: 'text', text: JSON.stringify(structured) });
  return new ToolContent(parts, {
    isError: result.isError === true,
    ...(structured === undefined ? {} : { value: structured }),
  });
}

function toPart(content: McpContent): ToolResultPart {
  switch (content.type) {
    case 'text':
      return { type: 'text', text: content.text };
    case 'image':
      return { type: 'image', data: content.data, mimeType: content.mimeType };
    case 'audio':
      return { type: 'text', text: `[audio: ${content.mimeType}, ${base64Bytes(content.data)} bytes]` };
    case 'resource': {
      const { resource } = content;
      if ('text' in resource) return { type: 'text', text: `[resource: ${resource.uri}]\n${resource.text}` };
      const mimeType = resource.mimeType ?? 'application/octet-stream';
      if (mimeType.startsWith('image/')) return { type: 'image', data: resource.blob, mimeType };
      return { type: 'text', text: `[resource: ${resource.uri}, ${mimeType}, ${base64Bytes(resource.blob)} bytes]` };
    }
    case 'resource_link': {
      const about = [content.mimeType, content.description].filter(Boolean).join(', ');
      return { type: 'text', text: `[resource link: ${content.name} ${content.uri}${about ? ` (${about})` : ''}]` };
    }
    default:
      return assertNever(content);
  }
}

/** The size of base64 data, without decoding it. */
function base64Bytes(data: string): number {
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  return Math.floor((data.length * 3) / 4) - padding;
}

/**
 * An ai4ts tool result as an MCP tool result (what `serveMcp` answers): parts as text and image content, an error as
 * `isError` with its message, and a returned object also as `structuredContent`.
 */
export function toMcpResult(result: ToolResult): CallToolResult {
  if (result.isError) return { content: [{ type: 'text', text: String(result.output) }], isError: true };
  const content: CallToolResult['content'] = result.parts
    ? result.parts.map((part) =>
        part.type === 'text'
          ? { type: 'text', text: part.text }
          : { type: 'image', data: part.data, mimeType: part.mimeType },
      )
    : [{ type: 'text', text: result.content }];
  return isRecord(result.output) && !result.parts
    ? { content, structuredContent: result.output }
    : { content };
}

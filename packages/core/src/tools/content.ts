/**
 * Tool results richer than a string: text and images, as MCP tools return them. Each protocol sends images where
 * its tool results allow them (Responses `input_image`, Messages `image` blocks) and a text placeholder elsewhere
 * (Chat Completions' tool messages are text only).
 */

/** A piece of a tool's result. `data` is base64. */
export type ToolResultPart = { type: 'text'; text: string } | { type: 'image'; data: string; mimeType: string };

/**
 * What a tool returns to give the model parts instead of one string, or to report a failure the model should read
 * (MCP's `isError`). `value` is what the loop reports as the result's `output` (the text when not given).
 *
 * @example
 * execute: async () => new ToolContent([{ type: 'text', text: 'a chart' }, { type: 'image', data, mimeType: 'image/png' }])
 */
export class ToolContent {
  readonly parts: readonly ToolResultPart[];
  readonly isError: boolean;
  readonly value: unknown;

  constructor(parts: readonly ToolResultPart[], options: { isError?: boolean; value?: unknown } = {}) {
    this.parts = parts;
    this.isError = options.isError ?? false;
    this.value = 'value' in options ? options.value : textOf(parts);
  }
}

/** The parts as one text: text parts as they are, an image as `[image: <mime type>]`, one per line. */
export function textOf(parts: readonly ToolResultPart[]): string {
  return parts.map((part) => (part.type === 'text' ? part.text : imagePlaceholder(part.mimeType))).join('\n');
}

/** What a protocol that cannot show an image sends instead. */
export function imagePlaceholder(mimeType: string): string {
  return `[image: ${mimeType}]`;
}

/**
 * The parts a protocol sends, when they hold an image it can show (`imageTypes`); an image of another type
 * becomes its text placeholder. Undefined when no image is left: the protocol then sends the result's text.
 */
export function partsFor(
  parts: readonly ToolResultPart[] | undefined,
  imageTypes: ReadonlySet<string>,
): ToolResultPart[] | undefined {
  if (!parts?.some((part) => part.type === 'image' && imageTypes.has(part.mimeType))) return undefined;
  return parts.map((part) =>
    part.type === 'image' && !imageTypes.has(part.mimeType)
      ? { type: 'text', text: imagePlaceholder(part.mimeType) }
      : part,
  );
}

/** The image types both OpenAI (`input_image`) and Anthropic (`image` blocks) accept. */
export const MODEL_IMAGE_TYPES: ReadonlySet<string> = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

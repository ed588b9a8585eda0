/** The Chat Completions endpoint, the per-request options, the tool wire form and the wire body every call sends. */
import type { ProviderQuirks, RequestOptions, StructuredOutput, Tool } from '@ai4ts/core';
import { checkRequest, outputOf, schemaInstruction, toWireBody } from '@ai4ts/core/internal';
import type { ChatLoopRequest } from './loop.js';
import { type ChatCompletionCreateParams, ChatCompletionCreateParamsSchema, type ChatTool } from './types.js';

/** The endpoint, relative to the provider's baseURL. */
export const CHAT_COMPLETIONS_PATH = '/chat/completions';

/** Per-request options, the same in plain and loop mode: the transport's overrides plus `thinkTags`. */
export interface ChatRequestOptions extends RequestOptions {
  /** Move `<think>...</think>` text out of streamed content into the reasoning. Default true. */
  thinkTags?: boolean;
}

/** The Chat Completions wire form of a `defineTool` tool: `{type:'function', function:{name, description, parameters, strict?}}`. */
export function toChatTool(tool: Tool): ChatTool {
  return {
    type: 'function',
    function: {
      name: tool.name,
      ...(tool.description === undefined ? {} : { description: tool.description }),
      parameters: tool.jsonSchema,
      ...(tool.strict ? { strict: true } : {}),
    },
  };
}

/**
 * The request as the API receives it, built by core's `toWireBody`: loop fields, `undefined` values and an empty
 * `tools` array left off, tools made by `defineTool` converted with `toChatTool`, everything else (OpenAI's fields
 * and any provider's own) kept. Never mutates `request`.
 *
 * A structured `output` becomes `response_format` (see {@link withOutput}); `quirks` are the provider's.
 *
 * @throws Ai4tsError (synchronously, no `partial`) when `model` or `messages` fail {@link ChatCompletionCreateParamsSchema}.
 */
export function toWireRequest(
  request: ChatCompletionCreateParams | ChatLoopRequest,
  quirks?: ProviderQuirks,
): Record<string, unknown> {
  const output = outputOf(request);
  const body = toWireBody(request, toChatTool);
  if (output) withOutput(body, output, quirks?.responseFormat ?? 'json_schema');
  checkRequest(ChatCompletionCreateParamsSchema, body, 'chat');
  return body;
}

/**
 * The streamed body: `stream: true` and, unless the caller set `stream_options` or the provider's preset says it does
 * not accept them, `stream_options: { include_usage: true }`.
 */
export function toStreamBody(wire: Record<string, unknown>, quirks: ProviderQuirks): Record<string, unknown> {
  const body: Record<string, unknown> = { ...wire, stream: true };
  if (body.stream_options === undefined && quirks.streamOptions) body.stream_options = { include_usage: true };
  return body;
}

/** The non-streaming body: the wire body without `stream` or `stream_options`. */
export function toCreateBody(wire: Record<string, unknown>): Record<string, unknown> {
  const { stream: _stream, stream_options: _options, ...body } = wire;
  return body;
}

/**
 * Asks for the structured answer: `response_format: { type: 'json_schema', json_schema: { name, schema, strict } }`
 * with the strict-mode schema; for a provider with JSON mode only, `{ type: 'json_object' }` and the schema in a
 * system message put before the transcript (on the wire only, never in the loop's messages).
 */
function withOutput(body: Record<string, unknown>, output: StructuredOutput, format: 'json_schema' | 'json_object'): void {
  if (format === 'json_object') {
    body.response_format = { type: 'json_object' };
    const messages = Array.isArray(body.messages) ? body.messages : [];
    body.messages = [{ role: 'system', content: schemaInstruction(output) }, ...messages];
    return;
  }
  body.response_format = {
    type: 'json_schema',
    json_schema: {
      name: output.name,
      ...(output.description === undefined ? {} : { description: output.description }),
      schema: output.strictSchema,
      strict: true,
    },
  };
}

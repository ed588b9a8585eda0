/** The Messages endpoint, the per-request options, the tool wire form, and the wire body every call sends. */
import { Ai4tsError, type ProviderQuirks, type RequestOptions, type StructuredOutput, type Tool } from '@ai4ts/core';
import { checkRequest, isRecord, outputOf, positiveInt, toWireBody } from '@ai4ts/core/internal';
import * as z from 'zod/mini';
import type { AnthropicTool, MessageCreateParams } from './types.js';

/** The endpoint, under an Anthropic baseURL such as `https://api.anthropic.com/v1`. */
export const MESSAGES_PATH = '/messages';

/** Per-request options (headers, query, `extraBody`, `signal`, timeouts, retries): core's, the same in loop mode. */
export type MessagesRequestOptions = RequestOptions;

/** The Anthropic Messages wire form of a `defineTool` tool: `{name, description, input_schema}`. */
export function toAnthropicTool(tool: Tool): AnthropicTool {
  return {
    name: tool.name,
    ...(tool.description === undefined ? {} : { description: tool.description }),
    input_schema: tool.jsonSchema,
  };
}

/** The request fields every call needs; the rest passes through to the API, which checks it. */
const requestSchema = z.looseObject({
  model: z.string().check(z.minLength(1)),
  max_tokens: positiveInt(),
  messages: z.array(
    z.looseObject({
      role: z.enum(['user', 'assistant']),
      content: z.union([z.string(), z.array(z.looseObject({ type: z.string() }))]),
    }),
  ),
});

/**
 * The request as the API receives it (without `stream`, which the service sets), built by core's `toWireBody`:
 * loop fields, `undefined` values and an empty `tools` array left off, tools made by `defineTool` converted with
 * `toAnthropicTool`, every other field kept. Never mutates `request`. Takes a plain request or a tool-loop request.
 * A structured `output` is asked for the way {@link outputMode} chooses (`quirks` are the provider's).
 *
 * @throws Ai4tsError (synchronously, no `partial`) when `model`, `max_tokens` or `messages` are missing or invalid,
 *   or when a tool has the structured output's tool name.
 */
export function toWireRequest(
  request: Omit<MessageCreateParams, 'tools'> & { readonly tools?: readonly unknown[] | undefined },
  quirks?: ProviderQuirks,
): Record<string, unknown> {
  const output = outputOf(request);
  const body = toWireBody(request, toAnthropicTool);
  if (output) withOutput(body, output, outputMode(request.model, quirks));
  checkRequest(requestSchema, body, 'Messages');
  return body;
}

/**
 * How a Messages request asks for structured output:
 * - `native`: `output_config.format: { type: 'json_schema', schema }` (Anthropic's structured outputs, constrained
 *   decoding; the answer is the text). Used when the provider's preset says the API has it (`quirks.outputConfig`,
 *   set for `anthropic`) and the model is not one of the older Claude models without it (Claude 3.x, Opus 4 and
 *   4.1, Sonnet 4).
 * - `tool`: a tool named after the output whose input is the answer, forced with `tool_choice: { type: 'tool' }`
 *   (or `{ type: 'any' }` beside the request's own tools, so they can still be called). Every Messages server
 *   understands it; extended thinking does not allow a forced tool, so use a model with native support there.
 */
export function outputMode(model: string, quirks: ProviderQuirks | undefined): 'native' | 'tool' {
  return quirks?.outputConfig === true && !WITHOUT_OUTPUT_CONFIG.test(model) ? 'native' : 'tool';
}

/** Claude models that predate `output_config.format`. */
const WITHOUT_OUTPUT_CONFIG = /^claude-(?:instant|[123](?:[-.]|$)|(?:opus|sonnet)-4(?:-[01])?(?:-\d{8})?$)/;

function withOutput(body: Record<string, unknown>, output: StructuredOutput, mode: 'native' | 'tool'): void {
  if (mode === 'native') {
    const config = isRecord(body.output_config) ? body.output_config : {};
    body.output_config = { ...config, format: { type: 'json_schema', schema: output.strictSchema } };
    return;
  }
  const tools = Array.isArray(body.tools) ? body.tools : [];
  if (tools.some((tool) => isRecord(tool) && tool.name === output.name)) {
    throw new Ai4tsError(`A tool is named "${output.name}", the name of the structured output's tool; give the output schema another title`);
  }
  body.tools = [
    ...tools,
    {
      name: output.name,
      description: output.description ?? 'Give the final answer: its input is the answer.',
      input_schema: output.inputSchema,
    },
  ];
  const choice = isRecord(body.tool_choice) ? body.tool_choice : {};
  const parallel = choice.disable_parallel_tool_use === undefined ? {} : { disable_parallel_tool_use: choice.disable_parallel_tool_use };
  body.tool_choice = tools.length ? { type: 'any', ...parallel } : { type: 'tool', name: output.name, ...parallel };
}

/** The streamed body: the wire body with `stream: true`. */
export function toStreamBody(wire: Record<string, unknown>): Record<string, unknown> {
  return { ...wire, stream: true };
}

/** The non-streaming body: the wire body with `stream: false`. */
export function toCreateBody(wire: Record<string, unknown>): Record<string, unknown> {
  return { ...wire, stream: false };
}

/** The Converse endpoints, the per-request options, the tool wire form, and the wire body every call sends. */
import { Ai4tsError, type RequestOptions, type Tool } from '@ai4ts/core';
import { checkRequest, type Endpoint, isRecord, outputOf, toWireBody } from '@ai4ts/core/internal';
import * as z from 'zod/mini';
import type { ConverseRequest, ConverseTool } from './types.js';

/** The endpoint under Bedrock's runtime baseURL: `{model}` is the request's model (a model id, profile id or ARN). */
export const CONVERSE_PATH = '/model/{model}/converse';

/** Per-request options (headers, `extraBody`, `signal`, timeouts, retries): core's, the same in loop mode. */
export type ConverseRequestOptions = RequestOptions;

/**
 * Where one request goes: `/model/{model}/converse`, or `/converse-stream` when streamed, the model URL-encoded as
 * one segment (an inference profile ARN holds `/` and `:`), and the body without `model`. `request` is the wire
 * request as the middleware left it: a middleware that changes `model` changes the URL.
 */
export function converseEndpoint(request: Record<string, unknown>, stream: boolean): Endpoint {
  const { model, ...body } = request;
  return { path: `/model/${encodeURIComponent(String(model))}/${stream ? 'converse-stream' : 'converse'}`, body };
}

/** The Converse wire form of a `defineTool` tool: a `toolSpec`, its parameters as JSON Schema under `inputSchema.json`. */
export function toConverseTool(tool: Tool): ConverseTool {
  const toolSpec: ConverseTool & { toolSpec: unknown } = { toolSpec: { name: tool.name, inputSchema: { json: tool.jsonSchema } } };
  if (tool.description !== undefined) toolSpec.toolSpec.description = tool.description;
  return toolSpec;
}

/** The request fields every call needs; the rest passes through to the API, which checks it. */
const requestSchema = z.looseObject({
  model: z.string().check(z.minLength(1)),
  messages: z.array(
    z.looseObject({
      role: z.enum(['user', 'assistant']),
      content: z.array(z.looseObject({})),
    }),
  ),
});

/**
 * The request with `model` (which {@link converseEndpoint} moves to the URL), built by core's `toWireBody`: loop
 * fields and `undefined` values left off, and the `defineTool` tools of `tools` (the loop's field; Converse has no
 * `tools`) appended to `toolConfig.tools` as `toolSpec`s. Never mutates `request`.
 *
 * @throws Ai4tsError (synchronously, no `partial`) when `model` or `messages` are missing or invalid, and for a
 *   structured `output`, which this protocol does not carry yet (refused rather than ignored).
 */
export function toWireRequest(
  request: Omit<ConverseRequest, 'tools'> & { readonly tools?: readonly unknown[] | undefined },
): Record<string, unknown> {
  if (outputOf(request)) {
    throw new Ai4tsError('Converse does not support structured `output` in ai4ts yet: ask for JSON with a tool instead');
  }
  const { tools, ...body } = toWireBody(request, toConverseTool);
  if (Array.isArray(tools)) {
    const config = isRecord(body.toolConfig) ? body.toolConfig : {};
    const own = Array.isArray(config.tools) ? config.tools : [];
    body.toolConfig = { ...config, tools: [...own, ...tools] };
  }
  checkRequest(requestSchema, body, 'Converse');
  return body;
}

/** The body of a request, streamed or not: the wire request itself (streaming is the endpoint's, not a field). */
export function toRequestBody(wire: Record<string, unknown>): Record<string, unknown> {
  return wire;
}

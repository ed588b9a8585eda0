/**
 * The Responses endpoint, the per-request options, the tool wire form, and the wire body `create`, `stream` and
 * every loop step send.
 */
import type { RequestOptions, Tool } from '@ai4ts/core';
import type { FunctionTool } from './types.js';
import { checkRequest, isRecord, outputOf, toWireBody } from '@ai4ts/core/internal';
import * as z from 'zod/mini';

/** The path of the Responses API, under the transport's base URL. */
export const RESPONSES_PATH = '/responses';

/** The per-request options of the Responses API (headers, query, `extraBody`, `signal`, timeouts, retries). */
export type ResponsesRequestOptions = RequestOptions;

/** The Responses wire form of a `defineTool` tool. `strict` is always explicit: the Responses API defaults it to true. */
export function toResponsesTool(tool: Tool): FunctionTool {
  return {
    type: 'function',
    name: tool.name,
    ...(tool.description === undefined ? {} : { description: tool.description }),
    parameters: tool.jsonSchema,
    strict: tool.strict,
  };
}

/** The checks a request gets before it is sent: cheap, and the rest is the API's to judge. */
const requestSchema = z.looseObject({
  model: z.string().check(z.minLength(1)),
  input: z.optional(z.union([z.string(), z.array(z.record(z.string(), z.unknown()))])),
  tools: z.optional(z.array(z.record(z.string(), z.unknown()))),
  previous_response_id: z.nullish(z.string()),
  store: z.nullish(z.boolean()),
  stream: z.nullish(z.boolean()),
});

/**
 * The JSON body of a request (a plain one, or a tool-loop one): loop fields, `undefined` values and an empty
 * `tools` left off, `defineTool` tools converted to function tools, a structured `output` asked for as
 * `text.format: { type: 'json_schema', name, schema, strict: true }` (the strict-mode schema; the request's other
 * `text` settings kept). Throws an `Ai4tsError` (no `partial`) naming what is wrong with an invalid request.
 */
export function toWireRequest(request: object): Record<string, unknown> {
  const output = outputOf(request);
  const body = toWireBody(request, toResponsesTool);
  if (output) {
    const format = {
      type: 'json_schema',
      name: output.name,
      ...(output.description === undefined ? {} : { description: output.description }),
      schema: output.strictSchema,
      strict: true,
    };
    body.text = { ...(isRecord(body.text) ? body.text : {}), format };
  }
  checkRequest(requestSchema, body, 'Responses');
  return body;
}

/** The streamed body: the wire body with `stream: true`. */
export function toStreamBody(wire: Record<string, unknown>): Record<string, unknown> {
  return { ...wire, stream: true };
}

/** The Responses endpoint, the per-request options, and the wire body `create`, `stream` and every loop step send. */
import { type RequestOptions, toResponsesTool } from '@ai4ts/core';
import { checkRequest, isRecord, outputOf, toWireBody } from '@ai4ts/core/internal';
import * as z from 'zod/mini';

/** The path of the Responses API, under the transport's base URL. */
export const RESPONSES_PATH = '/responses';

/** The per-request options of the Responses API (headers, query, `extraBody`, `signal`, timeouts, retries). */
export type ResponseRequestOptions = RequestOptions;

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

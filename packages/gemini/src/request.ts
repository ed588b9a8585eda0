/** The Gemini endpoints, the per-request options, the tool wire form, and the wire body every call sends. */
import type { RequestOptions, StructuredOutput, Tool } from '@ai4ts/core';
import { checkRequest, type Endpoint, isRecord, outputOf, toWireBody } from '@ai4ts/core/internal';
import * as z from 'zod/mini';
import type { FunctionDeclaration, GenerateContentRequest, GeminiTool } from './types.js';

/**
 * The endpoint, under a Gemini baseURL such as `https://generativelanguage.googleapis.com/v1beta`, as Google documents
 * it: `{model}` is the request's model, and a streamed request goes to `:streamGenerateContent?alt=sse`
 * ({@link geminiEndpoint}).
 */
export const GEMINI_PATH = '/models/{model}:generateContent';

/** Per-request options (headers, query, `extraBody`, `signal`, timeouts, retries): core's, the same in loop mode. */
export type GeminiRequestOptions = RequestOptions;

/**
 * Where one request goes and what the API receives: `/models/{model}:generateContent`, or `:streamGenerateContent`
 * with `alt=sse` (without it the API streams one JSON array instead of SSE), and the request without `model`, which
 * the URL carries. A `models/` prefix on the model name is accepted. `request` is the wire request as the middleware
 * left it: a middleware that changes `model` changes the URL.
 */
export function geminiEndpoint(request: Record<string, unknown>, stream: boolean): Endpoint {
  const { model, ...body } = request;
  const name = String(model).replace(/^models\//, '');
  const path = `/models/${encodeURIComponent(name)}:${stream ? 'streamGenerateContent' : 'generateContent'}`;
  return stream ? { path, query: { alt: 'sse' }, body } : { path, body };
}

/** The Gemini wire form of a `defineTool` tool: one function declaration, its parameters as JSON Schema. */
export function toGeminiTool(tool: Tool): GeminiTool {
  const declaration: FunctionDeclaration = { name: tool.name, parametersJsonSchema: tool.jsonSchema };
  if (tool.description !== undefined) declaration.description = tool.description;
  return { functionDeclarations: [declaration] };
}

/** The request fields every call needs; the rest passes through to the API, which checks it. */
const requestSchema = z.looseObject({
  model: z.string().check(z.minLength(1)),
  contents: z.array(
    z.looseObject({
      role: z.optional(z.enum(['user', 'model'])),
      parts: z.array(z.looseObject({})),
    }),
  ),
});

/**
 * The request with `model` (which {@link geminiEndpoint} moves to the URL when it is sent), built by
 * core's `toWireBody`: loop fields and `undefined` values left off, an empty `tools` array left off, tools made by
 * `defineTool` converted with {@link toGeminiTool} and gathered into one `functionDeclarations` tool, every other
 * field kept. A structured `output` becomes `generationConfig.responseMimeType: 'application/json'` with its schema
 * as `responseJsonSchema`. Never mutates `request`.
 *
 * @throws Ai4tsError (synchronously, no `partial`) when `model` or `contents` are missing or invalid.
 */
export function toWireRequest(
  request: Omit<GenerateContentRequest, 'tools'> & { readonly tools?: readonly unknown[] | undefined },
): Record<string, unknown> {
  const output = outputOf(request);
  const body = toWireBody(request, toGeminiTool);
  if (Array.isArray(body.tools)) body.tools = gatherDeclarations(body.tools);
  if (output) withOutput(body, output);
  checkRequest(requestSchema, body, 'Gemini');
  return body;
}

/**
 * The tools with every tool that holds only function declarations merged into the first such one (the API wants
 * the functions of a request in one tool); built-in tools (`googleSearch`, `codeExecution`) kept in place.
 */
function gatherDeclarations(tools: unknown[]): unknown[] {
  const out: unknown[] = [];
  let functions: FunctionDeclaration[] | undefined;
  for (const tool of tools) {
    if (isRecord(tool) && Array.isArray(tool.functionDeclarations) && Object.keys(tool).length === 1) {
      if (functions) {
        functions.push(...(tool.functionDeclarations as FunctionDeclaration[]));
        continue;
      }
      functions = [...(tool.functionDeclarations as FunctionDeclaration[])];
      out.push({ functionDeclarations: functions });
      continue;
    }
    out.push(tool);
  }
  return out;
}

function withOutput(body: Record<string, unknown>, output: StructuredOutput): void {
  const config = isRecord(body.generationConfig) ? body.generationConfig : {};
  body.generationConfig = { ...config, responseMimeType: 'application/json', responseJsonSchema: output.inputSchema };
}

/**
 * The body of a request, streamed or not: the wire request itself (streaming is the endpoint's method, not a field).
 * It keeps `model`, so middleware, spans and prices see it; {@link geminiEndpoint} takes it out when it is sent.
 */
export function toRequestBody(wire: Record<string, unknown>): Record<string, unknown> {
  return wire;
}

/** The Gemini endpoints, the per-request options, the tool wire form, and the wire body every call sends. */
import type { RequestOptions, StructuredOutput, Tool } from '@ai4ts/core';
import { checkRequest, isRecord, outputOf, toWireBody } from '@ai4ts/core/internal';
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
 * Where one request goes: `/models/{model}:generateContent`, or `:streamGenerateContent` with `alt=sse` (without it
 * the API streams one JSON array instead of SSE). A `models/` prefix on the model name is accepted.
 */
export function geminiEndpoint(
  wire: Record<string, unknown>,
  stream: boolean,
): { path: string; query?: Record<string, string> } {
  const model = String(wire.model).replace(/^models\//, '');
  const method = stream ? 'streamGenerateContent' : 'generateContent';
  const path = `/models/${encodeURIComponent(model)}:${method}`;
  return stream ? { path, query: { alt: 'sse' } } : { path };
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
 * The request as the API receives it plus `model` (which the endpoint takes out, see {@link toCreateBody}), built by
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

/** A body as the API receives it: the model is the endpoint's ({@link geminiEndpoint}), not a body field. */
function withoutModel(wire: Record<string, unknown>): Record<string, unknown> {
  const { model: _, ...body } = wire;
  return body;
}

/** The streamed body: the wire body without `model` (streaming is the endpoint's, not a field). */
export const toStreamBody = withoutModel;

/** The non-streaming body: the wire body without `model`. */
export const toCreateBody = withoutModel;

/**
 * What the tool loop needs from a Gemini turn: its function calls, the model turn to send back as received, and the
 * user turn of function responses.
 */
import type { ToolCall, ToolResult } from '@ai4ts/core';
import {
  type Content,
  type FunctionCall,
  type FunctionResponse,
  type GenerateContentResponse,
  isFunctionCallPart,
  type Part,
} from './types.js';

/**
 * The id of a function call: the API's `id` when it sent one; else one made from the response id, the candidate and
 * the call's position (`<responseId>:<candidate>:<n>`), so every reading of one response gives the same ids.
 */
export function toolCallId(responseId: string | undefined, candidate: number, n: number, call: FunctionCall): string {
  if (typeof call.id === 'string' && call.id !== '') return call.id;
  return `${responseId ?? 'gemini'}:${candidate}:${n}`;
}

/** The first candidate's function calls in order, as the tool loop reads them: `arguments` is `JSON.stringify(args)`. */
export function toToolCalls(response: GenerateContentResponse): ToolCall[] {
  const candidate = response.candidates?.[0];
  const parts = candidate?.content?.parts ?? [];
  return parts.filter(isFunctionCallPart).map((part, n) => ({
    id: toolCallId(response.responseId, candidate?.index ?? 0, n, part.functionCall),
    name: part.functionCall.name ?? '',
    arguments: JSON.stringify(part.functionCall.args ?? {}),
  }));
}

/**
 * The model turn to send back before the function responses: the first candidate's parts exactly as received (each
 * `thoughtSignature` on its part, thoughts, code and unknown parts kept), role `model`. Empty text parts without a
 * signature are dropped (they carry nothing).
 */
export function toModelTurn(response: GenerateContentResponse): Content {
  const parts = response.candidates?.[0]?.content?.parts ?? [];
  return {
    role: 'model',
    parts: parts.filter((part) => !(part.text === '' && part.thoughtSignature === undefined && Object.keys(part).length === 1)),
  };
}

/**
 * The user turn answering a model turn's calls: one `functionResponse` part per result, in the given order, with the
 * call's `name`, its `id` when the API gave the call one (`apiIds`, see {@link apiCallIds}), and `response` what the
 * model reads (`{ output }`, or `{ error }` when the call failed).
 */
export function toFunctionResponseTurn(
  results: readonly (Pick<ToolResult, 'toolCallId' | 'toolName' | 'content' | 'isError'> & { output?: unknown })[],
  apiIds: ReadonlySet<string> = new Set(),
): Content {
  return {
    role: 'user',
    parts: results.map((result): Part => {
      const functionResponse: FunctionResponse = { name: result.toolName, response: responseOf(result) };
      if (apiIds.has(result.toolCallId)) functionResponse.id = result.toolCallId;
      return { functionResponse };
    }),
  };
}

/**
 * Google's convention: the output under `output`, a failure's text under `error` (its `output`: `content` is
 * already `{"error": ...}`, which would say it twice).
 */
function responseOf(result: Pick<ToolResult, 'content' | 'isError'> & { output?: unknown }): Record<string, unknown> {
  return result.isError ? { error: typeof result.output === 'string' ? result.output : result.content } : { output: result.content };
}

/** The ids the API itself gave the calls of a model turn (ai4ts's own are not sent back). */
export function apiCallIds(turn: Content | undefined): Set<string> {
  const ids = new Set<string>();
  for (const part of turn?.parts ?? []) {
    const id = isFunctionCallPart(part) ? part.functionCall.id : undefined;
    if (typeof id === 'string' && id !== '') ids.add(id);
  }
  return ids;
}

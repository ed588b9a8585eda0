/**
 * The tool loop over the Responses API: its request and result types, and the message half of its adapter, whose
 * transcript is the growing list of input items. With `store` not false each step continues by
 * `previous_response_id` and sends only the new `function_call_output` items; with `store: false` it resends the
 * whole input (output items, reasoning included, exactly as received). So does it, from then on, once a server shows
 * that it keeps nothing: a response that says `store: false`, or a 400 or 404 on the `previous_response_id` (that
 * step is sent again, whole).
 */
import {
  ApiError,
  type LoopFields,
  type LoopState,
  type Tool,
  type ToolLoopEvent,
  type ToolLoopResult,
  type ToolLoopStream,
  type ToolResult,
  type WithoutTools,
} from '@ai4ts/core';
import { type LoopTurns, MODEL_IMAGE_TYPES, partsFor } from '@ai4ts/core/internal';
import { toChatUsage, toFinishReason } from './convert.js';
import type {
  FunctionCallItem,
  ResponseCreateParams,
  ResponseInputContent,
  ResponseInputItem,
  ResponseObject,
  ResponseTool,
} from './types.js';

/**
 * A Responses request that runs the tool loop: `tools` may hold `defineTool` tools beside wire tools, and the loop
 * fields (`maxSteps`, `passThroughToolCalls`, `concurrency`, `onStepFinish`, `onToolCall`, `prepareStep`)
 * configure the loop. Neither the loop fields nor an empty `tools` reach the wire.
 */
export interface ResponsesLoopRequest
  extends WithoutTools<ResponseCreateParams>,
    LoopFields<ResponsesLoopRequest, ResponseObject> {
  tools?: readonly (Tool | ResponseTool)[];
}

/**
 * The outcome of a Responses tool loop; `messages` is the input item list to send back to continue, `object` the
 * structured answer (of type `Obj`) when the request has `output`.
 */
export type ResponsesToolLoopResult<Obj = unknown> = ToolLoopResult<
  ResponsesLoopRequest,
  ResponseObject,
  ResponseInputItem,
  Obj
>;
/** A running Responses tool loop (see core's `ToolLoopStream`). */
export type ResponsesToolLoopStream = ToolLoopStream<ResponsesLoopRequest, ResponseObject, ResponseInputItem>;
/** One step-tagged event of a streamed Responses tool loop. */
export type ResponsesToolLoopEvent = ToolLoopEvent<ResponsesLoopRequest, ResponseObject>;

/** The state of a suspended Responses tool loop (`result.state`): plain JSON, resumed with `resume(state, { ... })`. */
export type ResponsesLoopState = LoopState<ResponsesLoopRequest, ResponseInputItem>;


/**
 * The message half of the Responses tool-loop adapter. It remembers the last response of its loop (core makes one
 * per loop): with `store` not false each step continues by `previous_response_id` and sends only the new items.
 */
export function responsesLoopTurns(): LoopTurns<ResponsesLoopRequest, ResponseObject, ResponseInputItem> {
  // What the server already holds after the last response: its id, and how many transcript items it covers.
  let previous: { id: string; known: number } | undefined;
  // Set once the server showed that it keeps nothing: from then on every step sends the whole conversation.
  let stateless = false;
  return {
    stepRequest(request) {
      const input = toItems(request.input);
      if (request.store === false || stateless || previous === undefined || input.length < previous.known)
        return { ...request, input };
      return { ...request, input: input.slice(previous.known), previous_response_id: previous.id };
    },
    stepDone(request, response) {
      // A server that answers `store: false` did not keep the response: there is nothing to continue by id.
      if (response.store === false) stateless = true;
      previous = { id: response.id, known: toItems(request.input).length + response.output.length };
    },
    stepFailed(request, sent, error) {
      if (sent.previous_response_id === undefined || !refusedStoredId(error)) return undefined;
      stateless = true;
      return { ...request, input: toItems(request.input) };
    },
    readTurn(response) {
      const calls = response.output.filter((item): item is FunctionCallItem => item.type === 'function_call');
      return {
        toolCalls: calls.map((call) => ({ id: call.call_id, name: call.name, arguments: call.arguments })),
        finishReason: toFinishReason(response),
        text: response.output_text,
        usage: response.usage ? toChatUsage(response.usage) : undefined,
        refusal: refusalOf(response),
      };
    },
    getMessages: (request) => toItems(request.input),
    withMessages: (request, messages) => ({ ...request, input: messages }),
    // Every field as received (reasoning's encrypted_content, a call's unknown fields): the API wants them back.
    assistantMessages: (response) => response.output.map((item) => ({ ...item })),
    toolMessages: (results) =>
      results.map((result) => ({ type: 'function_call_output', call_id: result.toolCallId, output: outputOf(result) })),
    parallelToolCalls: (request) => request.parallel_tool_calls !== false,
    repairMessages: (_response, feedback) => [{ type: 'message', role: 'user', content: feedback }],
    withTools: (request, tools) => ({ ...request, tools: [...(request.tools ?? []), ...tools] }),
  };
}

/**
 * Whether a server refused a step's `previous_response_id`: a 404 (it does not have the response) or a 400 (it keeps
 * no responses at all) that names it, by its `param` or in its message.
 */
function refusedStoredId(error: unknown): boolean {
  if (!(error instanceof ApiError)) return false;
  const named = error.param === 'previous_response_id' || /previous.response/i.test(error.message);
  return (error.status === 400 || error.status === 404) && named;
}

/** The refusal parts of a response's messages, joined; undefined when the model did not refuse. */
function refusalOf(response: ResponseObject): string | undefined {
  let refusal: string | undefined;
  for (const item of response.output)
    if (item.type === 'message')
      for (const part of item.content) if (part.type === 'refusal') refusal = (refusal ?? '') + part.refusal;
  return refusal;
}

/** A result's `output`: its text, or `input_text` / `input_image` parts when the tool returned an image. */
function outputOf(result: ToolResult): string | ResponseInputContent[] {
  const parts = partsFor(result.parts, MODEL_IMAGE_TYPES);
  if (!parts) return result.content;
  return parts.map((part) =>
    part.type === 'text'
      ? { type: 'input_text', text: part.text }
      : { type: 'input_image', image_url: `data:${part.mimeType};base64,${part.data}` },
  );
}

/** The request's input as items: a string input is one user message. */
function toItems(input: ResponseCreateParams['input']): ResponseInputItem[] {
  if (input === undefined) return [];
  if (typeof input === 'string') return [{ type: 'message', role: 'user', content: input }];
  return [...input];
}

/**
 * The tool loop over the Responses API: a {@link ToolLoopAdapter} whose transcript is the growing list of input
 * items. With `store` not false each step continues by `previous_response_id` and sends only the new
 * `function_call_output` items; with `store: false` it resends the whole input (output items, reasoning included,
 * exactly as received).
 */
import type {
  LoopFields,
  Tool,
  ToolLoopAdapter,
  ToolLoopEvent,
  ToolLoopResult,
  ToolLoopStream,
  ToolResult,
  Transport,
  WithoutTools,
} from '@ai4ts/core';
import { forwardStep, toolLoopEntryPoints, MODEL_IMAGE_TYPES, partsFor } from '@ai4ts/core/internal';
import { toChatUsage, toFinishReason } from './convert.js';
import { type ResponseRequestOptions, toWireRequest } from './request.js';
import { streamWireBody } from './stream.js';
import type {
  FunctionCallItem,
  ResponseCreateRequest,
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
export interface ResponseLoopRequest
  extends WithoutTools<ResponseCreateRequest>,
    LoopFields<ResponseLoopRequest, ResponseObject> {
  tools?: readonly (Tool | ResponseTool)[];
}

/**
 * The outcome of a Responses tool loop; `messages` is the input item list to send back to continue, `object` the
 * structured answer (of type `Obj`) when the request has `output`.
 */
export type ResponsesToolLoopResult<Obj = unknown> = ToolLoopResult<
  ResponseLoopRequest,
  ResponseObject,
  ResponseInputItem,
  Obj
>;
/** A running Responses tool loop (see core's `ToolLoopStream`). */
export type ResponsesToolLoopStream = ToolLoopStream<ResponseLoopRequest, ResponseObject, ResponseInputItem>;
/** One step-tagged event of a streamed Responses tool loop. */
export type ResponsesToolLoopEvent = ToolLoopEvent<ResponseLoopRequest, ResponseObject>;


/**
 * A tool-loop adapter for the Responses API over `transport`; `requestOptions` (headers, timeouts, `extraBody`)
 * apply to every step. It remembers the last response of its loop, so make one per loop.
 */
export function responsesToolLoopAdapter(
  transport: Transport,
  requestOptions: ResponseRequestOptions = {},
): ToolLoopAdapter<ResponseLoopRequest, ResponseObject, ResponseInputItem> {
  // What the server already holds after the last response: its id, and how many transcript items it covers.
  let previous: { id: string; known: number } | undefined;
  return {
    async send(request, { signal, emit, telemetry }) {
      const input = toItems(request.input);
      const step = { ...request, input };
      if (request.store !== false && previous !== undefined && input.length >= previous.known) {
        step.input = input.slice(previous.known);
        step.previous_response_id = previous.id;
      }
      const handle = streamWireBody(transport, toWireRequest(step), { ...requestOptions, signal, telemetry });
      const response = await forwardStep(handle, emit);
      previous = { id: response.id, known: input.length + response.output.length };
      return response;
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
    telemetry: (requested) => transport.telemetry(requestOptions, requested),
    repairMessages: (_response, feedback) => [{ type: 'message', role: 'user', content: feedback }],
    withTools: (request, tools) => ({ ...request, tools: [...(request.tools ?? []), ...tools] }),
  };
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

const entryPoints = toolLoopEntryPoints(responsesToolLoopAdapter);

/**
 * Runs the tool loop over the Responses API and resolves to its result. Its settings come from the request (the
 * `defineTool` tools in `tools`, the loop fields; with `output`, the result's `object` has the schema's type);
 * `options` apply to every step and `options.signal` aborts the loop. Rejects with a typed error whose `partial`
 * is a `ToolLoopPartial` (AbortError on abort).
 */
export const runResponsesToolLoop = entryPoints.run;

/**
 * Starts the tool loop over the Responses API as one event stream over all steps, each event tagged with its
 * step; settings and options as for {@link runResponsesToolLoop}.
 */
export const streamResponsesToolLoop = entryPoints.stream;

/** The request's input as items: a string input is one user message. */
function toItems(input: ResponseCreateRequest['input']): ResponseInputItem[] {
  if (input === undefined) return [];
  if (typeof input === 'string') return [{ type: 'message', role: 'user', content: input }];
  return [...input];
}

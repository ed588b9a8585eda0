/**
 * The tool loop over the Responses API: a {@link ToolLoopAdapter} whose transcript is the growing list of input
 * items. With `store` not false each step continues by `previous_response_id` and sends only the new
 * `function_call_output` items; with `store: false` it resends the whole input (output items, reasoning included,
 * exactly as produced).
 */
import {
  type NormalizedEvent,
  runToolLoop,
  streamToolLoop,
  type ToolLoopAdapter,
  type ToolLoopOptions,
  type ToolLoopResult,
  type ToolLoopStream,
  toResponsesTool,
  type Transport,
} from '@ai4ts/core';
import { toChatUsage, toFinishReason } from './convert.js';
import { ResponseStreamListener } from './listener.js';
import { type ResponseCreateRequest, streamResponse } from './service.js';
import type { FunctionCallItem, ResponseObject } from './types.js';

/** One Responses input item: a transcript entry of the loop. */
export type ResponseInputItem = Record<string, unknown>;

/** The normalized events a step forwards to a streamed loop (the per-turn `finish` is the engine's to report). */
const FORWARDED = ['content', 'reasoning', 'tool_call.start', 'tool_call.delta', 'tool_call.done', 'usage'] as const;

/**
 * A tool-loop adapter for the Responses API over `transport`. It remembers the last response of its loop, so make
 * one per loop. `options.tools` are sent as wire tools when the request has no `tools` of its own.
 */
export function responsesToolLoopAdapter(
  transport: Transport,
  options: Pick<ToolLoopOptions, 'tools'> = {},
): ToolLoopAdapter<ResponseCreateRequest, ResponseObject, ResponseInputItem> {
  // What the server already holds after the last response: its id, and how many transcript items it covers.
  let previous: { id: string; known: number } | undefined;
  return {
    async send(request, { signal, emit }) {
      const input = toItems(request.input);
      const body: ResponseCreateRequest = { ...request, input };
      if (body.tools === undefined && options.tools?.length) body.tools = options.tools.map(toWire);
      if (request.store !== false && previous !== undefined && input.length >= previous.known) {
        body.input = input.slice(previous.known);
        body.previous_response_id = previous.id;
      }
      const listener = new ResponseStreamListener();
      if (emit) for (const name of FORWARDED) listener.on(name, (event: NormalizedEvent) => emit(event));
      const response = await streamResponse(transport, body, { signal, listener });
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
      };
    },
    getMessages: (request) => toItems(request.input),
    withMessages: (request, messages) => ({ ...request, input: messages }),
    assistantMessages: (response) => response.output.map((item) => ({ ...item }) as ResponseInputItem),
    toolMessages: (results) =>
      results.map((result) => ({ type: 'function_call_output', call_id: result.toolCallId, output: result.content })),
    parallelToolCalls: (request) => request.parallel_tool_calls !== false,
  };
}

/**
 * Runs the tool loop over the Responses API and resolves to its result; `messages` is the input item list to send
 * back to continue. Rejects with a typed error whose `partial` is a `ToolLoopPartial`.
 */
export function runResponsesToolLoop(
  transport: Transport,
  request: ResponseCreateRequest,
  options: ToolLoopOptions<ResponseCreateRequest, ResponseObject> = {},
): Promise<ToolLoopResult<ResponseCreateRequest, ResponseObject, ResponseInputItem>> {
  return runToolLoop(responsesToolLoopAdapter(transport, options), request, options);
}

/** Starts the tool loop over the Responses API as one event stream over all steps, each event tagged with its step. */
export function streamResponsesToolLoop(
  transport: Transport,
  request: ResponseCreateRequest,
  options: ToolLoopOptions<ResponseCreateRequest, ResponseObject> = {},
): ToolLoopStream<ResponseCreateRequest, ResponseObject, ResponseInputItem> {
  return streamToolLoop(responsesToolLoopAdapter(transport, options), request, options);
}

/** The request's input as items: a string input is one user message. */
function toItems(input: ResponseCreateRequest['input']): ResponseInputItem[] {
  if (input === undefined) return [];
  if (typeof input === 'string') return [{ type: 'message', role: 'user', content: input }];
  return [...input];
}

function toWire(tool: Parameters<typeof toResponsesTool>[0]): Record<string, unknown> {
  return { ...toResponsesTool(tool) };
}

/**
 * The tool loop over Chat Completions: the chat {@link ToolLoopAdapter} for core's engine, and the two ways to run
 * it. Each step is one streamed request (`ChatStream`); the assistant turn goes back exactly as streamed.
 */
import type {
  LoopFields,
  ModelTurn,
  Tool,
  ToolLoopAdapter,
  ToolLoopEvent,
  ToolLoopResult,
  ToolLoopStream,
  ToolResult,
  Transport,
  WithoutTools,
} from '@ai4ts/core';
import { forwardStep, toolLoopEntryPoints } from '@ai4ts/core/internal';
import { streamWireBody } from './stream.js';
import { type ChatRequestOptions, toWireRequest } from './request.js';
import type { ChatCompletion, ChatCompletionRequest, ChatMessage, ChatWireTool } from './types.js';

/**
 * A chat request that runs the tool loop: the plain request's fields, `tools` that may hold `defineTool` tools, and
 * the loop's fields (`maxSteps`, `passThroughToolCalls`, `concurrency` and the hooks), which never reach the wire.
 * The hooks see this same type (`prepareStep` gets and returns one).
 */
export interface ChatLoopRequest
  extends WithoutTools<ChatCompletionRequest>,
    LoopFields<ChatLoopRequest, ChatCompletion> {
  tools?: readonly (Tool | ChatWireTool)[];
}

/**
 * The result of a chat tool loop: `messages` is the full transcript to send back next time; `object` the
 * structured answer (of type `Obj`) when the request has `output`.
 */
export type ChatToolLoopResult<Obj = unknown> = ToolLoopResult<ChatLoopRequest, ChatCompletion, ChatMessage, Obj>;
/** A streamed chat tool loop. */
export type ChatToolLoopStream = ToolLoopStream<ChatLoopRequest, ChatCompletion, ChatMessage>;
/** One event of a streamed chat tool loop, tagged with its step. */
export type ChatToolLoopEvent = ToolLoopEvent<ChatLoopRequest, ChatCompletion>;


/**
 * The Chat Completions adapter of the tool loop. Every step streams (a `ChatStream`), so argument strings are kept
 * exactly as produced; `options` are the per-request options of every step (headers, timeouts, extraBody,
 * thinkTags), the loop's signal replacing theirs. `send` throws Ai4tsError for an invalid request and rejects like
 * `ChatStream.final()`.
 */
export function chatToolLoopAdapter(
  transport: Transport,
  options: ChatRequestOptions = {},
): ToolLoopAdapter<ChatLoopRequest, ChatCompletion, ChatMessage> {
  return {
    send(request, { signal, emit, telemetry }) {
      const wire = toWireRequest(request, transport.provider.quirks);
      return forwardStep(streamWireBody(transport, wire, { ...options, signal, telemetry }), emit);
    },
    readTurn(completion): ModelTurn {
      const choice = completion.choices[0];
      return {
        toolCalls: (choice?.message.tool_calls ?? []).map((call) => ({
          id: call.id,
          name: call.function.name,
          arguments: call.function.arguments,
        })),
        finishReason: choice?.finish_reason ?? 'stop',
        text: choice?.message.content ?? '',
        usage: completion.usage,
        refusal: choice?.message.refusal ?? undefined,
      };
    },
    getMessages: (request) => request.messages,
    withMessages: (request, messages) => ({ ...request, messages }),
    // The whole message, provider fields included (OpenRouter's reasoning_details, Gemini's thought signatures on
    // the calls): providers check them on the next turn. A copy, so the transcript never shares the completion's.
    assistantMessages: (completion) => {
      const message = completion.choices[0]?.message;
      return message ? [structuredClone(message)] : [];
    },
    // Text only: a chat tool message cannot carry an image, so an image part is its placeholder in `content`.
    toolMessages: (results: readonly ToolResult[]) =>
      results.map((result) => ({ role: 'tool', tool_call_id: result.toolCallId, content: result.content })),
    parallelToolCalls: (request) => request.parallel_tool_calls !== false,
    withTools: (request, tools) => ({ ...request, tools: [...(request.tools ?? []), ...tools] }),
    telemetry: (requested) => transport.telemetry(options, requested),
    repairMessages: (_completion, feedback) => [{ role: 'user', content: feedback }],
  };
}

const entryPoints = toolLoopEntryPoints(chatToolLoopAdapter);

/**
 * Runs the tool loop over Chat Completions to the end. The loop's settings come from the request alone: its
 * `defineTool` tools, `maxSteps`, `passThroughToolCalls`, `concurrency`, hooks and structured `output` (never sent
 * to the API; with `output`, the result's `object` has the schema's type). `options` apply to every step's
 * request, and `options.signal` aborts the loop.
 *
 * Rejects with an Ai4tsError whose `partial` is a `ToolLoopPartial` (the finished steps, the transcript so far and
 * the failed step's partial completion); an AbortError when `options.signal` aborts.
 */
export const runChatToolLoop = entryPoints.run;

/**
 * Starts the tool loop over Chat Completions as one event stream over all steps (see {@link runChatToolLoop} for the
 * request and the options); it starts now, whether or not anyone iterates, and `final()` resolves to the result or
 * rejects like {@link runChatToolLoop}.
 */
export const streamChatToolLoop = entryPoints.stream;

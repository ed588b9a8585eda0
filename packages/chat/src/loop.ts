/**
 * The tool loop over Chat Completions: the chat {@link ToolLoopAdapter} for `runToolLoop` / `streamToolLoop`.
 * Each step is one streaming request; the assistant turn goes back exactly as streamed.
 */
import {
  isTool,
  type ModelTurn,
  type NormalizedEvent,
  runToolLoop,
  streamToolLoop,
  type Tool,
  type ToolLoopAdapter,
  type ToolLoopEvent,
  type ToolLoopOptions,
  type ToolLoopResult,
  type ToolLoopStream,
  type ToolResult,
  type Transport,
} from '@ai4ts/core';
import { type ChatRequestOptions, streamChatCompletion } from './service.js';
import type { ChatCompletion, ChatCompletionRequest, ChatMessage } from './types.js';

/** The result of a chat tool loop: `messages` is the full transcript to send back next time. */
export type ChatToolLoopResult = ToolLoopResult<ChatCompletionRequest, ChatCompletion, ChatMessage>;
/** A streamed chat tool loop. */
export type ChatToolLoopStream = ToolLoopStream<ChatCompletionRequest, ChatCompletion, ChatMessage>;
/** One event of a streamed chat tool loop, tagged with its step. */
export type ChatToolLoopEvent = ToolLoopEvent<ChatCompletionRequest, ChatCompletion>;
/** Loop options (tools, maxSteps, passthrough, hooks, signal) and the options of each model request. */
export interface ChatToolLoopOptions extends ToolLoopOptions<ChatCompletionRequest, ChatCompletion> {
  /** Per-request options (headers, timeouts, thinkTags); the loop's `signal` aborts every request. */
  request?: Omit<ChatRequestOptions, 'signal'>;
}

/** The model's events a streamed step forwards (the turn's own `finish` is reported by `step.finish`). */
const FORWARDED = ['content', 'reasoning', 'tool_call.start', 'tool_call.delta', 'tool_call.done', 'usage'] as const;

/**
 * The Chat Completions adapter of the tool loop. Every step streams (`streamChatCompletion`), so argument strings
 * are kept exactly as produced; `options` are the per-request options (headers, timeouts, thinkTags).
 */
export function chatToolLoopAdapter(
  transport: Transport,
  options: ChatRequestOptions = {},
): ToolLoopAdapter<ChatCompletionRequest, ChatCompletion, ChatMessage> {
  return {
    send(request, { signal, emit }) {
      const stream = streamChatCompletion(transport, request, { ...options, signal });
      if (emit) for (const name of FORWARDED) stream.on(name, (event: NormalizedEvent) => emit(event));
      return stream.final();
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
      };
    },
    getMessages: (request) => request.messages,
    withMessages: (request, messages) => ({ ...request, messages }),
    assistantMessages(completion) {
      const message = completion.choices[0]?.message;
      if (!message) return [];
      const { content, reasoning_content, tool_calls } = message;
      return [
        {
          role: 'assistant',
          content,
          ...(reasoning_content === undefined ? {} : { reasoning_content }),
          ...(tool_calls?.length ? { tool_calls: tool_calls.map((call) => ({ ...call, function: { ...call.function } })) } : {}),
        },
      ];
    },
    toolMessages: (results: readonly ToolResult[]) =>
      results.map((result) => ({ role: 'tool', tool_call_id: result.toolCallId, content: result.content })),
    parallelToolCalls: (request) => request.parallel_tool_calls !== false,
  };
}

/**
 * The loop options a request carries (its `defineTool` tools, `maxSteps`, `passThroughToolCalls` and hooks),
 * overridden by the defined fields of `options`.
 */
function loopOptions(request: ChatCompletionRequest, options: ChatToolLoopOptions): ChatToolLoopOptions {
  const fields = request as ChatCompletionRequest & ChatToolLoopOptions;
  const merged: Record<string, unknown> = {
    tools: (request.tools ?? []).filter((tool): tool is Tool => isTool(tool)),
  };
  for (const key of ['maxSteps', 'passThroughToolCalls', 'onStepFinish', 'onToolCall', 'prepareStep'] as const)
    if (fields[key] !== undefined) merged[key] = fields[key];
  for (const [key, value] of Object.entries(options)) if (value !== undefined) merged[key] = value;
  return merged as ChatToolLoopOptions;
}

/**
 * Runs the tool loop over Chat Completions to the end. Tools made by `defineTool` in `request.tools`, and the
 * request's `maxSteps`, `passThroughToolCalls` and hooks configure the loop (never sent to the API); `options`
 * override them. Rejects with an Ai4tsError whose `partial` is a `ToolLoopPartial`.
 */
export function runChatToolLoop(
  transport: Transport,
  request: ChatCompletionRequest,
  options: ChatToolLoopOptions = {},
): Promise<ChatToolLoopResult> {
  return runToolLoop(chatToolLoopAdapter(transport, options.request), request, loopOptions(request, options));
}

/**
 * Starts the tool loop over Chat Completions as one event stream over all steps (see {@link runChatToolLoop} for
 * the options); `.final()` resolves to the result. The loop starts now, whether or not anyone iterates.
 */
export function streamChatToolLoop(
  transport: Transport,
  request: ChatCompletionRequest,
  options: ChatToolLoopOptions = {},
): ChatToolLoopStream {
  return streamToolLoop(chatToolLoopAdapter(transport, options.request), request, loopOptions(request, options));
}

/**
 * The tool loop over Anthropic Messages: the Messages {@link ToolLoopAdapter} for `runToolLoop` / `streamToolLoop`.
 * Each step is one streamed request; the assistant turn goes back as received (thinking with its signature,
 * `input_error` stripped) and the results go back as one user message of tool_result blocks.
 */
import {
  isTool,
  type ModelTurn,
  type NormalizedEvent,
  type RequestOptions,
  runToolLoop,
  streamToolLoop,
  type Tool,
  type ToolLoopAdapter,
  type ToolLoopEvent,
  type ToolLoopOptions,
  type ToolLoopResult,
  type ToolLoopStream,
  type Transport,
  toAnthropicTool,
} from '@ai4ts/core';
import { toChatUsage, toFinishReason } from './chat.js';
import { MessagesStreamListener } from './listener.js';
import { streamMessage } from './service.js';
import { toAssistantTurn, toToolCalls, toToolResultTurn } from './turns.js';
import type { Message, MessageCreateParams, MessageParam, TextBlock } from './types.js';

/** A Messages request whose `tools` may also hold `defineTool` objects (sent as Anthropic tools). */
export type MessagesToolLoopRequest = {
  [K in keyof MessageCreateParams as K extends 'tools' ? never : K]: MessageCreateParams[K];
} & { tools?: Array<Tool | WireTool> };

type WireTool = NonNullable<MessageCreateParams['tools']>[number];

/** The result of a Messages tool loop: `messages` is the full transcript to send back next time. */
export type MessagesToolLoopResult = ToolLoopResult<MessagesToolLoopRequest, Message, MessageParam>;
/** A streamed Messages tool loop. */
export type MessagesToolLoopStream = ToolLoopStream<MessagesToolLoopRequest, Message, MessageParam>;
/** One event of a streamed Messages tool loop, tagged with its step. */
export type MessagesToolLoopEvent = ToolLoopEvent<MessagesToolLoopRequest, Message>;
/** Loop options (tools, maxSteps, passthrough, hooks, signal) and the options of each model request. */
export interface MessagesToolLoopOptions extends ToolLoopOptions<MessagesToolLoopRequest, Message> {
  /** Per-request options (headers, timeouts); the loop's `signal` aborts every request. */
  request?: Omit<RequestOptions, 'signal'>;
}

/** The model's events a streamed step forwards (the turn's own `finish` is reported by `step.finish`). */
const FORWARDED = ['content', 'reasoning', 'tool_call.start', 'tool_call.delta', 'tool_call.done', 'usage'] as const;

/** The request as sent: `defineTool` objects become Anthropic tools. */
function toWire(request: MessagesToolLoopRequest): MessageCreateParams {
  if (!request.tools?.some(isTool)) return request as MessageCreateParams;
  return { ...request, tools: request.tools.map((tool) => (isTool(tool) ? (toAnthropicTool(tool) as WireTool) : tool)) };
}

/**
 * The Messages adapter of the tool loop. Every step streams ({@link streamMessage}); `options` are the per-request
 * options (headers, timeouts).
 */
export function messagesToolLoopAdapter(
  transport: Transport,
  options: Omit<RequestOptions, 'signal'> = {},
): ToolLoopAdapter<MessagesToolLoopRequest, Message, MessageParam> {
  return {
    send(request, { signal, emit }) {
      const listener = new MessagesStreamListener();
      if (emit) for (const name of FORWARDED) listener.on(name, (event: NormalizedEvent) => emit(event));
      return streamMessage(transport, toWire(request), { ...options, signal, listener });
    },
    readTurn(message): ModelTurn {
      return {
        toolCalls: toToolCalls(message),
        finishReason: toFinishReason(message.stop_reason) ?? 'stop',
        text: message.content
          .filter((block) => block.type === 'text')
          .map((block) => (block as TextBlock).text)
          .join(''),
        usage: message.usage ? toChatUsage(message.usage) : undefined,
      };
    },
    getMessages: (request) => request.messages,
    withMessages: (request, messages) => ({ ...request, messages }),
    assistantMessages: (message) => [toAssistantTurn(message)],
    toolMessages: (results) => (results.length === 0 ? [] : [toToolResultTurn(results)]),
    parallelToolCalls: (request) => request.tool_choice?.disable_parallel_tool_use !== true,
  };
}

/** The loop options: the `defineTool` tools of `request.tools`, overridden by the defined fields of `options`. */
function loopOptions(request: MessagesToolLoopRequest, options: MessagesToolLoopOptions): MessagesToolLoopOptions {
  const merged: Record<string, unknown> = { tools: (request.tools ?? []).filter(isTool) };
  for (const [key, value] of Object.entries(options)) if (value !== undefined) merged[key] = value;
  return merged as MessagesToolLoopOptions;
}

/**
 * Runs the tool loop over Anthropic Messages to the end. Tools made by `defineTool` in `request.tools` run in the
 * loop and go on the wire as Anthropic tools; `options.tools` overrides them. A tool_use whose input is not valid
 * JSON never runs: the model gets an `is_error` tool_result. Rejects with an Ai4tsError whose `partial` is a
 * `ToolLoopPartial`.
 */
export function runMessagesToolLoop(
  transport: Transport,
  request: MessagesToolLoopRequest,
  options: MessagesToolLoopOptions = {},
): Promise<MessagesToolLoopResult> {
  return runToolLoop(messagesToolLoopAdapter(transport, options.request), request, loopOptions(request, options));
}

/**
 * Starts the tool loop over Anthropic Messages as one event stream over all steps, each event tagged with its
 * step (see {@link runMessagesToolLoop} for the options); `.final()` resolves to the result.
 */
export function streamMessagesToolLoop(
  transport: Transport,
  request: MessagesToolLoopRequest,
  options: MessagesToolLoopOptions = {},
): MessagesToolLoopStream {
  return streamToolLoop(messagesToolLoopAdapter(transport, options.request), request, loopOptions(request, options));
}

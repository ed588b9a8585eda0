/**
 * The tool loop over Anthropic Messages: the Messages {@link ToolLoopAdapter} for core's engine, and
 * {@link runMessagesToolLoop} / {@link streamMessagesToolLoop}. Each step is one streamed request; the assistant
 * turn goes back as received (thinking with its signature, unknown blocks and fields kept, `input_error` stripped)
 * and the results go back as one user message of tool_result blocks.
 */
import {
  type LoopFields,
  type ModelTurn,
  runToolLoop,
  streamToolLoop,
  type Tool,
  type ToolLoopAdapter,
  type ToolLoopEvent,
  type ToolLoopResult,
  type ToolLoopStream,
  type Transport,
  type WithoutTools,
} from '@ai4ts/core';
import { forwardStep, loopOptionsOf } from '@ai4ts/core/internal';
import { toChatUsage, toFinishReason } from './convert.js';
import { streamWireBody } from './stream.js';
import { type MessageRequestOptions, toWireRequest } from './request.js';
import { toAssistantTurn, toToolCalls, toToolResultTurn } from './turns.js';
import {
  isTextBlock,
  type Message,
  type MessageCreateParams,
  type MessageParam,
  type MessageTool,
} from './types.js';

/**
 * A Messages request that runs the tool loop: `tools` may also hold `defineTool` tools (sent as Anthropic tools),
 * and the loop's settings (`maxSteps`, `passThroughToolCalls`, `concurrency`, the hooks) sit beside the API's
 * fields. The loop fields never reach the wire. The hooks see this same type (`prepareStep` gets and returns one).
 */
export interface MessageLoopRequest
  extends WithoutTools<MessageCreateParams>,
    LoopFields<MessageLoopRequest, Message> {
  tools?: readonly (Tool | MessageTool)[];
}

/** The result of a Messages tool loop: `messages` is the full transcript to send back next time. */
export type MessagesToolLoopResult = ToolLoopResult<MessageLoopRequest, Message, MessageParam>;
/** A streamed Messages tool loop. */
export type MessagesToolLoopStream = ToolLoopStream<MessageLoopRequest, Message, MessageParam>;
/** One event of a streamed Messages tool loop, tagged with its step. */
export type MessagesToolLoopEvent = ToolLoopEvent<MessageLoopRequest, Message>;


/**
 * The Messages adapter of the tool loop. Every step streams (the `streamMessage` step, so argument strings stay
 * exactly as streamed); `options` are the per-request options applied to every step (headers, timeouts,
 * `extraBody`), the step's signal replacing theirs.
 */
export function messagesToolLoopAdapter(
  transport: Transport,
  options: MessageRequestOptions = {},
): ToolLoopAdapter<MessageLoopRequest, Message, MessageParam> {
  return {
    send(request, { signal, emit }) {
      return forwardStep(streamWireBody(transport, toWireRequest(request), { ...options, signal }), emit);
    },
    readTurn(message): ModelTurn {
      return {
        toolCalls: toToolCalls(message),
        finishReason: toFinishReason(message.stop_reason) ?? 'stop',
        text: message.content
          .filter(isTextBlock)
          .map((block) => block.text)
          .join(''),
        usage: toChatUsage(message.usage),
      };
    },
    getMessages: (request) => request.messages,
    withMessages: (request, messages) => ({ ...request, messages }),
    assistantMessages: (message) => [toAssistantTurn(message)],
    toolMessages: (results) => (results.length === 0 ? [] : [toToolResultTurn(results)]),
    parallelToolCalls: ({ tool_choice: choice }) =>
      choice === undefined || choice.type === 'none' || choice.disable_parallel_tool_use !== true,
  };
}

/**
 * Runs the tool loop over Anthropic Messages to the end. Its settings come from the request (`tools`, `maxSteps`,
 * `passThroughToolCalls`, `concurrency`, the hooks); `options` are the per-request options of every step, and
 * `options.signal` aborts the loop. A tool_use whose input is not valid JSON never runs: the model gets an
 * `is_error` tool_result.
 *
 * @throws (rejects with) Ai4tsError for an invalid request (at the first step), RangeError for a bad `maxSteps`,
 * and every step's typed error; its `partial` is a `ToolLoopPartial` (the finished steps, the transcript, and the
 * failed step's partial message).
 */
export function runMessagesToolLoop(
  transport: Transport,
  request: MessageLoopRequest,
  options: MessageRequestOptions = {},
): Promise<MessagesToolLoopResult> {
  return runToolLoop(messagesToolLoopAdapter(transport, options), request, loopOptionsOf(request, options.signal));
}

/**
 * Starts the tool loop over Anthropic Messages as one event stream over all steps, each event tagged with its
 * step (see {@link runMessagesToolLoop} for the settings and the errors, which reject `final()`).
 */
export function streamMessagesToolLoop(
  transport: Transport,
  request: MessageLoopRequest,
  options: MessageRequestOptions = {},
): MessagesToolLoopStream {
  return streamToolLoop(messagesToolLoopAdapter(transport, options), request, loopOptionsOf(request, options.signal));
}

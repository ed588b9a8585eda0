/**
 * The tool loop over Anthropic Messages: the Messages {@link ToolLoopAdapter} for core's engine, and
 * {@link runMessagesToolLoop} / {@link streamMessagesToolLoop}. Each step is one streamed request; the assistant
 * turn goes back as received (thinking with its signature, unknown blocks and fields kept, `input_error` stripped)
 * and the results go back as one user message of tool_result blocks.
 */
import type {
  LoopFields,
  ModelTurn,
  NormalizedEvent,
  RetryEvent,
  Tool,
  ToolLoopAdapter,
  ToolLoopEvent,
  ToolLoopResult,
  ToolLoopStream,
  Transport,
  WithoutTools,
} from '@ai4ts/core';
import { forwardStep, toolLoopEntryPoints, outputOf } from '@ai4ts/core/internal';
import { toChatUsage, toFinishReason } from './convert.js';
import { streamWireBody } from './stream.js';
import { type MessageRequestOptions, outputMode, toWireRequest } from './request.js';
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

/**
 * The result of a Messages tool loop: `messages` is the full transcript to send back next time; `object` the
 * structured answer (of type `Obj`) when the request has `output`.
 */
export type MessagesToolLoopResult<Obj = unknown> = ToolLoopResult<MessageLoopRequest, Message, MessageParam, Obj>;
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
  // With `output` as a forced tool (see `outputMode`): that tool's name. Its call is the answer, not a tool to run.
  let outputTool: string | undefined;
  return {
    send(request, { signal, emit, telemetry }) {
      const output = outputOf(request);
      const quirks = transport.provider.quirks;
      outputTool = output && outputMode(request.model, quirks) === 'tool' ? output.name : undefined;
      const handle = streamWireBody(transport, toWireRequest(request, quirks), { ...options, signal, telemetry });
      return forwardStep(handle, emit && outputTool !== undefined ? answerAsContent(outputTool, emit) : emit);
    },
    readTurn(message): ModelTurn {
      const calls = toToolCalls(message);
      const answer = calls.find((call) => call.name === outputTool);
      const finishReason = toFinishReason(message.stop_reason) ?? 'stop';
      const text = message.content
        .filter(isTextBlock)
        .map((block) => block.text)
        .join('');
      return {
        // The forced tool's call is the final answer: no tool runs.
        toolCalls: answer ? [] : calls,
        finishReason: answer && finishReason === 'tool_calls' ? 'stop' : finishReason,
        text: answer ? answer.arguments : text,
        usage: toChatUsage(message.usage),
        refusal: message.stop_reason === 'refusal' ? text : undefined,
      };
    },
    getMessages: (request) => request.messages,
    withMessages: (request, messages) => ({ ...request, messages }),
    assistantMessages: (message) => [toAssistantTurn(message)],
    toolMessages: (results) => (results.length === 0 ? [] : [toToolResultTurn(results)]),
    parallelToolCalls: ({ tool_choice: choice }) =>
      choice === undefined || choice.type === 'none' || choice.disable_parallel_tool_use !== true,
    withTools: (request, tools) => ({ ...request, tools: [...(request.tools ?? []), ...tools] }),
    telemetry: (requested) => transport.telemetry(options, requested),
    // A rejected forced-tool answer is a tool_use: it gets its tool_result, an error holding the feedback.
    repairMessages: (message, feedback) => {
      const answer = toToolCalls(message).find((call) => call.name === outputTool);
      return answer
        ? [toToolResultTurn([{ toolCallId: answer.id, content: feedback, isError: true }])]
        : [{ role: 'user', content: feedback }];
    },
  };
}

/**
 * The forced output tool's argument deltas, as the answer's `content` events (the JSON text, which the loop parses
 * into `object` events); its `tool_call.*` events are not forwarded, since no tool runs.
 */
function answerAsContent(
  name: string,
  emit: (event: NormalizedEvent | RetryEvent) => void,
): (event: NormalizedEvent | RetryEvent) => void {
  let id: string | undefined;
  let snapshot = '';
  return (event) => {
    if (event.type === 'tool_call.start' && event.name === name) id = event.id;
    else if ((event.type === 'tool_call.delta' || event.type === 'tool_call.done') && event.id === id) {
      if (event.type === 'tool_call.delta' && event.delta !== '') {
        snapshot += event.delta;
        emit({ type: 'content', delta: event.delta, snapshot, choice: event.choice });
      }
    } else emit(event);
  };
}

const entryPoints = toolLoopEntryPoints(messagesToolLoopAdapter);

/**
 * Runs the tool loop over Anthropic Messages to the end. Its settings come from the request (`tools`, `maxSteps`,
 * `passThroughToolCalls`, `concurrency`, the hooks, `output`, whose schema types the result's `object`); `options`
 * are the per-request options of every step, and `options.signal` aborts the loop. A tool_use whose input is not
 * valid JSON never runs: the model gets an `is_error` tool_result.
 *
 * @throws (rejects with) Ai4tsError for an invalid request (at the first step), RangeError for a bad `maxSteps`,
 * and every step's typed error; its `partial` is a `ToolLoopPartial` (the finished steps, the transcript, and the
 * failed step's partial message).
 */
export const runMessagesToolLoop = entryPoints.run;

/**
 * Starts the tool loop over Anthropic Messages as one event stream over all steps, each event tagged with its
 * step (see {@link runMessagesToolLoop} for the settings and the errors, which reject `final()`).
 */
export const streamMessagesToolLoop = entryPoints.stream;

/**
 * The tool loop over Anthropic Messages: its request and result types, and the message half of its adapter (core's
 * `ProtocolService` sends each step as one streamed request). The assistant turn goes back as received (thinking
 * with its signature, unknown blocks and fields kept, `input_error` stripped) and the results go back as one user
 * message of tool_result blocks.
 */
import type {
  LoopFields,
  LoopState,
  ModelTurn,
  ProviderQuirks,
  Tool,
  ToolLoopEvent,
  ToolLoopResult,
  ToolLoopStream,
  WithoutTools,
} from '@ai4ts/core';
import { type LoopTurns, outputOf, type StepEmit } from '@ai4ts/core/internal';
import { toChatUsage, toFinishReason } from './convert.js';
import { outputMode } from './request.js';
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
export interface MessagesLoopRequest
  extends WithoutTools<MessageCreateParams>,
    LoopFields<MessagesLoopRequest, Message> {
  tools?: readonly (Tool | MessageTool)[];
}

/**
 * The result of a Messages tool loop: `messages` is the full transcript to send back next time; `object` the
 * structured answer (of type `Obj`) when the request has `output`.
 */
export type MessagesToolLoopResult<Obj = unknown> = ToolLoopResult<MessagesLoopRequest, Message, MessageParam, Obj>;
/** A streamed Messages tool loop. */
export type MessagesToolLoopStream = ToolLoopStream<MessagesLoopRequest, Message, MessageParam>;
/** One event of a streamed Messages tool loop, tagged with its step. */
export type MessagesToolLoopEvent = ToolLoopEvent<MessagesLoopRequest, Message>;

/** The state of a suspended Messages tool loop (`result.state`): plain JSON, resumed with `resume(state, { ... })`. */
export type MessagesLoopState = LoopState<MessagesLoopRequest, MessageParam>;


/**
 * The message half of the Messages tool-loop adapter: the assistant turn goes back as received, the results as one
 * user message of tool_result blocks. With `output` as a forced tool (see `outputMode`), that tool's call is the
 * answer, not a tool to run; the adapter remembers its name for the step (core makes one per loop).
 */
export function messagesLoopTurns(quirks: ProviderQuirks): LoopTurns<MessagesLoopRequest, Message, MessageParam> {
  let outputTool: string | undefined;
  return {
    stepRequest(request) {
      const output = outputOf(request);
      outputTool = output && outputMode(request.model, quirks) === 'tool' ? output.name : undefined;
      return request;
    },
    stepEmit: (_request, emit) => (outputTool === undefined ? emit : answerAsContent(outputTool, emit)),
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
function answerAsContent(name: string, emit: StepEmit): StepEmit {
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

/**
 * The tool loop over Chat Completions: its request and result types, and the message half of its adapter (core's
 * `ProtocolService` sends each step as one streamed request).
 */
import type {
  LoopFields,
  LoopState,
  ModelTurn,
  Tool,
  ToolLoopEvent,
  ToolLoopResult,
  ToolLoopStream,
  ToolResult,
  WithoutTools,
} from '@ai4ts/core';
import type { LoopTurns } from '@ai4ts/core/internal';
import type { ChatCompletion, ChatCompletionCreateParams, ChatMessage, ChatWireTool } from './types.js';

/**
 * A chat request that runs the tool loop: the plain request's fields, `tools` that may hold `defineTool` tools, and
 * the loop's fields (`maxSteps`, `passThroughToolCalls`, `concurrency` and the hooks), which never reach the wire.
 * The hooks see this same type (`prepareStep` gets and returns one).
 */
export interface ChatLoopRequest
  extends WithoutTools<ChatCompletionCreateParams>,
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

/** The state of a suspended Chat tool loop (`result.state`): plain JSON, resumed with `resume(state, { ... })`. */
export type ChatLoopState = LoopState<ChatLoopRequest, ChatMessage>;


/**
 * The message half of the Chat Completions tool-loop adapter: the assistant turn goes back exactly as streamed, each
 * result as one `tool` message.
 */
export function chatLoopTurns(): LoopTurns<ChatLoopRequest, ChatCompletion, ChatMessage> {
  return {
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
    repairMessages: (_completion, feedback) => [{ role: 'user', content: feedback }],
  };
}

/**
 * The tool loop over Converse: its request and result types, and the message half of its adapter (core's
 * `ProtocolService` sends each step as one streamed request). The assistant message goes back as received (each
 * reasoning block with its `signature`, which Claude requires with the calls that follow it), the results as one
 * user message of `toolResult` blocks.
 */
import type { LoopFields, ModelTurn, Tool, ToolLoopEvent, ToolLoopResult, ToolLoopStream, WithoutTools } from '@ai4ts/core';
import type { LoopTurns } from '@ai4ts/core/internal';
import { toChatUsage, toFinishReason } from './convert.js';
import { textOf, toToolCalls, toToolResultMessage } from './turns.js';
import type { ConverseRequest, ConverseResponse, Message } from './types.js';

/**
 * A Converse request that runs the tool loop: `tools` holds `defineTool` tools (sent in `toolConfig.tools`), and the
 * loop's settings (`maxSteps`, `passThroughToolCalls`, `concurrency`, the hooks) sit beside the API's fields. The
 * loop fields never reach the wire.
 */
export interface ConverseLoopRequest
  extends WithoutTools<ConverseRequest>,
    LoopFields<ConverseLoopRequest, ConverseResponse> {
  tools?: readonly Tool[];
}

/** The result of a Converse tool loop: `messages` is the full transcript to send back next time. */
export type ConverseToolLoopResult<Obj = unknown> = ToolLoopResult<ConverseLoopRequest, ConverseResponse, Message, Obj>;
/** A streamed Converse tool loop. */
export type ConverseToolLoopStream = ToolLoopStream<ConverseLoopRequest, ConverseResponse, Message>;
/** One event of a streamed Converse tool loop, tagged with its step. */
export type ConverseToolLoopEvent = ToolLoopEvent<ConverseLoopRequest, ConverseResponse>;

/** The message half of the Converse tool-loop adapter. */
export function converseLoopTurns(): LoopTurns<ConverseLoopRequest, ConverseResponse, Message> {
  return {
    readTurn(response): ModelTurn {
      const finishReason = toFinishReason(response.stopReason);
      return {
        toolCalls: toToolCalls(response),
        finishReason,
        text: textOf(response),
        usage: response.usage ? toChatUsage(response.usage) : undefined,
        refusal: finishReason === 'content_filter' ? `Bedrock stopped the answer: ${response.stopReason}` : undefined,
      };
    },
    getMessages: (request) => request.messages,
    withMessages: (request, messages) => ({ ...request, messages }),
    assistantMessages: (response) => [response.output.message],
    toolMessages: (results) => (results.length === 0 ? [] : [toToolResultMessage(results)]),
    withTools: (request, tools) => ({ ...request, tools: [...(request.tools ?? []), ...tools] }),
    repairMessages: (_response, feedback) => [{ role: 'user', content: [{ text: feedback }] }],
  };
}

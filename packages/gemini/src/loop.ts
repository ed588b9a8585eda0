/**
 * The tool loop over Gemini: its request and result types, and the message half of its adapter (core's
 * `ProtocolService` sends each step as one streamed request). The model turn goes back with its parts as received
 * (every `thoughtSignature` on its part, which Gemini 3 requires on every later turn), the results as one user turn
 * of `functionResponse` parts.
 */
import type { LoopFields, ModelTurn, Tool, ToolLoopEvent, ToolLoopResult, ToolLoopStream, WithoutTools } from '@ai4ts/core';
import type { LoopTurns } from '@ai4ts/core/internal';
import { toChatUsage, toFinishReason } from './convert.js';
import { apiCallIds, toFunctionResponseTurn, toModelTurn, toToolCalls } from './turns.js';
import { type Content, type GenerateContentRequest, type GenerateContentResponse, type GeminiTool, isTextPart } from './types.js';

/**
 * A Gemini request that runs the tool loop: `tools` may also hold `defineTool` tools (sent as function
 * declarations), and the loop's settings (`maxSteps`, `passThroughToolCalls`, `concurrency`, the hooks) sit beside
 * the API's fields. The loop fields never reach the wire.
 */
export interface GeminiLoopRequest
  extends WithoutTools<GenerateContentRequest>,
    LoopFields<GeminiLoopRequest, GenerateContentResponse> {
  tools?: readonly (Tool | GeminiTool)[];
}

/** The result of a Gemini tool loop: `messages` is the full transcript (`contents`) to send back next time. */
export type GeminiToolLoopResult<Obj = unknown> = ToolLoopResult<GeminiLoopRequest, GenerateContentResponse, Content, Obj>;
/** A streamed Gemini tool loop. */
export type GeminiToolLoopStream = ToolLoopStream<GeminiLoopRequest, GenerateContentResponse, Content>;
/** One event of a streamed Gemini tool loop, tagged with its step. */
export type GeminiToolLoopEvent = ToolLoopEvent<GeminiLoopRequest, GenerateContentResponse>;

/**
 * The message half of the Gemini tool-loop adapter. Calls the API gave an `id` get it back on their
 * `functionResponse`; calls without one are answered by name and position, as Gemini expects. The ids are read from
 * the model turn the results answer, the transcript's last: a loop resumed in another process has only that.
 */
export function geminiLoopTurns(): LoopTurns<GeminiLoopRequest, GenerateContentResponse, Content> {
  return {
    readTurn(response): ModelTurn {
      const candidate = response.candidates?.[0];
      const calls = toToolCalls(response);
      const finishReason = candidate?.finishReason === undefined ? 'stop' : toFinishReason(candidate.finishReason, calls.length > 0);
      let text = '';
      for (const part of candidate?.content?.parts ?? []) if (isTextPart(part) && part.thought !== true) text += part.text;
      return {
        toolCalls: calls,
        finishReason,
        text,
        usage: response.usageMetadata ? toChatUsage(response.usageMetadata) : undefined,
        refusal:
          finishReason === 'content_filter'
            ? (candidate?.finishMessage ?? `Gemini stopped the answer: ${String(candidate?.finishReason)}`)
            : undefined,
      };
    },
    getMessages: (request) => request.contents,
    withMessages: (request, contents) => ({ ...request, contents }),
    assistantMessages: (response) => [toModelTurn(response)],
    toolMessages: (results, transcript) =>
      results.length === 0 ? [] : [toFunctionResponseTurn(results, apiCallIds(transcript.findLast((content) => content.role === 'model')))],
    withTools: (request, tools) => ({ ...request, tools: [...(request.tools ?? []), ...tools] }),
    repairMessages: (_response, feedback) => [{ role: 'user', parts: [{ text: feedback }] }],
  };
}

/**
 * Gemini's `generateContent`, defined once ({@link GEMINI_PROTOCOL}): everything the service and the front door know
 * of this protocol comes from here.
 */
import type { ProtocolDefinition } from '@ai4ts/core/internal';
import { ProtocolError } from '@ai4ts/core';
import { isRecord } from '@ai4ts/core/internal';
import { toChatUsage, toFinishReason } from './convert.js';
import { GeminiStreamListener } from './listener.js';
import { type GeminiLoopRequest, geminiLoopTurns } from './loop.js';
import {
  GEMINI_PATH,
  type GeminiRequestOptions,
  geminiEndpoint,
  toRequestBody,
  toWireRequest,
} from './request.js';
import { GeminiStream, isGenerateContentResponse } from './stream.js';
import { type Content, GEMINI_REQUEST_FIELDS, type GenerateContentResponse, isFunctionCallPart } from './types.js';

/** The definition of Gemini's `generateContent`. */
export type GeminiProtocol = ProtocolDefinition<
  GeminiLoopRequest,
  GenerateContentResponse,
  Content,
  GeminiStreamListener,
  GeminiStream,
  GeminiRequestOptions
>;

/**
 * Gemini: the model in the URL (`models/{model}:generateContent`, `:streamGenerateContent?alt=sse`), SSE chunks
 * that are each a whole `GenerateContentResponse` of the new parts, structured output as `responseJsonSchema`.
 */
export const GEMINI_PROTOCOL: GeminiProtocol = {
  name: 'gemini',
  path: GEMINI_PATH,
  requestFields: GEMINI_REQUEST_FIELDS,
  endpoint: geminiEndpoint,
  summarize: (response) => {
    const candidates = response.candidates ?? [];
    return {
      id: response.responseId,
      model: response.modelVersion,
      finishReasons: candidates.flatMap((candidate) =>
        candidate.finishReason === undefined
          ? []
          : [toFinishReason(candidate.finishReason, (candidate.content?.parts ?? []).some(isFunctionCallPart))],
      ),
      usage: response.usageMetadata ? toChatUsage(response.usageMetadata) : undefined,
      output: candidates.map((candidate) => candidate.content),
    };
  },
  isResult: isGenerateContentResponse,
  toWireRequest,
  createBody: toRequestBody,
  streamBody: toRequestBody,
  createListener: () => new GeminiStreamListener(),
  parseCreated: readCreated,
  acceptsJsonStream: false,
  loopTurns: geminiLoopTurns,
  Stream: GeminiStream,
};

/**
 * A `generateContent` answer, read by the same listener as a stream of one chunk: a blocked prompt, an `{ error }`
 * or a candidate without a finishReason fail the same way in both.
 */
function readCreated(json: unknown, text: string): GenerateContentResponse {
  if (!isRecord(json)) throw new ProtocolError('The response is not a Gemini GenerateContentResponse', { line: text });
  const listener = new GeminiStreamListener({ trace: false });
  listener.push(json);
  return listener.end();
}

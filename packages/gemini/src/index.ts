/**
 * @ai4ts/gemini: Gemini's native `generateContent` protocol. `GeminiStreamListener` folds stream chunks into a
 * response and emits ai4ts's normalized events, `collectGemini` reads an SSE stream to a response, `GeminiService`
 * sends requests over a Transport, `runGeminiToolLoop` / `streamGeminiToolLoop` run the tool loop.
 */
export { type CollectGeminiOptions, collectGemini } from './collect.js';
export { toChatUsage, toFinishReason } from './convert.js';
export { PromptBlockedError } from './errors.js';
export { type GeminiStreamEvents, GeminiStreamListener, type GeminiStreamListenerOptions } from './listener.js';
export type { GeminiLoopRequest, GeminiToolLoopEvent, GeminiToolLoopResult, GeminiToolLoopStream } from './loop.js';
export { GEMINI_PROTOCOL, type GeminiProtocol } from './protocol.js';
export { GEMINI_PATH, type GeminiRequestOptions, geminiEndpoint, toGeminiTool } from './request.js';
export {
  GeminiService,
  geminiToolLoopAdapter,
  runGeminiToolLoop,
  streamGeminiToolLoop,
  streamGenerateContent,
} from './service.js';
export { GeminiStream, isGenerateContentResponse } from './stream.js';
export { apiCallIds, toFunctionResponseTurn, toModelTurn, toolCallId, toToolCalls } from './turns.js';
export * from './types.js';

/**
 * The front door's surface, pinned: a value added to or removed from 'ai4ts' fails here, so the change is a
 * deliberate edit of this list (and of the changeset when a name leaves). Plumbing stays in its own package.
 */
import { describe, expect, it } from 'vitest';

const VALUES = [
  'AbortError',
  'Ai4ts',
  'Ai4tsError',
  'ApiError',
  'AuthenticationError',
  'BadRequestError',
  'CHAT_PROTOCOL',
  'CONVERSE_PROTOCOL',
  'ChatCompletionCreateParamsSchema',
  'ChatCompletionRequestSchema',
  'ChatService',
  'ChatStream',
  'ChatStreamListener',
  'ConnectionError',
  'ConverseService',
  'ConverseStream',
  'ConverseStreamListener',
  'DEFAULT_PRICES',
  'DEFAULT_TIMEOUTS',
  'EmbeddingsClient',
  'GEMINI_PROTOCOL',
  'GeminiService',
  'GeminiStream',
  'GeminiStreamListener',
  'LOOP_STATE_VERSION',
  'LoopStateError',
  'MESSAGES_PROTOCOL',
  'MessageStream',
  'MessageStreamListener',
  'MessagesService',
  'MessagesStream',
  'MessagesStreamListener',
  'OutputRefusalError',
  'OutputValidationError',
  'PROVIDERS',
  'PromptBlockedError',
  'ProtocolClient',
  'ProtocolError',
  'RESPONSES_PROTOCOL',
  'RateLimitError',
  'ResponseStream',
  'ResponseStreamListener',
  'ResponsesClient',
  'ResponsesService',
  'ResponsesStream',
  'ResponsesStreamListener',
  'RetryPolicy',
  'ServerError',
  'StreamIncompleteError',
  'TimeoutError',
  'ToolContent',
  'ToolError',
  'ToolLoopStream',
  'Transport',
  'UnknownFieldError',
  'collectChatCompletion',
  'collectConverse',
  'collectGemini',
  'collectMessage',
  'collectResponse',
  'cosineSimilarity',
  'createClient',
  'defineTool',
  'googleAccessToken',
  'hasToolCall',
  'isChatCompletion',
  'isConverseResponse',
  'isGenerateContentResponse',
  'isKnownBlock',
  'isMessage',
  'isResponseObject',
  'isTextBlock',
  'isThinkingBlock',
  'isTool',
  'isToolUseBlock',
  'resolveProvider',
  'resultInfo',
  'stepCountIs',
  'structuredOutput',
  'textIncludes',
  'toAnthropicTool',
  'toChatTool',
  'toConverseTool',
  'toGeminiTool',
  'toResponsesTool',
  'topK',
  'usageExceeds',
  'vertex',
];

/** Values that belong to @ai4ts/sse, @ai4ts/core/internal or a protocol package's builders, not to the front door. */
const PLUMBING = [
  'SseDecoder',
  'parseSse',
  'encodeSse',
  'connectSse',
  'isRetryableStatus',
  'readSseStream',
  'LOOP_FIELDS',
  'ProtocolService',
  'ListenerStream',
  'EventStream',
  'readInto',
  'collectInto',
  'runToolLoop',
  'streamChatCompletion',
  'streamGenerateContent',
  'RESUMABLE_HEADER',
  'embedMany',
  'decodeFloat32Base64',
];

describe("the values 'ai4ts' exports", () => {
  it('are exactly the listed ones', async () => {
    expect(Object.keys(await import('ai4ts')).sort()).toEqual(VALUES);
  });

  it('include no plumbing', async () => {
    const exported = new Set(Object.keys(await import('ai4ts')));
    expect(PLUMBING.filter((name) => exported.has(name))).toEqual([]);
  });
});

// Types leave no trace at run time; the compiler checks these (`npm run typecheck` covers the tests).
// @ts-expect-error RequestInit_ is @ai4ts/core/internal's
export type NoRequestInit = import('ai4ts').RequestInit_;
// @ts-expect-error StreamRun is @ai4ts/core/internal's
export type NoStreamRun = import('ai4ts').StreamRun;
// @ts-expect-error OtelTracer is @ai4ts/core/internal's
export type NoOtelTracer = import('ai4ts').OtelTracer;
// @ts-expect-error SseEvent is @ai4ts/sse's
export type NoSseEvent = import('ai4ts').SseEvent;

/**
 * ai4ts: a streaming-first TypeScript SDK for LLM APIs with an automatic tool loop. `new Ai4ts(options)` is the
 * front door.
 *
 * The rule for what is listed here: what a user of the client touches. The client and its options, the errors it
 * throws, the events and results it yields, tools and structured output, cost and logging, and per protocol the wire
 * types a request or result is typed with (under the vendor SDK's names), its stream handle, listener, service,
 * collector and guards. Everything is listed by name, so a new export is a deliberate edit (test/surface.test.ts
 * pins it). What only builders need stays in its package: raw SSE (`parseSse`, `encodeSse`, `connectSse`,
 * `SseDecoder`) is `@ai4ts/sse`'s, the stream's wire events and the function forms (`streamChatCompletion`, ...) are
 * the protocol packages', the listener contract and loop engine are `@ai4ts/core`'s, and protocol-author plumbing is
 * `@ai4ts/core/internal`'s.
 */

// The client.
export {
  Ai4ts,
  type Ai4tsOptions,
  type ChatClient,
  type ChatMiddlewareContext,
  type ConverseClient,
  type ConverseMiddlewareContext,
  createClient,
  type GeminiClient,
  type GeminiMiddlewareContext,
  type MessagesClient,
  type MessagesMiddlewareContext,
  type Middleware,
  type MiddlewareContext,
  type ModelResult,
  type PlainRequest,
  type ProtocolCalls,
  ProtocolClient,
  type ProtocolDefinition,
  ResponsesClient,
  type ResponsesMiddlewareContext,
} from './client.js';
export { EmbeddingsClient } from './embeddings.js';

// Transport and providers: where requests go, with which retries and timeouts.
export {
  type AccessToken,
  type AccessTokenSource,
  type Backoff,
  DEFAULT_TIMEOUTS,
  type GoogleCredentials,
  googleAccessToken,
  type OnRetry,
  PROVIDERS,
  type ProviderName,
  type ProtocolName,
  type ProviderPreset,
  type ProviderQuirks,
  type RequestOptions,
  RetryPolicy,
  type RetryPolicyOptions,
  resolveProvider,
  type Timeouts,
  Transport,
  type TransportOptions,
  type VertexOptions,
  vertex,
} from '@ai4ts/core';

// Errors: every error a call throws is an Ai4tsError; `partial` holds what arrived before it.
export {
  AbortError,
  Ai4tsError,
  type Ai4tsErrorOptions,
  ApiError,
  type ApiErrorOptions,
  AuthenticationError,
  BadRequestError,
  ConnectionError,
  LoopStateError,
  type LoopStateProblem,
  type OutputIssue,
  OutputRefusalError,
  OutputValidationError,
  ProtocolError,
  RateLimitError,
  ServerError,
  StreamIncompleteError,
  TimeoutError,
  type TimeoutPhase,
  ToolError,
  UnknownFieldError,
} from '@ai4ts/core';

// Events: the normalized stream every protocol emits.
export type {
  ContentEvent,
  ErrorEvent,
  FinishEvent,
  FinishReason,
  NormalizedEvent,
  ReasoningEvent,
  RetryEvent,
  StreamEvent,
  ToolCallDeltaEvent,
  ToolCallDoneEvent,
  ToolCallStartEvent,
  ToolProgressEvent,
  ToolResultEvent,
  Usage,
  UsageEvent,
} from '@ai4ts/core';

// Tools and the tool loop.
export {
  defineTool,
  isTool,
  type PrepareStepContext,
  type StepFinishEvent,
  type StepStartEvent,
  type Tool,
  type ToolApprovalContext,
  type ToolCall,
  ToolContent,
  type ToolContext,
  type ToolDefinition,
  type ToolLoopDone,
  type ToolLoopEvent,
  type ToolLoopFinishEvent,
  type ToolLoopFinishReason,
  type ToolLoopOutcome,
  type ToolLoopPartial,
  type ToolLoopResult,
  type ToolLoopStatus,
  type ToolLoopStep,
  ToolLoopStream,
  type ToolLoopSuspended,
  type ToolNeedsApproval,
  type ToolResult,
  type ToolSource,
} from '@ai4ts/core';

// When the loop stops: stop conditions (`stopWhen`).
export {
  hasToolCall,
  type StopCondition,
  type StopConditionState,
  type StopWhen,
  stepCountIs,
  textIncludes,
  type UsageLimits,
  usageExceeds,
} from '@ai4ts/core';

// A suspended loop (approvals, mixed passthrough) and its resume.
export {
  type ApprovalDecision,
  type ApprovalRequestedEvent,
  LOOP_STATE_VERSION,
  type LoopResumeOptions,
  type LoopState,
  type HoldReason,
  type LoopCalls,
  type LoopStateCall,
  type LoopStateToolResult,
  type LoopSuspension,
  type PendingToolCall,
  type ResumeDecisions,
} from '@ai4ts/core';

// Structured output.
export {
  type DeepPartial,
  type ObjectEvent,
  type OutputLoopStream,
  type StructuredOutput,
  structuredOutput,
} from '@ai4ts/core';

// Observability: what a call cost, which request it was, and where its log lines go.
export {
  type Cost,
  DEFAULT_PRICES,
  type Logger,
  type LogLevel,
  type LogOptions,
  type ModelPrice,
  type Prices,
  type ResultInfo,
  resultInfo,
  type TelemetryOptions,
} from '@ai4ts/core';

// Embeddings and rerank (`client.embeddings`, `client.rerank`; their function forms are @ai4ts/core's), and vector
// helpers for tests and demos.
export {
  type CreateEmbeddingResponse,
  cosineSimilarity,
  type Embedding,
  type EmbeddingCreateParams,
  type EmbeddingEncodingFormat,
  type EmbeddingUsage,
  type EmbedManyOptions,
  type EmbedManyPartial,
  type EmbedManyResult,
  type RerankParams,
  type RerankResponse,
  type RerankResult,
  type Scored,
  topK,
} from '@ai4ts/core';

// Chat Completions (`client.chat`).
export {
  CHAT_PROTOCOL,
  type ChatCompletion,
  type ChatCompletionCreateParams,
  ChatCompletionCreateParamsSchema,
  type ChatLoopRequest,
  type ChatLoopState,
  type ChatMessage,
  type ChatRequestOptions,
  ChatService,
  ChatStream,
  type ChatStreamEvents,
  ChatStreamListener,
  type ChatStreamListenerOptions,
  type ChatTool,
  type ChatToolChoice,
  type ChatToolLoopEvent,
  type ChatToolLoopResult,
  type ChatToolLoopStream,
  collectChatCompletion,
  isChatCompletion,
  toChatTool,
  // Deprecated aliases of the previous release.
  type ChatCompletionRequest,
  ChatCompletionRequestSchema,
} from '@ai4ts/chat';

// Responses (`client.responses`).
export {
  collectResponse,
  type FunctionTool,
  isResponseObject,
  type OutputItem,
  RESPONSES_PROTOCOL,
  type ResponseCreateParams,
  type ResponseInputItem,
  type ResponseObject,
  type ResponsesLoopRequest,
  type ResponsesLoopState,
  type ResponsesRequestOptions,
  ResponsesService,
  ResponsesStream,
  type ResponsesStreamEvents,
  ResponsesStreamListener,
  type ResponsesStreamListenerOptions,
  type ResponsesStreamWarning,
  type ResponsesTool,
  type ResponsesToolLoopEvent,
  type ResponsesToolLoopResult,
  type ResponsesToolLoopStream,
  type ResumeOptions,
  toResponsesTool,
  // Deprecated aliases of the previous release.
  type ResponseCreateRequest,
  type ResponseLoopRequest,
  type ResponseRequestOptions,
  ResponseStream,
  type ResponseStreamEvents,
  ResponseStreamListener,
  type ResponseStreamListenerOptions,
  type ResponseStreamWarning,
} from '@ai4ts/responses';

// Messages (`client.messages`).
export {
  type AnthropicTool,
  collectMessage,
  type ContentBlock,
  type ContentBlockParam,
  isKnownBlock,
  isMessage,
  isTextBlock,
  isThinkingBlock,
  isToolUseBlock,
  MESSAGES_PROTOCOL,
  type Message,
  type MessageCreateParams,
  type MessageParam,
  type MessagesLoopRequest,
  type MessagesLoopState,
  type MessagesRequestOptions,
  MessagesService,
  MessagesStream,
  type MessagesStreamEvents,
  MessagesStreamListener,
  type MessagesStreamListenerOptions,
  type MessagesToolLoopEvent,
  type MessagesToolLoopResult,
  type MessagesToolLoopStream,
  type MessageTool,
  toAnthropicTool,
  // Deprecated aliases of the previous release.
  type MessageLoopRequest,
  type MessageRequestOptions,
  MessageStream,
  type MessageStreamEvents,
  MessageStreamListener,
  type MessageStreamListenerOptions,
} from '@ai4ts/messages';

// Bedrock's Converse API (`client.converse`); names its wire types share with Messages are prefixed.
export {
  type CollectConverseOptions,
  CONVERSE_PROTOCOL,
  type ConverseLoopRequest,
  type ConverseRequest,
  type ConverseRequestOptions,
  type ConverseResponse,
  ConverseService,
  ConverseStream,
  type ConverseStreamEvents,
  ConverseStreamListener,
  type ConverseStreamListenerOptions,
  type ConverseStreamOutput,
  type ConverseTool,
  type ConverseToolLoopEvent,
  type ConverseToolLoopResult,
  type ConverseToolLoopStream,
  type ContentBlock as ConverseContentBlock,
  collectConverse,
  isConverseResponse,
  type Message as ConverseMessage,
  type StopReason as ConverseStopReason,
  type TokenUsage as ConverseTokenUsage,
  toConverseTool,
} from '@ai4ts/converse';

// Gemini (`client.gemini`).
export {
  type Candidate,
  type CollectGeminiOptions,
  type Content,
  collectGemini,
  type FunctionCall,
  type FunctionDeclaration,
  type FunctionResponse,
  GEMINI_PROTOCOL,
  type GeminiFinishReason,
  type GeminiLoopRequest,
  type GeminiRequestOptions,
  GeminiService,
  GeminiStream,
  type GeminiStreamEvents,
  GeminiStreamListener,
  type GeminiStreamListenerOptions,
  type GeminiTool,
  type GeminiToolLoopEvent,
  type GeminiToolLoopResult,
  type GeminiToolLoopStream,
  type GenerateContentRequest,
  type GenerateContentResponse,
  type GenerationConfig,
  isGenerateContentResponse,
  type Part,
  PromptBlockedError,
  toGeminiTool,
  type UsageMetadata,
} from '@ai4ts/gemini';

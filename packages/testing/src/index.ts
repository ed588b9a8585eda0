/**
 * @ai4ts/testing: a scripted model server on 127.0.0.1 for tests, examples and users' own test suites. One script
 * answers OpenAI Chat Completions, OpenAI Responses, Anthropic Messages and Gemini, over real SSE with realistic
 * fragmentation: reasoning deltas, parallel tool calls with arguments cut anywhere, usage, errors and cut-off
 * streams on demand.
 */
export { agentQuestion, agentScript } from './agent.js';
export type { ChatMessage, ChatRequestBody } from './chat.js';
export { type MockEmbeddingsOptions, type MockHttpError, mockVector } from './embeddings.js';
export { seededRandom } from './fragment.js';
export type { GeminiContent, GeminiPart, GeminiRequestBody } from './gemini.js';
export type { MessagesContentBlock, MessagesInputMessage, MessagesRequestBody } from './messages.js';
export type { ResponsesInputItem, ResponsesRequestBody } from './responses.js';
export {
  type MockModel,
  type MockModelOptions,
  type MockRequestBody,
  type MockScript,
  type MockScriptContext,
  type RecordedRequest,
  startMockModel,
} from './server.js';
export type { MockProtocol, MockToolCall, MockTurn, MockUsage } from './turn.js';

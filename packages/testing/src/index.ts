/**
 * @ai4ts/testing: a scripted OpenAI-compatible model server on 127.0.0.1 for tests, examples and users' own
 * test suites. It streams real SSE with realistic fragmentation: reasoning deltas, interleaved parallel tool
 * calls with arguments cut anywhere, usage chunks, errors and cut-off streams on demand.
 */
export { agentQuestion, agentScript } from './agent.js';
export type { ChatMessage, ChatRequestBody, MockToolCall, MockTurn, MockUsage } from './chat.js';
export {
  type MockModel,
  type MockModelOptions,
  type MockScript,
  type MockScriptContext,
  type RecordedRequest,
  startMockModel,
} from './server.js';

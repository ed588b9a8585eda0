export {
  defineTool,
  isTool,
  type JsonSchema,
  type Tool,
  type ToolArgs,
  type ToolArgumentIssue,
  type ToolContext,
  type ToolDefinition,
  type ToolExecute,
  type ToolParameters,
  type ToolProgress,
  type ToolValidation,
} from './define.js';
export { ToolContent, type ToolResultPart } from './content.js';
export {
  type ExecuteToolCallsOptions,
  executeToolCalls,
  runTool,
  type ToolCall,
  type ToolCallDecision,
  type ToolResult,
  type ValidToolCall,
  validateToolCall,
} from './execute.js';
export {
  type ModelTurn,
  type PrepareStepContext,
  runToolLoop,
  type SendContext,
  type StepFinishEvent,
  type StepStartEvent,
  type ToolLoopAdapter,
  type ToolLoopEvent,
  type ToolLoopFinishEvent,
  type ToolLoopFinishReason,
  type ToolLoopOptions,
  type ToolLoopPartial,
  type ToolLoopResult,
  type ToolLoopStep,
  type ToolSource,
  type WithStep,
} from './loop.js';
export {
  isLoopRequest,
  type LoopFieldName,
  type LoopFields,
  type LoopRequestShape,
  type SdkFields,
  type WithoutTools,
} from './request.js';
export { type OutputLoopStream, streamToolLoop, type ToolLoopEvents, ToolLoopStream } from './stream.js';

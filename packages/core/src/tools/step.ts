/**
 * One step of the tool loop, in a file of its own: the loop and its stop conditions both read it.
 */
import type { FinishReason, Usage } from '../events.js';
import type { Cost } from '../observe/cost.js';
import type { ToolCall, ToolResult } from './execute.js';

/** One step of the loop: a model request, its completion, and the tool calls it produced. */
export interface ToolLoopStep<Request = unknown, Completion = unknown> {
  /** Counted from 1. */
  step: number;
  /** The request sent (after `prepareStep`). */
  request: Request;
  completion: Completion;
  text: string;
  finishReason: FinishReason;
  usage: Usage | undefined;
  /** What the step's request cost, when the client has a price for its model (`prices`). */
  cost: Cost | undefined;
  toolCalls: ToolCall[];
  /** One result per executed or rejected call, in call order; empty when the calls were not run. */
  toolResults: ToolResult[];
}

/**
 * Stop conditions of the tool loop (`stopWhen`): asked after each step's model turn, before its tools run. The first
 * that holds stops the loop with `finishReason: 'stop_condition'` and its name in `stopCondition`; the step's calls
 * come back unexecuted, as with `maxSteps`.
 */
import type { Usage } from '../events.js';
import type { Cost } from '../observe/cost.js';
import type { ToolCall } from './execute.js';
import type { ToolLoopStep } from './step.js';

/** What a stop condition sees after a step's model turn. */
export interface StopConditionState<Request = unknown, Completion = unknown> {
  /** The step just answered, counted from 1 (a resumed loop goes on counting). */
  step: number;
  /** The steps of this run so far, the one just answered last (its `toolResults` still empty). */
  steps: readonly ToolLoopStep<Request, Completion>[];
  /** The tool calls of the step just answered, in call order. */
  toolCalls: readonly ToolCall[];
  /** The text of the step just answered. */
  text: string;
  /** Usage summed over every step, those before a resume included. */
  usage: Usage | undefined;
  /** Cost summed over every step; undefined while the client has no price for the model. */
  cost: Cost | undefined;
}

/**
 * A condition that stops the loop when it returns true. Its `name` (a function's own name, or the built-in's
 * `stepCountIs(3)`) is what `stopCondition` reports.
 */
export type StopCondition<Request = unknown, Completion = unknown> = (
  state: StopConditionState<Request, Completion>,
) => boolean | Promise<boolean>;

/** One condition, or a list of which any stops the loop. */
export type StopWhen<Request = unknown, Completion = unknown> =
  | StopCondition<Request, Completion>
  | readonly StopCondition<Request, Completion>[];

/** Stops once `count` steps (model requests) were made; `maxSteps: n` is the same limit with its own finish reason. */
export function stepCountIs(count: number): StopCondition {
  if (!Number.isInteger(count) || count < 1) throw new RangeError('stepCountIs: count must be an integer >= 1');
  return named(`stepCountIs(${count})`, (state) => state.step >= count);
}

/** Stops after a step that called the tool `name` (an answer given through a `submit` tool, for example). */
export function hasToolCall(name: string): StopCondition {
  return named(`hasToolCall(${name})`, (state) => state.toolCalls.some((call) => call.name === name));
}

/** Limits of {@link usageExceeds}. */
export interface UsageLimits {
  /** Total tokens (prompt and completion, summed over the steps). */
  tokens?: number;
  /** Cost in the price table's currency (the client's `prices`); never reached for a model without a price. */
  cost?: number;
}

/** Stops once the summed usage passes a token budget, or the summed cost a money budget. */
export function usageExceeds(limits: UsageLimits): StopCondition {
  const { tokens, cost } = limits;
  if (tokens === undefined && cost === undefined) throw new TypeError('usageExceeds: give tokens, cost or both');
  const parts = [tokens === undefined ? [] : [`tokens: ${tokens}`], cost === undefined ? [] : [`cost: ${cost}`]].flat();
  return named(
    `usageExceeds(${parts.join(', ')})`,
    (state) =>
      (tokens !== undefined && (state.usage?.total_tokens ?? 0) > tokens) ||
      (cost !== undefined && (state.cost?.total ?? 0) > cost),
  );
}

/** Stops after a step whose text contains `text`. */
export function textIncludes(text: string): StopCondition {
  return named(`textIncludes(${JSON.stringify(text)})`, (state) => state.text.includes(text));
}

/** The name of the first condition that holds, asked in order; undefined when none does. */
export async function stopConditionMet<Request, Completion>(
  stopWhen: StopWhen<Request, Completion> | undefined,
  state: StopConditionState<Request, Completion>,
): Promise<string | undefined> {
  if (stopWhen === undefined) return undefined;
  for (const condition of typeof stopWhen === 'function' ? [stopWhen] : stopWhen) {
    if (await condition(state)) return condition.name || 'anonymous';
  }
  return undefined;
}

function named(name: string, condition: StopCondition): StopCondition {
  return Object.defineProperty(condition, 'name', { value: name });
}

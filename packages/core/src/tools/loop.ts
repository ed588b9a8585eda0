/**
 * The tool loop: one engine for every protocol. Ask the model; if it called tools, validate and run them, append
 * the assistant turn exactly as produced and one result per call in call order, and ask again, until the model
 * answers, hands calls to the host (passthrough), `maxSteps` requests were made, or a `stopWhen` condition holds.
 * A step that holds calls back (`needsApproval`, a `passThrough` tool) suspends the loop with a plain-JSON state
 * that {@link resumeToolLoop} continues, on any process.
 *
 * A protocol plugs in through a {@link ToolLoopAdapter}; the engine never looks inside a request, a completion or
 * a message.
 */
import type * as z from 'zod';
import { Ai4tsError, AbortError, TimeoutError } from '../errors.js';
import {
  addUsage,
  type FinishEvent,
  type FinishReason,
  type NormalizedEvent,
  type ToolProgressEvent,
  type ToolResultEvent,
  type Usage,
} from '../events.js';
import type { RetryEvent } from '../stream.js';
import type { Tool, ToolProgress } from './define.js';
import { abortError } from '../internal/fail.js';
import { resultInfo } from '../observe/call.js';
import { addCost, type Cost } from '../observe/cost.js';
import type { Telemetry, TelemetryOptions, ToolOutcome } from '../observe/telemetry.js';
import { type ObjectEvent, readOutput, repairMessage, structuredOutput } from '../output/output.js';
import { PartialJsonParser } from '../output/partial-json.js';
import { NEVER } from '../internal/signal.js';
import {
  type HoldReason,
  runValidCalls,
  settleToolCalls,
  type ToolCall,
  type ToolCallDecision,
  type ToolResult,
  toolsByName,
  type ValidToolCall,
} from './execute.js';
import { type StopWhen, stopConditionMet } from './stop.js';
import type { ToolLoopStep } from './step.js';
import {
  checkState,
  type LoopState,
  type LoopSuspension,
  type PendingToolCall,
  type ResumeDecisions,
  settleDecisions,
  suspend,
} from './suspend.js';

export type { ToolLoopStep } from './step.js';

/** What the engine needs to know about one model turn. */
export interface ModelTurn {
  /** The turn's tool calls in index order, with their argument strings exactly as produced. */
  toolCalls: readonly ToolCall[];
  finishReason: FinishReason;
  /** The answer text of the turn (with `output`: the JSON, whichever way the protocol carried it). */
  text: string;
  usage: Usage | undefined;
  /** The model's refusal (OpenAI's `refusal`, Anthropic's `refusal` stop reason), when it refused. */
  refusal?: string | undefined;
}

/** What {@link ToolLoopAdapter.send} gets beside the request. */
export interface SendContext {
  /** The step being sent, counted from 1. */
  step: number;
  /** Aborts when the caller aborts the loop (or a stream's consumer stops early). */
  signal: AbortSignal;
  /**
   * Present when the loop is streamed: call it with each normalized event as it arrives, and each `retry` of the
   * step's request (the engine tags them with the step). Absent when nobody listens, so the adapter may use the
   * protocol's non-streaming request.
   */
  emit: ((event: NormalizedEvent | RetryEvent) => void) | undefined;
  /** Present when telemetry is on: send the request with it, so its span is a child of the loop's. */
  telemetry?: TelemetryOptions | undefined;
}

/**
 * How a protocol (Chat Completions, Responses, Anthropic Messages, ...) plugs into the tool loop.
 *
 * `Request` is the protocol's request as the caller wrote it (the adapter turns defineTool objects into wire tools
 * and leaves SDK-only fields off the wire), `Completion` its finished result, `Message` one transcript entry
 * (a chat message, a Responses input item, an Anthropic message).
 *
 * Every method must leave its arguments untouched: requests and messages belong to the caller.
 */
export interface ToolLoopAdapter<Request, Completion, Message> {
  /**
   * Sends one model request and resolves to its completion. Rejects with an Ai4tsError (its `partial` the
   * partial completion) on failure, with an AbortError when `context.signal` aborts.
   */
  send(request: Request, context: SendContext): Promise<Completion>;
  /** Reads the tool calls, finish reason, text and usage of a completion. */
  readTurn(completion: Completion): ModelTurn;
  /** The transcript a request carries (for example `request.messages`). */
  getMessages(request: Request): readonly Message[];
  /** A copy of `request` carrying `messages` instead of its own. */
  withMessages(request: Request, messages: Message[]): Request;
  /**
   * The assistant turn to append to the transcript, exactly as the model produced it: content, tool calls with
   * their argument strings as streamed, and reasoning where the provider wants it back.
   */
  assistantMessages(completion: Completion): Message[];
  /**
   * The messages carrying a step's tool results, which arrive in call order (one `tool` message per result, or one
   * user message of `tool_result` blocks). `transcript` is the transcript so far, ending with the assistant turn the
   * results answer: a resumed loop has that turn only there (its completion was in another process).
   */
  toolMessages(results: readonly ToolResult[], transcript: readonly Message[]): Message[];
  /** Whether the request allows tools to run in parallel (false for `parallel_tool_calls: false`); true if absent. */
  parallelToolCalls?(request: Request): boolean;
  /**
   * The loop's telemetry: the client's settings with `requested` (the request's own) over them; undefined when
   * telemetry is off. Absent: no spans.
   */
  telemetry?(requested: TelemetryOptions | undefined): (() => Telemetry | Promise<Telemetry>) | undefined;
  /**
   * The messages that follow a rejected structured answer (after {@link assistantMessages}) and ask for a corrected
   * one (`repair`): a user message holding `feedback`, or the protocol's equivalent. Without it, `repair` is ignored.
   */
  repairMessages?(completion: Completion, feedback: string): Message[];
  /** A copy of `request` whose `tools` also hold `tools` (the tools of the loop's `mcp` sources for one step). */
  withTools?(request: Request, tools: readonly Tool[]): Request;
  /** The protocol's name, written into a suspended loop's state so that only this protocol resumes it. */
  readonly protocol?: string;
  /**
   * The request as a suspended loop's state keeps it (its transcript already emptied): JSON, without `defineTool`
   * tools and loop fields. Without it, a step that holds calls back throws a TypeError.
   */
  stateRequest?(request: Request): Request;
}

/**
 * Supplies tools to the loop, asked again before every step so a changed list is seen (an MCP client of
 * `@ai4ts/mcp` is one: its tools are the server's, refreshed when the server says the list changed).
 */
export interface ToolSource {
  tools(): Promise<readonly Tool[]>;
}

/**
 * Why the loop stopped: the last turn's finish reason, `'max_steps'`, or `'stop_condition'` (a `stopWhen` condition
 * held; the result's `stopCondition` names it). Passthrough and a suspended loop end with `'tool_calls'`.
 */
export type ToolLoopFinishReason = FinishReason | 'max_steps' | 'stop_condition';

/** Whether the loop is over (`'done'`) or suspended, waiting for approvals or for the host's tool results. */
export type ToolLoopStatus = 'done' | LoopSuspension;

/** What every outcome of a loop holds, finished or suspended. */
export interface ToolLoopOutcome<Request = unknown, Completion = unknown, Message = unknown> {
  /** The last step's completion. */
  completion: Completion;
  /** The last step's text. */
  text: string;
  /** The full transcript: the caller's messages plus every assistant and tool message added. Send it back to continue. */
  messages: Message[];
  steps: ToolLoopStep<Request, Completion>[];
  /** Summed over all steps. */
  usage: Usage | undefined;
  /** Summed over all steps that have a cost; undefined when none has (no price for the model). */
  cost: Cost | undefined;
  finishReason: ToolLoopFinishReason;
  /** With `finishReason: 'stop_condition'`: the name of the condition that held (`hasToolCall(submit)`). */
  stopCondition?: string;
}

/** A loop that ran to its end. */
export interface ToolLoopDone {
  status: 'done';
  pending?: undefined;
  state?: undefined;
}

/**
 * A suspended loop: `pending` are the calls it waits on, `state` the plain JSON to store and give to `resume` with
 * the decisions. The calls of the suspended step that needed neither approval nor the host have run: their results
 * are in `state`, and go to the model with the others when the loop resumes.
 */
export interface ToolLoopSuspended<Request = unknown, Message = unknown> {
  status: LoopSuspension;
  pending: PendingToolCall[];
  state: LoopState<Request, Message>;
}

/**
 * The outcome of a tool loop: `status` says whether it ran to its end or is suspended (see {@link ToolLoopSuspended}).
 * `Obj` is the type of the structured answer, when the request has `output`: `object` is the validated answer
 * (defaults applied), undefined without `output` and while the loop is suspended.
 */
export type ToolLoopResult<Request = unknown, Completion = unknown, Message = unknown, Obj = unknown> = ToolLoopOutcome<
  Request,
  Completion,
  Message
> & { object: Obj } & (ToolLoopDone | ToolLoopSuspended<Request, Message>);

/** The `partial` of an error thrown by the loop: everything finished so far, and the failed step's partial completion. */
export interface ToolLoopPartial<Request = unknown, Completion = unknown, Message = unknown>
  extends Omit<ToolLoopOutcome<Request, Completion, Message>, 'completion' | 'finishReason'> {
  completion: Completion | undefined;
  finishReason: ToolLoopFinishReason | undefined;
}

/** What `prepareStep` receives. */
export interface PrepareStepContext<Request = unknown, Completion = unknown> {
  step: number;
  /** The request about to be sent. */
  request: Request;
  /** The steps finished so far. */
  steps: readonly ToolLoopStep<Request, Completion>[];
}

/** Options of the tool loop. */
export interface ToolLoopOptions<Request = unknown, Completion = unknown> {
  /** The tools the loop may run. A call naming none of them gets an "unknown tool" error result. */
  tools?: readonly Tool[];
  /** MCP clients (or any {@link ToolSource}) whose tools join `tools` for the call; listed again before each step. */
  mcp?: readonly ToolSource[];
  /**
   * Most model requests to make (default 10). The calls of the last allowed request are returned unexecuted. The
   * shorthand of `stopWhen: stepCountIs(n)`, with its own finish reason, `'max_steps'`.
   */
  maxSteps?: number;
  /**
   * Stops the loop after a step's model turn, before its tools run, when the condition (or any of the list) holds:
   * `stepCountIs(n)`, `hasToolCall(name)`, `usageExceeds({ tokens, cost })`, `textIncludes(text)`, or a function of
   * the `StopConditionState`. The result's `finishReason` is `'stop_condition'`, `stopCondition` its name, and
   * the step's calls come back unexecuted. A turn without calls ends the loop as always.
   */
  stopWhen?: StopWhen<Request, Completion>;
  /** Return after the first step that calls tools, without running them, for the host to run. */
  passThroughToolCalls?: boolean;
  /** How many tools may run at once (unbounded by default); 1 when the request disallows parallel tool calls. */
  concurrency?: number;
  /** Aborts the model request in flight and signals running tools; the loop rejects with an AbortError. */
  signal?: AbortSignal;
  /** Called when a step is complete (its tools have run). */
  onStepFinish?(step: ToolLoopStep<Request, Completion>): void | Promise<void>;
  /** Called, in call order, before each valid call runs; return `'deny'` or `{ deny: reason }` to refuse it. */
  onToolCall?(call: ValidToolCall): ToolCallDecision | Promise<ToolCallDecision>;
  /** Called before each step; return a request to send instead (it also becomes the base of later steps). */
  prepareStep?(context: PrepareStepContext<Request, Completion>): Request | undefined | Promise<Request | undefined>;
  /** Telemetry of this loop, over the client's (the request's `telemetry` field). */
  telemetry?: TelemetryOptions;
  /**
   * A zod object schema for the final answer (structured output): the protocol asks for JSON of that schema, the
   * stream emits `object` events as it arrives, and the result's `object` is the validated value. An answer that
   * is not valid rejects with an OutputValidationError, a refusal with an OutputRefusalError.
   */
  output?: z.ZodType;
  /** With `output`: how many times to send the validation issues back and ask again (default 0). Each is a step. */
  repair?: number;
  /**
   * Streamed loops: give `tool_call.delta` events `partialArguments`, the arguments parsed so far, for UIs that show
   * them as they stream (the tool itself still runs only on the complete, validated arguments).
   */
  partialToolArguments?: boolean;
}

/** Adds the step number to an event (distributing over unions). */
export type WithStep<E> = E extends unknown ? E & { step: number } : never;

/** A step is about to send its request. */
export interface StepStartEvent<Request = unknown> {
  type: 'step.start';
  step: number;
  request: Request;
}

/** A step is complete: its completion, tool calls and results. */
export type StepFinishEvent<Request = unknown, Completion = unknown> = { type: 'step.finish' } & ToolLoopStep<
  Request,
  Completion
>;

/** The loop is done or suspended (the last event). */
export interface ToolLoopFinishEvent {
  type: 'finish';
  /** The last step. */
  step: number;
  finishReason: ToolLoopFinishReason;
  /** Summed over all steps. */
  usage: Usage | undefined;
  /** With `finishReason: 'stop_condition'`: the condition's name. */
  stopCondition?: string;
  /** Present when the loop suspended: why (`final()` holds the state). */
  status?: LoopSuspension;
}

/**
 * The loop suspends for a person's decision: the calls that need approval and the state to resume with (see
 * {@link ToolLoopSuspended}). Followed by `finish`.
 */
export interface ApprovalRequestedEvent<Request = unknown, Message = unknown> {
  type: 'approval.requested';
  step: number;
  pending: PendingToolCall[];
  state: LoopState<Request, Message>;
}

/**
 * The events of a streamed loop, each tagged with its step: `step.start`, `retry` when the step's request is sent
 * again, the model's normalized events (its own per-turn `finish` is reported by `step.finish`), `tool.result` as
 * each tool finishes, `step.finish`, and one final `finish`.
 */
export type ToolLoopEvent<Request = unknown, Completion = unknown, Obj = unknown> =
  | StepStartEvent<Request>
  | WithStep<Exclude<NormalizedEvent, FinishEvent> | RetryEvent>
  | WithStep<ObjectEvent<Obj>>
  | StepFinishEvent<Request, Completion>
  | ApprovalRequestedEvent<Request>
  | ToolLoopFinishEvent;

/** Finish reasons of a turn cut short: its tool calls may hold partial arguments and never run. */
const TRUNCATED: ReadonlySet<FinishReason> = new Set(['length', 'content_filter']);

/**
 * Runs the tool loop to the end, or until it suspends, and resolves to its result. Rejects with an Ai4tsError whose
 * `partial` is a {@link ToolLoopPartial}; with an AbortError when `options.signal` aborts.
 */
export function runToolLoop<Request, Completion, Message>(
  adapter: ToolLoopAdapter<Request, Completion, Message>,
  request: Request,
  options: ToolLoopOptions<Request, Completion> = {},
): Promise<ToolLoopResult<Request, Completion, Message>> {
  return runSteps(adapter, { request }, options, undefined, options.signal);
}

/**
 * Continues a suspended loop from its `state` (see {@link ToolLoopSuspended}): the suspended step's approved calls run
 * with `options.tools`, denied ones are answered to the model as errors, the host's results are added, and the loop
 * asks the model again. `options` are the loop's settings, given again (functions do not serialise). Rejects with a
 * LoopStateError, before any call runs, when the state or the decisions do not check out.
 */
export function resumeToolLoop<Request, Completion, Message>(
  adapter: ToolLoopAdapter<Request, Completion, Message>,
  state: LoopState<Request, Message>,
  decisions: ResumeDecisions,
  options: ToolLoopOptions<Request, Completion> = {},
): Promise<ToolLoopResult<Request, Completion, Message>> {
  return runSteps(adapter, { state, decisions }, options, undefined, options.signal);
}

/** Where a loop starts: a request, or a suspended loop's state with the decisions on its pending calls. */
export type LoopStart<Request, Message> =
  | { request: Request; state?: undefined }
  | { state: LoopState<Request, Message>; decisions: ResumeDecisions };

/**
 * The engine behind {@link runToolLoop}, {@link resumeToolLoop} and `streamToolLoop`: `emit` receives the loop's
 * events when streamed, `signal` is the loop's own (the caller's signal, or one linked to it).
 */
export async function runSteps<Request, Completion, Message>(
  adapter: ToolLoopAdapter<Request, Completion, Message>,
  start: LoopStart<Request, Message>,
  options: ToolLoopOptions<Request, Completion>,
  emit: ((event: ToolLoopEvent<Request, Completion>) => void) | undefined,
  signal: AbortSignal | undefined,
): Promise<ToolLoopResult<Request, Completion, Message>> {
  const { tools: ownTools = [], mcp: sources = [], maxSteps = 10, passThroughToolCalls = false, concurrency } = options;
  if (!Number.isInteger(maxSteps) || maxSteps < 1) throw new RangeError('maxSteps must be an integer >= 1');
  if (sources.length > 0 && !adapter.withTools) throw new TypeError('This tool loop adapter cannot add `mcp` tools');
  const output = options.output && structuredOutput(options.output);
  let repairs = options.repair ?? 0;
  if (!Number.isInteger(repairs) || repairs < 0) throw new RangeError('repair must be an integer >= 0');
  let tools = ownTools;
  let byName = toolsByName(tools);
  const steps: ToolLoopStep<Request, Completion>[] = [];
  let usage: Usage | undefined;
  let cost: Cost | undefined;
  let current: Request;
  let first = 1;
  let messages: Message[];
  if (start.state === undefined) current = start.request;
  else {
    const state = await checkState(start.state, adapter.protocol ?? 'custom', start.decisions);
    if (ownTools.length > 0 && !adapter.withTools) throw new TypeError('This tool loop adapter cannot resume with tools');
    current = adapter.withMessages(state.request, state.messages);
    if (ownTools.length > 0) current = adapter.withTools?.(current, ownTools) ?? current;
    ({ usage, cost } = state);
    first = state.step + 1;
  }
  messages = [...adapter.getMessages(current)];
  let failed: { completion: Completion | undefined; text: string } = { completion: undefined, text: '' };
  const traced = await traceLoop(adapter.telemetry?.(options.telemetry), current);
  const toolHooks = (step: number) => ({
    signal,
    step,
    concurrency: adapter.parallelToolCalls?.(current) === false ? 1 : concurrency,
    onToolCall: options.onToolCall && ((call: ValidToolCall) => options.onToolCall?.(call)),
    onResult: emit && ((result: ToolResult) => emit(toolResultEvent(result, step))),
    onProgress: emit && ((call: ToolCall, progress: ToolProgress) => emit(toolProgressEvent(call, progress, step))),
    onToolStart: traced && ((call: ToolCall) => traceTool(traced.steps, call)),
  });

  try {
    if (start.state !== undefined) {
      // The suspended step ends first: its approved calls run, and every answer goes to the model in call order.
      const { step, calls } = start.state;
      const settled = await settleDecisions(calls, start.decisions, byName, step);
      const hooks = toolHooks(step);
      // The results kept in the state were reported when their calls ran; the decided ones are new.
      for (const [index, result] of settled.results.entries()) if (result && !calls[index]?.result) hooks.onResult?.(result);
      await runValidCalls(
        settled.run,
        { ...hooks, messages, concurrency: hooks.concurrency ?? Number.POSITIVE_INFINITY },
        (index, result) => {
          settled.results[index] = result;
        },
      );
      messages.push(...adapter.toolMessages(settled.results.filter((result) => result !== undefined), messages));
      current = adapter.withMessages(current, messages);
    }
    for (let step = first; ; step++) {
      if (signal?.aborted) throw abortError(signal);
      current = (await options.prepareStep?.({ step, request: current, steps })) ?? current;
      let sending = current;
      if (sources.length > 0) {
        const sourced = (await untilAborted(Promise.all(sources.map((source) => source.tools())), signal)).flat();
        tools = [...ownTools, ...sourced];
        byName = toolsByName(tools);
        sending = adapter.withTools?.(current, sourced) ?? current;
      }
      emit?.({ type: 'step.start', step, request: sending });
      const forward = emit && forwarder(emit, step, output !== undefined, options.partialToolArguments === true);
      const completion = await untilAborted(
        adapter.send(sending, { step, signal: signal ?? NEVER, emit: forward, telemetry: traced?.steps.options }),
        signal,
      );
      const turn = adapter.readTurn(completion);
      usage = addUsage(usage, turn.usage);
      const stepCost = typeof completion === 'object' && completion !== null ? resultInfo(completion)?.cost : undefined;
      cost = addCost(cost, stepCost);
      const sent = adapter.getMessages(current);
      messages = [...sent, ...adapter.assistantMessages(completion)];
      failed = { completion, text: turn.text };
      const record: ToolLoopStep<Request, Completion> = {
        step,
        request: sending,
        completion,
        text: turn.text,
        finishReason: turn.finishReason,
        usage: turn.usage,
        cost: stepCost,
        toolCalls: [...turn.toolCalls],
        toolResults: [],
      };

      const calls = turn.toolCalls;
      const answered = calls.length === 0 || TRUNCATED.has(turn.finishReason);
      const handedBack = passThroughToolCalls || calls.some((call) => isPassthrough(byName.get(call.name)));
      // Asked only of a step whose calls would otherwise run: an answer, a hand-back or maxSteps end the loop anyway.
      const stopCondition =
        answered || handedBack || step >= maxSteps
          ? undefined
          : await stopConditionMet(options.stopWhen, {
              step,
              steps: [...steps, record],
              toolCalls: record.toolCalls,
              text: turn.text,
              usage,
              cost,
            });
      let stop: ToolLoopFinishReason | undefined;
      let object: unknown;
      let rejected: Ai4tsError | undefined;
      let suspended: ToolLoopSuspended<Request, Message> | undefined;
      if (answered) {
        stop = turn.finishReason;
        const read = output ? await readOutput(output, turn) : { object: undefined };
        if ('object' in read) object = read.object;
        else if (read.repairable && repairs > 0 && step < maxSteps && adapter.repairMessages) {
          // Asking again is one more step: the rejected answer and the issues go back to the model.
          repairs--;
          stop = undefined;
          messages.push(...adapter.repairMessages(completion, repairMessage(read.error)));
        } else rejected = read.error;
      } else if (handedBack) stop = 'tool_calls';
      else if (step >= maxSteps) stop = 'max_steps';
      else if (stopCondition !== undefined) stop = 'stop_condition';
      else {
        const settled = await settleToolCalls(calls, tools, { ...toolHooks(step), messages: sent }, holdReason);
        record.toolResults = settled.results.filter((result) => result !== undefined);
        if (settled.held.length > 0) {
          if (!adapter.stateRequest) throw new TypeError('This tool loop adapter cannot suspend a loop');
          const request = adapter.stateRequest(adapter.withMessages(current, []));
          const protocol = adapter.protocol ?? 'custom';
          const { state, pending } = await suspend({ ...settled, protocol, step, request, messages, usage, cost, calls });
          suspended = { status: state.status, pending, state };
          stop = 'tool_calls';
        } else messages.push(...adapter.toolMessages(record.toolResults, messages));
      }

      steps.push(record);
      await options.onStepFinish?.(record);
      emit?.({ type: 'step.finish', ...record });
      if (rejected) throw rejected;
      if (stop !== undefined) {
        const ended = { completion, text: turn.text, messages, steps, usage, cost, finishReason: stop };
        const named = stopCondition === undefined ? {} : { stopCondition };
        if (suspended?.status === 'awaiting_approval') {
          const { pending, state } = suspended;
          emit?.({ type: 'approval.requested', step, pending, state });
        }
        const status = suspended ? { status: suspended.status } : {};
        emit?.({ type: 'finish', step, finishReason: stop, usage, ...named, ...status });
        traced?.end({ steps: step, usage, cost, finishReason: stop, error: undefined });
        return suspended
          ? { ...ended, object: undefined, ...suspended }
          : { ...ended, ...named, object, status: 'done' };
      }
      current = adapter.withMessages(current, messages);
      failed = { completion: undefined, text: '' };
    }
  } catch (thrown) {
    const error = signal?.aborted && !(thrown instanceof AbortError) ? abortError(signal) : thrown;
    if (error instanceof Ai4tsError) {
      const completion = (error.partial as Completion | undefined) ?? failed.completion;
      const partial: ToolLoopPartial<Request, Completion, Message> = {
        completion,
        text: completion === failed.completion ? failed.text : partialText(adapter, completion),
        messages,
        steps,
        usage,
        cost,
        finishReason: undefined,
      };
      error.partial = partial;
    }
    traced?.end({ steps: steps.length, usage, cost, finishReason: undefined, error });
    throw error;
  }
}

/** Why a valid call waits instead of running: its tool needs approval for these arguments, or the host runs it. */
async function holdReason(call: ValidToolCall): Promise<HoldReason | undefined> {
  const { tool } = call;
  if (tool.passThrough) return 'tool_result';
  const { needsApproval } = tool;
  const needs =
    typeof needsApproval === 'function'
      ? await needsApproval(call.args, { toolCallId: call.id, step: call.step })
      : needsApproval === true;
  return needs ? 'approval' : undefined;
}

/** A loop's span and the telemetry its steps and tools run under. */
interface TracedLoop {
  steps: Telemetry;
  end(outcome: Parameters<Telemetry['endLoop']>[1]): void;
}

/** Starts the loop's span when telemetry is on; waits only the first time `@opentelemetry/api` loads. */
async function traceLoop(
  resolve: (() => Telemetry | Promise<Telemetry>) | undefined,
  request: unknown,
): Promise<TracedLoop | undefined> {
  if (!resolve) return undefined;
  const resolved = resolve();
  const telemetry = resolved instanceof Promise ? await resolved : resolved;
  const span = telemetry.startLoop(request);
  return { steps: telemetry.under(span), end: (outcome) => telemetry.endLoop(span, outcome) };
}

/** Opens a tool's span; the returned function ends it with the call's outcome. */
function traceTool(telemetry: Telemetry, call: ToolCall): (outcome: ToolResult | Error) => void {
  const span = telemetry.startTool(call);
  return (outcome) => telemetry.endTool(span, toolOutcome(outcome));
}

function toolOutcome(outcome: ToolResult | Error): ToolOutcome {
  if (outcome instanceof Error) return { kind: 'error', content: '', error: outcome };
  if (!outcome.isError) return { kind: 'ok', content: outcome.content, error: undefined };
  const kind = outcome.error instanceof TimeoutError ? 'timeout' : outcome.durationMs === undefined ? 'rejected' : 'error';
  return { kind, content: outcome.content, error: outcome.error };
}

/**
 * Forwards a step's model events to the loop's `emit`, tagged with the step (its own `finish` is reported as
 * `step.finish`). With `output`, the answer text also feeds an incremental JSON parser: an `object` event follows
 * a content delta that changes the partial value (as the parser's schedule shows changes, so that reading every
 * event stays linear), and the turn's end shows any change held back. With `partialToolArguments`, each call's argument deltas feed
 * a parser of their own, and a delta that changes the arguments carries them as `partialArguments`. Partials are
 * built when first read, so one nobody reads costs O(depth).
 */
function forwarder<Request, Completion>(
  emit: (event: ToolLoopEvent<Request, Completion>) => void,
  step: number,
  parsesOutput: boolean,
  parsesArguments: boolean,
): (event: NormalizedEvent | RetryEvent) => void {
  const answer = parsesOutput ? new PartialJsonParser() : undefined;
  const calls = new Map<string, PartialJsonParser>();
  const objectEvent = (parser: PartialJsonParser): ToolLoopEvent<Request, Completion> => {
    const read = parser.partial();
    return {
      type: 'object',
      get object() {
        return read();
      },
      step,
    };
  };
  return (event) => {
    if (event.type === 'finish') {
      // The turn is over: a change the parser held back (see its schedule) is shown now, even if the text is cut.
      if (answer?.end()) emit(objectEvent(answer));
      return;
    }
    if (parsesArguments && event.type === 'tool_call.delta') {
      const parser = calls.get(event.id) ?? new PartialJsonParser();
      calls.set(event.id, parser);
      if (parser.push(event.delta)) {
        const read = parser.partial();
        emit({
          ...event,
          get partialArguments() {
            return read();
          },
          step,
        });
        return;
      }
    }
    emit({ ...event, step });
    if (answer && event.type === 'content' && event.choice === 0 && answer.push(event.delta)) emit(objectEvent(answer));
  };
}

/** A tool without `execute` nor `passThrough` hands its whole step back to the host (the loop's first passthrough). */
function isPassthrough(tool: Tool | undefined): boolean {
  return tool !== undefined && tool.execute === undefined && !tool.passThrough;
}

function toolResultEvent(result: ToolResult, step: number): WithStep<ToolResultEvent> {
  return {
    type: 'tool.result',
    id: result.toolCallId,
    name: result.toolName,
    output: result.output,
    isError: result.isError,
    ...(result.durationMs === undefined ? {} : { durationMs: result.durationMs }),
    step,
  };
}

function toolProgressEvent(call: ToolCall, progress: ToolProgress, step: number): WithStep<ToolProgressEvent> {
  return { type: 'tool.progress', id: call.id, name: call.name, ...progress, step };
}

/** The text of a failed step's partial completion, when the adapter can read it. */
function partialText<Request, Completion, Message>(
  adapter: ToolLoopAdapter<Request, Completion, Message>,
  completion: Completion | undefined,
): string {
  if (completion === undefined) return '';
  try {
    return adapter.readTurn(completion).text;
  } catch {
    return '';
  }
}

/** Rejects as soon as `signal` aborts, even when the adapter does not honour it. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortError(signal));
    if (signal.aborted) onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/**
 * A suspended tool loop: the plain-JSON state it resolves with when a step holds calls back (a call that needs a
 * person's approval, a call the host runs), and the checks that state passes before it resumes. The state holds no
 * function: the tools and the loop's hooks are given again to `resume`, on any process.
 */
import { isRecord, LoopStateError, ToolError } from '../errors.js';
import type { Usage } from '../events.js';
import type { Cost } from '../observe/cost.js';
import type { ToolResultPart } from './content.js';
import type { Tool } from './define.js';
import {
  denialReason,
  errorResult,
  type HeldToolCall,
  type HoldReason,
  successResult,
  type ToolCall,
  type ToolResult,
  type ValidToolCall,
  validateToolCall,
} from './execute.js';

/** The version of the {@link LoopState} format this SDK writes and reads. */
export const LOOP_STATE_VERSION = 1;

/** Why a suspended loop waits. */
export type LoopSuspension = 'awaiting_approval' | 'awaiting_tool_results';

/** A call the suspended loop waits on, as the result's `pending` shows it. */
export interface PendingToolCall {
  id: string;
  name: string;
  /** The validated arguments (the schema's output). */
  args: unknown;
  /** What resolves it: an entry of `approvals` or of `toolResults`. */
  awaiting: HoldReason;
}

/** A tool result as a {@link LoopState} keeps it (JSON: the error object is left off, its text is in `content`). */
export interface LoopStateToolResult {
  toolCallId: string;
  toolName: string;
  output: unknown;
  content: string;
  isError: boolean;
  parts?: ToolResultPart[];
}

/** One call of the suspended step: held back (`awaiting`), or already answered (`result`). */
export interface LoopStateCall {
  id: string;
  name: string;
  /** The argument string exactly as the model sent it. */
  arguments: string;
  /** SHA-256 (hex) of the id, name and argument string: resuming checks the arguments were not changed. */
  hash: string;
  awaiting?: HoldReason;
  result?: LoopStateToolResult;
}

/**
 * Everything a suspended loop needs to go on, as plain JSON: store it anywhere (`JSON.stringify`), resume it with
 * `resume(state, { approvals, toolResults, tools })`. Not signed: the hashes catch a changed or mixed-up state, not a
 * forger who recomputes them, so keep it where only your server writes.
 */
export interface LoopState<Request = unknown, Message = unknown> {
  version: typeof LOOP_STATE_VERSION;
  /** The protocol whose loop wrote it (`chat`, `responses`, `messages`, ...): only that protocol resumes it. */
  protocol: string;
  status: LoopSuspension;
  /** The suspended step, counted from 1; the loop resumes with the next. */
  step: number;
  /** The request without its transcript, its `defineTool` tools and its loop fields (the tools come with `resume`). */
  request: Request;
  /** The transcript in the protocol's wire form, up to and including the suspended step's assistant turn. */
  messages: Message[];
  /** Usage summed over the steps so far. */
  usage?: Usage;
  /** Cost summed over the steps so far, when the model has a price. */
  cost?: Cost;
  /** The suspended step's calls in call order: each held back or answered. */
  calls: LoopStateCall[];
}

/** A person's answer to a call that needs approval: run it, or refuse it (the model reads `deny` as the error). */
export type ApprovalDecision = true | { deny: string };

/** What `resume` answers a suspended loop's pending calls with. Every pending id is answered, no other. */
export interface ResumeDecisions {
  /** For each call awaiting approval, by id. */
  approvals?: Readonly<Record<string, ApprovalDecision>>;
  /** For each call the host ran, by id: its output (a string as-is, any other value as JSON, or a `ToolContent`). */
  toolResults?: Readonly<Record<string, unknown>>;
}

/**
 * Where `value` is not a {@link LoopState}'s shape, as `path: what` (undefined when it is one). Checked by hand, not
 * with zod: core never loads zod itself, it only reads the schemas its users give.
 */
function shapeProblem(value: unknown): string | undefined {
  if (!isRecord(value)) return 'root: not an object';
  const fields: [string, (field: unknown) => boolean][] = [
    ['version', (v) => typeof v === 'number'],
    ['protocol', (v) => typeof v === 'string'],
    ['status', (v) => v === 'awaiting_approval' || v === 'awaiting_tool_results'],
    ['step', (v) => Number.isInteger(v) && Number(v) >= 1],
    ['request', isRecord],
    ['messages', Array.isArray],
    ['usage', (v) => v === undefined || (isRecord(v) && typeof v.total_tokens === 'number')],
    ['cost', (v) => v === undefined || (isRecord(v) && typeof v.total === 'number')],
  ];
  for (const [name, valid] of fields) if (!valid(value[name])) return `${name}: missing or of the wrong type`;
  const { calls } = value;
  if (!Array.isArray(calls)) return 'calls: missing or not an array';
  for (const [index, call] of calls.entries()) {
    const where = `calls.${index}`;
    if (!isRecord(call)) return `${where}: not an object`;
    for (const name of ['id', 'name', 'arguments', 'hash'])
      if (typeof call[name] !== 'string') return `${where}.${name}: not a string`;
    if (call.awaiting !== undefined && call.awaiting !== 'approval' && call.awaiting !== 'tool_result')
      return `${where}.awaiting: not "approval" or "tool_result"`;
    const result = call.result;
    if (result === undefined) continue;
    if (!isRecord(result)) return `${where}.result: not an object`;
    if (typeof result.toolCallId !== 'string' || typeof result.toolName !== 'string') return `${where}.result: no call`;
    if (typeof result.content !== 'string' || typeof result.isError !== 'boolean') return `${where}.result: no content`;
    if (result.parts !== undefined && !Array.isArray(result.parts)) return `${where}.result.parts: not an array`;
  }
  return undefined;
}

/** SHA-256 (hex) of a call's id, name and argument string (Web Crypto: browsers, edge runtimes, Node 20+). */
export async function callHash(call: ToolCall): Promise<string> {
  const bytes = new TextEncoder().encode(`${call.id}\n${call.name}\n${call.arguments}`);
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
  return Array.from(digest, (byte) => byte.toString(16).padStart(2, '0')).join('');
}

/** What a suspending step leaves: the request and transcript so far, the step's calls and what became of each. */
export interface Suspending<Request, Message> {
  protocol: string;
  step: number;
  request: Request;
  messages: readonly Message[];
  usage: Usage | undefined;
  cost: Cost | undefined;
  calls: readonly ToolCall[];
  results: readonly (ToolResult | undefined)[];
  held: readonly HeldToolCall[];
}

/** The state and the `pending` list of a suspending step; the state is a JSON copy, sharing nothing with the loop. */
export async function suspend<Request, Message>(
  suspending: Suspending<Request, Message>,
): Promise<{ state: LoopState<Request, Message>; pending: PendingToolCall[] }> {
  const { held, results } = suspending;
  const awaiting = new Map(held.map(({ call, awaiting }) => [call.id, awaiting]));
  const calls = await Promise.all(
    suspending.calls.map(async (call, index): Promise<LoopStateCall> => {
      const entry: LoopStateCall = { id: call.id, name: call.name, arguments: call.arguments, hash: await callHash(call) };
      const reason = awaiting.get(call.id);
      const result = results[index];
      if (reason !== undefined) entry.awaiting = reason;
      else if (result) entry.result = storedResult(result);
      return entry;
    }),
  );
  const status = held.some((call) => call.awaiting === 'approval') ? 'awaiting_approval' : 'awaiting_tool_results';
  const state: LoopState<Request, Message> = json({
    version: LOOP_STATE_VERSION,
    protocol: suspending.protocol,
    status,
    step: suspending.step,
    request: suspending.request,
    messages: [...suspending.messages],
    ...(suspending.usage === undefined ? {} : { usage: suspending.usage }),
    ...(suspending.cost === undefined ? {} : { cost: suspending.cost }),
    calls,
  });
  const pending = held.map(({ call, awaiting }) => ({ id: call.id, name: call.name, args: call.args, awaiting }));
  return { state, pending };
}

/**
 * Checks a state before it resumes: its shape, version and protocol, each call's hash, and that `decisions` answer
 * exactly the held calls, each the right way. Throws LoopStateError; resolves to the state as read.
 */
export async function checkState<Request, Message>(
  state: LoopState<Request, Message>,
  protocol: string,
  decisions: ResumeDecisions,
): Promise<LoopState<Request, Message>> {
  const problem = shapeProblem(state);
  if (problem !== undefined) throw new LoopStateError('invalid', `Not a suspended tool loop's state (${problem})`);
  if (state.version !== LOOP_STATE_VERSION)
    throw new LoopStateError('version', `Loop state version ${state.version} is not readable (this SDK reads ${LOOP_STATE_VERSION})`);
  if (state.protocol !== protocol)
    throw new LoopStateError('protocol', `A "${state.protocol}" loop state cannot resume on "${protocol}"`);
  const ids = new Set<string>();
  for (const call of state.calls) {
    if (ids.has(call.id)) throw new LoopStateError('tampered', `Call id "${call.id}" appears twice in the loop state`);
    ids.add(call.id);
    if ((call.awaiting === undefined) === (call.result === undefined))
      throw new LoopStateError('tampered', `Call "${call.id}" must be either awaiting or answered in the loop state`);
    if (call.result && call.result.toolCallId !== call.id)
      throw new LoopStateError('tampered', `The result of call "${call.id}" answers another call`);
    if ((await callHash(call)) !== call.hash)
      throw new LoopStateError('tampered', `The arguments of call "${call.id}" (${call.name}) do not match their hash`);
  }
  const held = state.calls.filter((call) => call.awaiting !== undefined);
  if (held.length === 0) throw new LoopStateError('tampered', 'The loop state holds no pending call');
  const status = held.some((call) => call.awaiting === 'approval') ? 'awaiting_approval' : 'awaiting_tool_results';
  if (status !== state.status) throw new LoopStateError('tampered', `The loop state says "${state.status}" but its calls are "${status}"`);
  checkAnswers('approvals', decisions.approvals, held, 'approval');
  checkAnswers('toolResults', decisions.toolResults, held, 'tool_result');
  return state;
}

/** Every call held for `reason` has an answer in `answers`, and `answers` names no other call. */
function checkAnswers(
  field: string,
  answers: Readonly<Record<string, unknown>> | undefined,
  held: readonly { id: string; awaiting?: HoldReason | undefined }[],
  reason: HoldReason,
): void {
  const expected = held.filter((call) => call.awaiting === reason).map((call) => call.id);
  const given = Object.keys(answers ?? {});
  const missing = expected.filter((id) => !given.includes(id));
  const extra = given.filter((id) => !expected.includes(id));
  if (missing.length > 0) throw new LoopStateError('decisions', `\`${field}\` has no answer for call ${missing.join(', ')}`);
  if (extra.length > 0) throw new LoopStateError('decisions', `\`${field}\` answers no pending call: ${extra.join(', ')}`);
  if (reason === 'approval')
    for (const [id, decision] of Object.entries(answers ?? {}))
      if (decision !== true && !(isRecord(decision) && typeof decision.deny === 'string'))
        throw new LoopStateError('decisions', `The approval of call ${id} must be true or { deny: reason }`);
}

/**
 * The suspended step's calls settled with the decisions: answered calls as the state kept them, approved calls
 * validated again with the tools given and returned as `run` (the loop runs them), denied calls as error results,
 * the host's results as results. `results` is in call order with holes where `run` fills in.
 */
export async function settleDecisions(
  calls: readonly LoopStateCall[],
  decisions: ResumeDecisions,
  tools: ReadonlyMap<string, Tool>,
  step: number,
): Promise<{ results: (ToolResult | undefined)[]; run: { index: number; call: ValidToolCall }[] }> {
  const results: (ToolResult | undefined)[] = [];
  const run: { index: number; call: ValidToolCall }[] = [];
  for (const [index, call] of calls.entries()) {
    if (call.result) {
      results.push(restoredResult(call.result));
      continue;
    }
    if (call.awaiting === 'tool_result') {
      results.push(successResult(call, decisions.toolResults?.[call.id], undefined));
      continue;
    }
    const decision = decisions.approvals?.[call.id];
    const refusal = decision === true ? undefined : denialReason(call.name, decision);
    if (refusal !== undefined) {
      results.push(errorResult(call, new ToolError(refusal, { toolName: call.name, toolCallId: call.id })));
      continue;
    }
    // Approved: checked again against the tools given now, which may have changed since the call was held.
    const checked = await validateToolCall(call, tools);
    if (checked instanceof ToolError) results.push(errorResult(call, checked));
    else {
      results.push(undefined);
      run.push({ index, call: { ...call, tool: checked.tool, args: checked.args, step } });
    }
  }
  return { results, run };
}

function storedResult(result: ToolResult): LoopStateToolResult {
  const { toolCallId, toolName, output, content, isError, parts } = result;
  return { toolCallId, toolName, output, content, isError, ...(parts ? { parts: [...parts] } : {}) };
}

/** A kept result as the loop's: a kept error gets its ToolError back, from the text the model read. */
function restoredResult(result: LoopStateToolResult): ToolResult {
  if (!result.isError) return { ...result };
  const error = new ToolError(typeof result.output === 'string' ? result.output : result.content, {
    toolName: result.toolName,
    toolCallId: result.toolCallId,
  });
  return { ...result, error };
}

/** A deep copy through JSON: what is stored is what would be read back. */
function json<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/**
 * Validating and running tool calls. A call runs only with complete JSON arguments its tool's schema accepted;
 * every other outcome (bad JSON, schema issues, unknown tool, denial, a throw, a timeout) becomes an error
 * result the model can read, never a crashed loop. Only the caller's abort rejects.
 */
import { TimeoutError, ToolError } from '../errors.js';
import { abortError } from '../internal/fail.js';
import { NEVER } from '../internal/signal.js';
import { type ToolResultPart, ToolContent, textOf } from './content.js';
import type { Tool, ToolArgumentIssue, ToolContext, ToolProgress, ToolValidation } from './define.js';

/** A tool call as the model produced it. */
export interface ToolCall {
  id: string;
  name: string;
  /** The argument string exactly as the model sent it (may be invalid JSON). */
  arguments: string;
}

/** The outcome of one tool call. */
export interface ToolResult {
  toolCallId: string;
  toolName: string;
  /** What the tool returned; the error text when `isError`. */
  output: unknown;
  /** What the model receives: a string result as-is, any other value as JSON, an error as `{"error": "..."}`. */
  content: string;
  /** Present when the tool returned a {@link ToolContent}: its parts, which a protocol may send as they are (images). */
  parts?: readonly ToolResultPart[];
  isError: boolean;
  /** Why the call failed: a ToolError, or a TimeoutError (phase `'tool'`) when the tool ran out of time. */
  error?: ToolError | TimeoutError;
  /** How long `execute` ran; absent when it never ran. */
  durationMs?: number;
}

/** A call that passed validation, shown to `onToolCall` before it runs. */
export interface ValidToolCall extends ToolCall {
  tool: Tool;
  /** The schema's parsed output: what `execute` will receive. */
  args: unknown;
  step: number;
}

/** `onToolCall`'s answer: run the call (`'allow'` or nothing), or refuse it, optionally saying why. */
export type ToolCallDecision = 'allow' | 'deny' | { deny: string } | undefined;

/** Options of {@link executeToolCalls}. */
export interface ExecuteToolCallsOptions<Message = unknown> {
  /** Aborts running tools (their `ctx.signal`) and rejects with an AbortError. */
  signal?: AbortSignal | undefined;
  /** Step number handed to `ctx.step`; 1 by default. */
  step?: number;
  /** Transcript handed to `ctx.messages`. */
  messages?: readonly Message[];
  /** How many tools may run at once; unbounded by default. 1 runs them one after another. */
  concurrency?: number | undefined;
  /** Asked, in call order, before each valid call runs. */
  onToolCall?: ((call: ValidToolCall) => ToolCallDecision | Promise<ToolCallDecision>) | undefined;
  /** Told of each result as it is known (tools finish in any order). */
  onResult?: ((result: ToolResult) => void) | undefined;
  /** Told of each progress report of a running tool (`ctx.progress`). */
  onProgress?: ((call: ValidToolCall, progress: ToolProgress) => void) | undefined;
  /**
   * Told when a call starts running, or is refused before (invalid, unknown, denied); the function it returns is
   * told the call's result (an AbortError when the loop was aborted while it ran). The tool loop's telemetry opens and ends each tool's span with it.
   */
  onToolStart?: ((call: ToolCall) => (outcome: ToolResult | Error) => void) | undefined;
}

/**
 * Validates and runs a turn's tool calls. Resolves to one result per call, in the calls' order whatever order
 * the tools finished in. Rejects only with an AbortError when `signal` aborts.
 */
export async function executeToolCalls<Message = unknown>(
  calls: readonly ToolCall[],
  tools: readonly Tool[],
  options: ExecuteToolCallsOptions<Message> = {},
): Promise<ToolResult[]> {
  const { signal, step = 1, messages = [], concurrency = Number.POSITIVE_INFINITY, onToolCall, onResult } = options;
  const { onToolStart, onProgress } = options;
  if (!(concurrency >= 1)) throw new RangeError('concurrency must be >= 1');
  const byName = toolsByName(tools);
  const results: ToolResult[] = new Array(calls.length);
  const runnable: { index: number; call: ValidToolCall }[] = [];

  // Validation and the approval hook run first, in call order, so a human approving calls sees them in order.
  for (const [index, call] of calls.entries()) {
    throwIfAborted(signal);
    const checked = await validateToolCall(call, byName);
    if (checked instanceof ToolError) results[index] = errorResult(call, checked);
    else {
      const valid: ValidToolCall = { ...call, tool: checked.tool, args: checked.args, step };
      const refusal = denialReason(call.name, await onToolCall?.(valid));
      if (refusal === undefined) runnable.push({ index, call: valid });
      else results[index] = errorResult(call, new ToolError(refusal, { toolName: call.name, toolCallId: call.id }));
    }
    const done = results[index];
    if (done) {
      onToolStart?.(call)(done);
      onResult?.(done);
    }
  }

  let next = 0;
  const worker = async () => {
    while (next < runnable.length) {
      const { index, call } = runnable[next++] as (typeof runnable)[number];
      const progress = (update: ToolProgress) => onProgress?.(call, update);
      const context = { signal: signal ?? NEVER, toolCallId: call.id, step, messages, progress };
      const ended = onToolStart?.(call);
      let result: ToolResult;
      try {
        result = await runTool(call.tool, call.args, context);
      } catch (aborted) {
        ended?.(aborted instanceof Error ? aborted : new Error(String(aborted)));
        throw aborted;
      }
      ended?.(result);
      results[index] = result;
      onResult?.(result);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, runnable.length) }, worker));
  return results;
}

/**
 * Parses a call's complete argument string (`""` means `{}`) and validates it with the tool's schema.
 * Resolves to the tool and the schema's parsed output, or to a ToolError naming the cause.
 */
export async function validateToolCall(
  call: ToolCall,
  tools: readonly Tool[] | ReadonlyMap<string, Tool>,
): Promise<{ tool: Tool; args: unknown } | ToolError> {
  const byName = tools instanceof Map ? tools : toolsByName(tools as readonly Tool[]);
  const tool = byName.get(call.name);
  const fail = (message: string, cause?: unknown) =>
    new ToolError(message, { toolName: call.name, toolCallId: call.id, cause });
  if (!tool) {
    const known = [...byName.keys()];
    return fail(`Unknown tool "${call.name}"${known.length ? `; available tools: ${known.join(', ')}` : ''}`);
  }
  let json: unknown;
  try {
    json = call.arguments.trim() === '' ? {} : JSON.parse(call.arguments);
  } catch (error) {
    return fail(`Invalid JSON in the arguments of tool "${call.name}": ${messageOf(error)}`, error);
  }
  let parsed: ToolValidation<unknown>;
  try {
    parsed = await tool.validate(json);
  } catch (error) {
    // A schema that cannot be evaluated fails this tool's calls, never the turn or the loop.
    return fail(`Tool "${call.name}" cannot validate its arguments: ${messageOf(error)}`, error);
  }
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue: ToolArgumentIssue) => `${issue.path.map(String).join('.') || '(root)'}: ${issue.message}`);
    return fail(`Invalid arguments for tool "${call.name}": ${issues.join('; ')}`, parsed.error);
  }
  return { tool, args: parsed.data };
}

/**
 * Runs one tool with validated arguments, honouring its `timeout` and the context's signal. A throw or a timeout
 * resolves to an error result; an abort of `context.signal` rejects with an AbortError. Progress reports go to
 * `context.progress` when given.
 */
export function runTool(
  tool: Tool,
  args: unknown,
  context: Omit<ToolContext, 'progress'> & Partial<Pick<ToolContext, 'progress'>>,
): Promise<ToolResult> {
  const call = { id: context.toolCallId, name: tool.name };
  const execute = tool.execute;
  if (!execute) {
    const error = new ToolError(`Tool "${tool.name}" has no execute function`, {
      toolName: tool.name,
      toolCallId: call.id,
    });
    return Promise.resolve(errorResult(call, error));
  }
  const outer = context.signal;
  if (outer.aborted) return Promise.reject(abortError(outer));
  const controller = new AbortController();
  const started = performance.now();

  return new Promise<ToolResult>((resolve, reject) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let settled = false;
    const settle = (finish: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      outer.removeEventListener('abort', onAbort);
      finish();
    };
    const onAbort = () => {
      controller.abort(outer.reason);
      settle(() => reject(abortError(outer)));
    };
    outer.addEventListener('abort', onAbort, { once: true });
    if (tool.timeout !== undefined) {
      const ms = tool.timeout;
      timer = setTimeout(() => {
        const error = new TimeoutError('tool', ms);
        controller.abort(error);
        settle(() => resolve(errorResult(call, error, `Tool "${tool.name}" timed out after ${ms} ms`)));
      }, ms);
    }
    Promise.resolve()
      .then(() => execute.call(tool, args, { progress: ignoreProgress, ...context, signal: controller.signal }))
      .then(
        (output) => {
          const durationMs = performance.now() - started;
          settle(() => resolve(successResult(call, output, durationMs)));
        },
        (thrown: unknown) => {
          const error = new ToolError(`Tool "${tool.name}" failed: ${messageOf(thrown)}`, {
            toolName: tool.name,
            toolCallId: call.id,
            cause: thrown,
          });
          settle(() => resolve({ ...errorResult(call, error), durationMs: performance.now() - started }));
        },
      );
  });
}

/** The text a model receives for a tool's value: a string as-is, anything else as JSON (`undefined` as `null`). */
export function toolResultContent(value: unknown): string {
  if (typeof value === 'string') return value;
  return JSON.stringify(value) ?? 'null';
}

/** The error result for a call that did not produce a value; its content is `{"error": "<message>"}`. */
export function errorResult(
  call: { id: string; name: string },
  error: ToolError | TimeoutError,
  message: string = error.message,
): ToolResult {
  return {
    toolCallId: call.id,
    toolName: call.name,
    output: message,
    content: JSON.stringify({ error: message }),
    isError: true,
    error,
  };
}

/** Tools by name; two tools may not share a name. */
export function toolsByName(tools: readonly Tool[]): Map<string, Tool> {
  const byName = new Map<string, Tool>();
  for (const tool of tools) {
    if (byName.has(tool.name)) throw new TypeError(`Two tools are named "${tool.name}"`);
    byName.set(tool.name, tool);
  }
  return byName;
}

function successResult(call: { id: string; name: string }, output: unknown, durationMs: number): ToolResult {
  if (output instanceof ToolContent) return contentResult(call, output, durationMs);
  let content: string;
  try {
    content = toolResultContent(output);
  } catch (thrown) {
    const error = new ToolError(`Tool "${call.name}" returned a value that is not JSON: ${messageOf(thrown)}`, {
      toolName: call.name,
      toolCallId: call.id,
      cause: thrown,
    });
    return { ...errorResult(call, error), durationMs };
  }
  return { toolCallId: call.id, toolName: call.name, output, content, isError: false, durationMs };
}

/** The result of a tool that returned parts; `isError` content is an error result like a throw's. */
function contentResult(call: { id: string; name: string }, output: ToolContent, durationMs: number): ToolResult {
  const text = textOf(output.parts);
  if (output.isError) {
    const error = new ToolError(text || `Tool "${call.name}" failed`, { toolName: call.name, toolCallId: call.id });
    return { ...errorResult(call, error), parts: output.parts, durationMs };
  }
  const { value, parts } = output;
  return { toolCallId: call.id, toolName: call.name, output: value, content: text, parts, isError: false, durationMs };
}

function ignoreProgress(): void {}

function denialReason(name: string, decision: ToolCallDecision): string | undefined {
  if (decision === undefined || decision === 'allow') return undefined;
  const base = `The call to tool "${name}" was denied`;
  return decision === 'deny' ? base : `${base}: ${decision.deny}`;
}

function throwIfAborted(signal: AbortSignal | undefined) {
  if (signal?.aborted) throw abortError(signal);
}

function messageOf(thrown: unknown): string {
  return thrown instanceof Error ? thrown.message : String(thrown);
}

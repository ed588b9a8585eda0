/**
 * Tool definitions: a zod schema in, the JSON Schema every protocol's wire format wants out.
 */
import type * as z from 'zod';
import { isRecord } from '../errors.js';
import { assertZod4, dropOptionalNulls, inputJsonSchema, type JsonSchema, toStrictSchema } from '../schema.js';

export type { JsonSchema } from '../schema.js';

/** A tool's report of how far it got (MCP's progress notification, or a long `defineTool` tool's own). */
export interface ToolProgress {
  /** Grows with each report. */
  progress: number;
  /** The value `progress` reaches when done, when known. */
  total?: number;
  message?: string;
}

/** What `execute` receives beside its arguments. */
export interface ToolContext<Message = unknown> {
  /** Aborts when the caller aborts the loop or the tool's own `timeout` runs out. */
  signal: AbortSignal;
  /** The id of the call being answered; always set. */
  toolCallId: string;
  /** The step (model request) that produced the call, counted from 1. */
  step: number;
  /** The transcript sent to the model in that step. */
  messages: readonly Message[];
  /** Reports progress: a streamed loop emits it as a `tool.progress` event, `serveMcp` as an MCP progress notification. */
  progress(update: ToolProgress): void;
}

/** Runs a tool: gets the schema's parsed output (defaults filled in); returns a string (sent as-is) or any JSON value. */
export type ToolExecute<Args, Result> = (args: Args, context: ToolContext) => Result | Promise<Result>;

/** What a `needsApproval` function receives beside the call's validated arguments. */
export interface ToolApprovalContext {
  /** The id of the call. */
  toolCallId: string;
  /** The step (model request) that produced the call, counted from 1. */
  step: number;
}

/**
 * Whether a call must wait for a person's decision: `true` for every call, or a function of the validated arguments
 * (`(args) => args.amount > 100`). A call that needs it stops the loop (`status: 'awaiting_approval'`) before it runs.
 */
export type ToolNeedsApproval<Args> = boolean | ApprovalCheck<Args>;

// A method's type, so that its parameter is bivariant like `execute`'s and `Tool<X>` stays assignable to `Tool`.
type ApprovalCheck<Args> = {
  check(args: Args, context: ToolApprovalContext): boolean | Promise<boolean>;
}['check'];

/** What {@link defineTool} takes. */
export interface ToolDefinition<Schema extends z.ZodType, Result> {
  name: string;
  description?: string;
  /** A zod schema for the argument object. */
  parameters: Schema;
  /** Runs the tool. Without it the tool is a passthrough tool: the loop hands its calls back to the host. */
  execute?: ToolExecute<z.output<Schema>, Result>;
  /**
   * Strict mode: every property is required, optional ones become nullable, objects allow no additional
   * properties, and the wire tool says `strict: true`. A `null` the model sends for an optional property
   * is read as "absent".
   */
  strict?: boolean;
  /** Milliseconds the tool may run before its call fails with a timeout (the tool's signal aborts). */
  timeout?: number;
  /**
   * The loop stops before running a call of this tool (its arguments validated) and resolves with
   * `status: 'awaiting_approval'` and a serialisable `state`; `resume(state, { approvals })` continues it, on any
   * process. See docs/tools.md, "Approvals that survive a restart".
   */
  needsApproval?: ToolNeedsApproval<z.output<Schema>>;
  /**
   * The host runs this tool, not the SDK (leave `execute` off): in a step that also calls SDK tools, those run, and
   * the loop resolves with `status: 'awaiting_tool_results'` and the host's calls; `resume(state, { toolResults })`
   * continues. See docs/tools.md, "Mixed passthrough".
   */
  passThrough?: boolean;
}

/** What a tool's parameters are: a zod schema ({@link defineTool}) or a JSON Schema (`defineJsonSchemaTool`). */
export type ToolParameters = z.ZodType | JsonSchema;

/** The arguments `execute` receives: a zod schema's parsed output, or the validated JSON object. */
export type ToolArgs<Schema extends ToolParameters> = Schema extends z.ZodType
  ? z.output<Schema>
  : Record<string, unknown>;

/** One reason a call's arguments were rejected: where (`path`, empty for the root) and why. */
export interface ToolArgumentIssue {
  readonly path: readonly PropertyKey[];
  readonly message: string;
}

/** The outcome of {@link Tool.validate}: zod's `safeParse` result has this shape. */
export type ToolValidation<Args> =
  | { success: true; data: Args; error?: undefined }
  | { success: false; data?: undefined; error: { readonly issues: readonly ToolArgumentIssue[] } };

/**
 * A tool made by {@link defineTool} (zod parameters) or `defineJsonSchemaTool` (JSON Schema parameters). `Args` is
 * what `execute` receives, derived from `Schema`.
 */
export interface Tool<Schema extends ToolParameters = ToolParameters, Result = unknown, Args = ToolArgs<Schema>> {
  readonly name: string;
  readonly description: string | undefined;
  /** The schema the call's arguments are validated with. */
  readonly parameters: Schema;
  /** The JSON Schema of the arguments as sent on the wire (strict-mode rewritten when `strict`). */
  readonly jsonSchema: JsonSchema;
  /** Runs the tool; absent on a passthrough tool. (Method syntax keeps `Tool<X>` assignable to `Tool`.) */
  execute?(args: Args, context: ToolContext): Result | Promise<Result>;
  readonly strict: boolean;
  readonly timeout: number | undefined;
  /** Whether a call waits for a person's decision (see {@link ToolDefinition.needsApproval}); absent: never. */
  readonly needsApproval?: ToolNeedsApproval<Args> | undefined;
  /** The host runs this tool's calls, beside the SDK's in the same step (see {@link ToolDefinition.passThrough}). */
  readonly passThrough?: boolean | undefined;
  /**
   * Validates a call's parsed arguments. In strict mode a `null` for a property the schema marks optional
   * is dropped first, so the schema's defaults apply.
   */
  readonly validate: (args: unknown) => Promise<ToolValidation<Args>>;
}

/**
 * Defines a tool from a zod schema. The JSON Schema comes from zod's own `z.toJSONSchema` (input side, so
 * properties with defaults are optional).
 *
 * @example
 * const weather = defineTool({
 *   name: 'get_weather',
 *   description: 'Current weather for a city',
 *   parameters: z.object({ city: z.string(), unit: z.enum(['c', 'f']).default('c') }),
 *   execute: async ({ city, unit }) => ({ city, temperature: 21, unit }),
 * });
 */
export function defineTool<Schema extends z.ZodType, Result = unknown>(
  definition: ToolDefinition<Schema, Result>,
): Tool<Schema, Result, z.output<Schema>> {
  const { name, parameters } = definition;
  assertZod4(`Tool "${name}": parameters`, parameters);
  const schema = inputJsonSchema(parameters);
  if (schema.type !== 'object') throw new TypeError(`Tool "${name}": parameters must be a zod object schema`);
  return buildTool(definition, schema, (args) => parameters.safeParseAsync(args));
}

/**
 * The tool object of {@link defineTool} and `defineJsonSchemaTool`, from the definition, the argument object's JSON
 * Schema and the schema's own check. Enforces the rules every tool follows (the strictest wire's name rule, OpenAI's;
 * a positive timeout); in strict mode the wire schema is rewritten and the nulls of optional properties are dropped
 * before `check`.
 */
export function buildTool<Parameters extends ToolParameters, Result, Args>(
  definition: {
    name: string;
    description?: string | undefined;
    parameters: Parameters;
    execute?: ToolExecute<Args, Result> | undefined;
    strict?: boolean | undefined;
    timeout?: number | undefined;
    needsApproval?: ToolNeedsApproval<Args> | undefined;
    passThrough?: boolean | undefined;
  },
  schema: JsonSchema,
  check: (args: unknown) => Promise<ToolValidation<Args>>,
): Tool<Parameters, Result, Args> {
  const { name, description, parameters, execute, strict = false, timeout, needsApproval, passThrough } = definition;
  if (!/^[a-zA-Z0-9_-]{1,64}$/.test(name))
    throw new TypeError(`Tool name "${name}" must be 1-64 letters, digits, "_" or "-"`);
  if (timeout !== undefined && !(timeout > 0)) throw new RangeError(`Tool "${name}": timeout must be > 0 ms`);
  // The host runs a passThrough tool: an execute beside it would never be called, so it is refused, not ignored.
  if (passThrough && execute) throw new TypeError(`Tool "${name}": a passThrough tool has no execute`);
  if (passThrough && needsApproval) throw new TypeError(`Tool "${name}": the host approves its own passThrough tool`);
  return {
    name,
    description,
    parameters,
    jsonSchema: strict ? toStrictSchema(schema) : schema,
    execute,
    strict,
    timeout,
    ...(needsApproval === undefined ? {} : { needsApproval }),
    ...(passThrough === undefined ? {} : { passThrough }),
    validate: strict ? (args) => check(dropOptionalNulls(schema, args)) : check,
  };
}

/** True for a tool made by {@link defineTool} (as opposed to a wire-format tool object). */
export function isTool(value: unknown): value is Tool {
  return (
    isRecord(value) &&
    typeof value.name === 'string' &&
    typeof value.validate === 'function' &&
    isRecord(value.jsonSchema)
  );
}

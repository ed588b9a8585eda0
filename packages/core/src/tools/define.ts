/**
 * Tool definitions: a zod schema in, the JSON Schema every protocol's wire format wants out.
 */
import * as z from 'zod';
import { Ai4tsError, isRecord } from '../errors.js';

/** A JSON Schema object, as sent on the wire. */
export type JsonSchema = Record<string, unknown>;

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
  assertZod4(name, parameters);
  const { $schema: _, ...schema } = z.toJSONSchema(parameters, { io: 'input', target: 'draft-2020-12' });
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
  },
  schema: JsonSchema,
  check: (args: unknown) => Promise<ToolValidation<Args>>,
): Tool<Parameters, Result, Args> {
  const { name, description, parameters, execute, strict = false, timeout } = definition;
  if (!/^[a-zA-Z0-9_-]{1,64}$/.test(name))
    throw new TypeError(`Tool name "${name}" must be 1-64 letters, digits, "_" or "-"`);
  if (timeout !== undefined && !(timeout > 0)) throw new RangeError(`Tool "${name}": timeout must be > 0 ms`);
  return {
    name,
    description,
    parameters,
    jsonSchema: strict ? toStrictSchema(schema, schema) : schema,
    execute,
    strict,
    timeout,
    validate: strict ? (args) => check(dropOptionalNulls(schema, args, schema)) : check,
  };
}

/**
 * zod 4 schemas carry `_zod`; a zod 3 schema (the `zod@3` package, or `zod/v3`) has only `_def`, and zod 4's
 * `toJSONSchema` would fail on it with an opaque `TypeError` (reading 'def'). Says which zod is needed instead.
 */
function assertZod4(name: string, parameters: unknown): void {
  if ((typeof parameters === 'object' || typeof parameters === 'function') && parameters !== null) {
    if ('_zod' in parameters) return;
    if ('_def' in parameters && 'safeParse' in parameters)
      throw new Ai4tsError(
        `Tool "${name}": parameters is a zod 3 schema, but ai4ts needs zod 4 (peer dependency "zod": "^4"). ` +
          `Install zod 4 (npm install zod@^4) and build the schema with it: import * as z from 'zod'.`,
      );
  }
  throw new Ai4tsError(
    `Tool "${name}": parameters must be a zod 4 schema such as z.object({ ... }) (got ${parameters === null ? 'null' : typeof parameters})`,
  );
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

/** A tool in Chat Completions' wire form. */
export interface ChatTool {
  type: 'function';
  function: { name: string; description?: string; parameters: JsonSchema; strict?: boolean };
}

/** A tool in the Responses API's wire form. */
export interface ResponsesTool {
  type: 'function';
  name: string;
  description?: string;
  parameters: JsonSchema;
  strict: boolean;
}

/** A tool in Anthropic Messages' wire form. */
export interface AnthropicTool {
  name: string;
  description?: string;
  input_schema: JsonSchema;
}

/** The Chat Completions wire form: `{type:'function', function:{name, description, parameters, strict?}}`. */
export function toChatTool(tool: Tool): ChatTool {
  return {
    type: 'function',
    function: {
      name: tool.name,
      ...(tool.description === undefined ? {} : { description: tool.description }),
      parameters: tool.jsonSchema,
      ...(tool.strict ? { strict: true } : {}),
    },
  };
}

/** The Responses wire form. `strict` is always explicit: the Responses API defaults it to true. */
export function toResponsesTool(tool: Tool): ResponsesTool {
  return {
    type: 'function',
    name: tool.name,
    ...(tool.description === undefined ? {} : { description: tool.description }),
    parameters: tool.jsonSchema,
    strict: tool.strict,
  };
}

/** The Anthropic Messages wire form: `{name, description, input_schema}`. */
export function toAnthropicTool(tool: Tool): AnthropicTool {
  return {
    name: tool.name,
    ...(tool.description === undefined ? {} : { description: tool.description }),
    input_schema: tool.jsonSchema,
  };
}

/** Rewrites a schema for strict mode (OpenAI structured outputs): all required, optional -> nullable, closed objects. */
function toStrictSchema(schema: JsonSchema, root: JsonSchema): JsonSchema {
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'properties' && isRecord(value)) {
      const required = new Set(Array.isArray(schema.required) ? schema.required : []);
      out.properties = Object.fromEntries(
        Object.entries(value).map(([name, property]) => {
          const strictProperty = toStrictSchema(property as JsonSchema, root);
          return [name, required.has(name) ? strictProperty : nullable(strictProperty, root)];
        }),
      );
      out.required = Object.keys(value);
    } else if (key === 'required' || key === 'additionalProperties') {
      // Rewritten with `properties` / below.
    } else if (SUBSCHEMA_LISTS.has(key) && Array.isArray(value)) {
      out[key] = value.map((item) => (isRecord(item) ? toStrictSchema(item, root) : item));
    } else if (SUBSCHEMA_MAPS.has(key) && isRecord(value)) {
      out[key] = Object.fromEntries(
        Object.entries(value).map(([name, item]) => [name, isRecord(item) ? toStrictSchema(item, root) : item]),
      );
    } else if (SUBSCHEMAS.has(key) && isRecord(value)) {
      out[key] = toStrictSchema(value, root);
    } else {
      out[key] = value;
    }
  }
  if (isObjectSchema(schema)) {
    out.additionalProperties = false;
    if (!('properties' in out)) {
      out.properties = {};
      out.required = [];
    }
  }
  return out;
}

const SUBSCHEMA_LISTS = new Set(['anyOf', 'oneOf', 'allOf', 'prefixItems']);
const SUBSCHEMA_MAPS = new Set(['$defs', 'definitions']);
const SUBSCHEMAS = new Set(['items', 'not']);

function isObjectSchema(schema: JsonSchema): boolean {
  return schema.type === 'object' || (Array.isArray(schema.type) && schema.type.includes('object'));
}

/** The schema, also accepting null. */
function nullable(schema: JsonSchema, root: JsonSchema): JsonSchema {
  if (acceptsNull(schema, root)) return schema;
  const plainType = typeof schema.type === 'string' && !('enum' in schema) && !('const' in schema);
  if (plainType) return { ...schema, type: [schema.type, 'null'] };
  if (Array.isArray(schema.anyOf)) return { ...schema, anyOf: [...schema.anyOf, { type: 'null' }] };
  const { description, ...rest } = schema;
  return { ...(description === undefined ? {} : { description }), anyOf: [rest, { type: 'null' }] };
}

/** Whether a (non-strict, input-side) schema already accepts `null`. */
function acceptsNull(schema: JsonSchema, root: JsonSchema): boolean {
  const target = resolveRef(schema, root);
  if (target.type === 'null' || (Array.isArray(target.type) && target.type.includes('null'))) return true;
  if (Array.isArray(target.enum) && target.enum.includes(null)) return true;
  if ('const' in target && target.const === null) return true;
  const branches = [...asList(target.anyOf), ...asList(target.oneOf)];
  return branches.some((branch) => isRecord(branch) && acceptsNull(branch, root));
}

/**
 * Strict mode makes the model send `null` for an optional property it leaves out. Drops those nulls (only where
 * the original schema made the property optional and does not itself accept null) so zod sees "absent".
 */
function dropOptionalNulls(schema: JsonSchema, value: unknown, root: JsonSchema): unknown {
  const target = resolveRef(schema, root);
  if (Array.isArray(value)) {
    const items = target.items;
    return isRecord(items) ? value.map((item) => dropOptionalNulls(items, item, root)) : value;
  }
  if (!isRecord(value)) return value;
  let out = value;
  const properties = target.properties;
  if (isRecord(properties)) {
    const required = new Set(asList(target.required));
    out = {};
    for (const [key, item] of Object.entries(value)) {
      const property = properties[key];
      if (!isRecord(property)) out[key] = item;
      else if (item === null && !required.has(key) && !acceptsNull(property, root)) continue;
      else out[key] = dropOptionalNulls(property, item, root);
    }
  }
  for (const branch of [...asList(target.anyOf), ...asList(target.oneOf), ...asList(target.allOf)])
    if (isRecord(branch)) out = dropOptionalNulls(branch, out, root) as Record<string, unknown>;
  return out;
}

function resolveRef(schema: JsonSchema, root: JsonSchema): JsonSchema {
  const ref = schema.$ref;
  if (typeof ref !== 'string' || !ref.startsWith('#')) return schema;
  let target: unknown = root;
  for (const part of ref.slice(1).split('/').filter(Boolean)) target = isRecord(target) ? target[part] : undefined;
  return isRecord(target) ? target : schema;
}

function asList(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

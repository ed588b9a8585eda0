/**
 * Tools whose parameters are a JSON Schema instead of a zod schema: what MCP servers publish, or a schema kept in
 * a file. The loop's rules are the same as for `defineTool`: a call runs only with arguments the schema accepted.
 *
 * The validator is @cfworker/json-schema: it interprets the schema (no `eval`, no `new Function`), so it runs
 * where code generation is forbidden (Cloudflare Workers, browser pages with a strict CSP), which rules out ajv and
 * schemasafe; it implements drafts 4, 7, 2019-09 and 2020-12 (the MCP default) including `$ref`, `$defs` and
 * `format`, and passes the JSON-Schema-Test-Suite for them; it builds its lookup once per tool, and a tool call's
 * arguments are small, so interpreting costs microseconds per call. The MCP SDK offers the same validator.
 */
import { type OutputUnit, type SchemaDraft, Validator } from '@cfworker/json-schema';
import { isRecord } from '../errors.js';
import {
  buildTool,
  type JsonSchema,
  type Tool,
  type ToolArgumentIssue,
  type ToolExecute,
  type ToolValidation,
} from './define.js';

/** What {@link defineJsonSchemaTool} takes. */
export interface JsonSchemaToolDefinition<Result> {
  name: string;
  description?: string;
  /** A JSON Schema of `type: "object"` for the argument object; `$schema` picks the draft (2020-12 when absent). */
  parameters: JsonSchema;
  /** Runs the tool with the validated arguments. Without it the tool is a passthrough tool. */
  execute?: ToolExecute<Record<string, unknown>, Result>;
  /** Strict mode, as for `defineTool`: the wire schema is rewritten, a `null` for an optional property means absent. */
  strict?: boolean;
  /** Milliseconds the tool may run before its call fails with a timeout (the tool's signal aborts). */
  timeout?: number;
}

/**
 * Defines a tool from a JSON Schema. Arguments are validated with @cfworker/json-schema (see this module's comment
 * for why) before `execute` ever sees them; an invalid call goes back to the model as an error result.
 *
 * @throws TypeError when the name is not 1-64 letters, digits, `_` or `-`, or the schema is not an object schema.
 *
 * @example
 * const search = defineJsonSchemaTool({
 *   name: 'search',
 *   parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
 *   execute: async ({ query }) => `results for ${String(query)}`,
 * });
 */
export function defineJsonSchemaTool<Result = unknown>(
  definition: JsonSchemaToolDefinition<Result>,
): Tool<JsonSchema, Result> {
  const { name, parameters } = definition;
  if (!isRecord(parameters) || (parameters.type !== 'object' && parameters.type !== undefined))
    throw new TypeError(`Tool "${name}": parameters must be a JSON Schema of type "object"`);
  // An object schema: models and APIs want `type` even where the server left it implicit.
  const { $schema, ...rest } = parameters;
  const schema: JsonSchema = { type: 'object', ...rest };
  const validator = new Validator(parameters, draftOf($schema), false);
  return buildTool(definition, schema, async (args): Promise<ToolValidation<Record<string, unknown>>> => {
    const { valid, errors } = evaluate(validator, args);
    if (valid && isRecord(args)) return { success: true, data: args };
    return { success: false, error: { issues: valid ? [{ path: [], message: 'must be an object' }] : issuesOf(errors) } };
  });
}

/**
 * The validator's verdict. A schema it cannot evaluate throws: an unresolvable `$ref` says so, and a `$ref` cycle
 * that never reaches a keyword recurses until the stack ends, which is named here rather than left a RangeError.
 */
function evaluate(validator: Validator, args: unknown): { valid: boolean; errors: readonly OutputUnit[] } {
  try {
    return validator.validate(args);
  } catch (error) {
    const reason =
      error instanceof RangeError
        ? 'the validator ran out of stack: its schema has a $ref cycle that never reaches a value, or the arguments nest too deep'
        : error instanceof Error
          ? error.message
          : String(error);
    throw new TypeError(reason, { cause: error });
  }
}

/** The draft a `$schema` URI names; 2020-12 (MCP's default dialect) when absent or unknown. */
function draftOf(uri: unknown): SchemaDraft {
  if (typeof uri !== 'string') return '2020-12';
  if (uri.includes('draft-04')) return '4';
  if (uri.includes('draft-07') || uri.includes('draft-06')) return '7';
  if (uri.includes('2019-09')) return '2019-09';
  return '2020-12';
}

/**
 * cfworker reports each failing keyword down the tree and, above it, the keywords that failed because of it
 * ("properties", "allOf"...). The deepest ones say what is wrong; the others repeat it.
 */
function issuesOf(errors: readonly OutputUnit[]): ToolArgumentIssue[] {
  const leaves = errors.filter(
    (error) => !errors.some((other) => other !== error && other.keywordLocation.startsWith(`${error.keywordLocation}/`)),
  );
  return leaves.map((error) => ({ path: pathOf(error.instanceLocation), message: error.error }));
}

/** `#/items/0/name` -> `['items', '0', 'name']` (JSON Pointer, `~1` and `~0` unescaped). */
function pathOf(location: string): string[] {
  return location
    .replace(/^#\/?/, '')
    .split('/')
    .filter(Boolean)
    .map((part) => decodeURIComponent(part).replace(/~1/g, '/').replace(/~0/g, '~'));
}

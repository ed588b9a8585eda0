/**
 * Structured output: a request's `output` (a zod schema) as every protocol sends it, and the reading of the answer.
 * The wire forms live in the protocol packages; what they share (the name, the strict schema, validation, the
 * repair message) lives here once.
 */
import type * as z from 'zod';
import { OutputRefusalError, type OutputIssue, OutputValidationError } from '../errors.js';
import { assertZod4, dropOptionalNulls, inputJsonSchema, type JsonSchema, toStrictSchema } from '../schema.js';

/** A request's `output` made ready for the wire and for reading the answer; see {@link structuredOutput}. */
export interface StructuredOutput<T = unknown> {
  /** The schema's `title` (zod `.meta({ title })`) when it is a valid name, else `output`. */
  readonly name: string;
  /** The schema's `description`, if any. */
  readonly description: string | undefined;
  /** The strict-mode schema (all properties required, optional ones nullable, objects closed). */
  readonly strictSchema: JsonSchema;
  /** The input-side schema as zod writes it (for a tool's `input_schema`). */
  readonly inputSchema: JsonSchema;
  /** Parses and validates the answer text (a strict `null` for an optional property reads as absent). */
  read(text: string): Promise<OutputRead<T>>;
}

/** The outcome of reading an answer: the validated object, or what is wrong with the text. */
export type OutputRead<T> = { ok: true; object: T } | { ok: false; issues: OutputIssue[] };

/** A partial object, as `object` events carry it: every property optional, at every depth. */
export type DeepPartial<T> = T extends readonly (infer Item)[]
  ? DeepPartial<Item>[]
  : T extends object
    ? { [K in keyof T]?: DeepPartial<T[K]> }
    : T;

/** The partial value of the structured answer changed (the model's JSON text so far, parsed). */
export interface ObjectEvent<T = unknown> {
  type: 'object';
  /** Never holds what the final value will not; unchanged subtrees are the same objects as in the previous event. */
  object: DeepPartial<T>;
}

const made = new WeakMap<z.ZodType, StructuredOutput>();

/**
 * The {@link StructuredOutput} of a zod schema (made once per schema). The schema must describe an object: that is
 * what OpenAI's strict mode and a tool's input accept.
 *
 * @throws Ai4tsError for a zod 3 schema or anything that is not a zod 4 schema; TypeError for a non-object schema.
 */
export function structuredOutput<S extends z.ZodType>(schema: S): StructuredOutput<z.output<S>>;
export function structuredOutput(schema: z.ZodType): StructuredOutput {
  const known = made.get(schema);
  if (known) return known;
  assertZod4('output', schema);
  const inputSchema = inputJsonSchema(schema);
  if (inputSchema.type !== 'object') throw new TypeError('output must be a zod object schema, such as z.object({ ... })');
  const { title, description } = inputSchema;
  const output: StructuredOutput = {
    name: typeof title === 'string' && /^[a-zA-Z0-9_-]{1,64}$/.test(title) ? title : 'output',
    description: typeof description === 'string' ? description : undefined,
    strictSchema: toStrictSchema(inputSchema),
    inputSchema,
    async read(text) {
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        return { ok: false, issues: [{ code: 'invalid_json', message: `Not JSON: ${message}`, path: [] }] };
      }
      const parsed = await schema.safeParseAsync(dropOptionalNulls(inputSchema, value));
      return parsed.success ? { ok: true, object: parsed.data } : { ok: false, issues: parsed.error.issues };
    },
  };
  made.set(schema, output);
  return output;
}

/** The {@link StructuredOutput} of a request's `output` field, if it has one. */
export function outputOf(request: object): StructuredOutput | undefined {
  const schema = 'output' in request ? request.output : undefined;
  if (schema === undefined) return undefined;
  assertZod4('output', schema);
  return structuredOutput(schema);
}

/** What a turn tells about its structured answer. */
export interface OutputTurn {
  text: string;
  finishReason: string;
  refusal?: string | undefined;
}

/**
 * Reads a final turn's structured answer: the object, or the typed error (a refusal, a cut-off answer, invalid
 * JSON or a schema mismatch). `repairable` is false for a refusal or a cut-off answer: asking again would not help.
 */
export async function readOutput<T>(
  output: StructuredOutput<T>,
  turn: OutputTurn,
): Promise<
  | { object: T }
  | { error: OutputValidationError; repairable: true }
  | { error: OutputValidationError | OutputRefusalError; repairable: false }
> {
  if (turn.refusal !== undefined) return { error: new OutputRefusalError(turn.refusal), repairable: false as const };
  if (turn.finishReason === 'length' || turn.finishReason === 'content_filter') {
    const issue = { code: 'truncated', message: `The answer was cut off (${turn.finishReason})`, path: [] };
    return { error: outputError(turn.text, [issue]), repairable: false as const };
  }
  const read = await output.read(turn.text);
  return read.ok ? { object: read.object } : { error: outputError(turn.text, read.issues), repairable: true as const };
}

function outputError(text: string, issues: OutputIssue[]): OutputValidationError {
  return new OutputValidationError(`The structured answer is invalid:\n${describeIssues(issues)}`, { text, issues });
}

function describeIssues(issues: readonly OutputIssue[]): string {
  return issues
    .map((issue) => `- ${issue.path.length ? `${issue.path.map(String).join('.')}: ` : ''}${issue.message}`)
    .join('\n');
}

/** The message that asks the model to fix its answer (the `repair` option). */
export function repairMessage(error: OutputValidationError): string {
  return (
    `Your answer does not match the required JSON schema:\n${describeIssues(error.issues)}\n` +
    'Answer again with only the corrected JSON.'
  );
}

/**
 * The instruction a provider without JSON Schema support gets (JSON mode plus the schema in a system message).
 */
export function schemaInstruction(output: StructuredOutput): string {
  return `Answer with a single JSON object that matches this JSON Schema, and nothing else:\n${JSON.stringify(output.inputSchema)}`;
}

/**
 * zod schemas as JSON Schema for the wire: the input-side schema, and the strict-mode rewrite OpenAI's structured
 * outputs want (used by strict tools and by structured output), with the reading back of strict answers.
 */
import type * as z from 'zod';
import { Ai4tsError, isRecord } from './errors.js';

/** A JSON Schema object, as sent on the wire. */
export type JsonSchema = Record<string, unknown>;

/**
 * The JSON Schema of a zod schema's input side (properties with defaults are optional), without `$schema`. The
 * schema's own `toJSONSchema` method (zod >= 4.2), so the converter is the app's zod and no browser bundle of ai4ts
 * carries a second one.
 */
export function inputJsonSchema(schema: z.ZodType): JsonSchema {
  const { $schema: _, ...json } = schema.toJSONSchema({ io: 'input', target: 'draft-2020-12' });
  return json;
}

/**
 * zod 4 schemas carry `_zod`, and from zod 4.2 a `toJSONSchema` method; a zod 3 schema (the `zod@3` package, or
 * `zod/v3`) has only `_def`. Either would fail later with an opaque `TypeError`: says which zod is needed instead.
 */
export function assertZod4(label: string, parameters: unknown): asserts parameters is z.ZodType {
  if ((typeof parameters === 'object' || typeof parameters === 'function') && parameters !== null) {
    if ('_zod' in parameters && 'toJSONSchema' in parameters && typeof parameters.toJSONSchema === 'function') return;
    const which = '_zod' in parameters ? 'a zod 4 schema older than 4.2' : 'a zod 3 schema';
    if ('_zod' in parameters || ('_def' in parameters && 'safeParse' in parameters))
      throw new Ai4tsError(
        `${label} is ${which}, but ai4ts needs zod 4.2 or later (peer dependency "zod": "^4.2.0"). ` +
          `Install it (npm install zod@^4.2) and build the schema with it: import * as z from 'zod'.`,
      );
  }
  throw new Ai4tsError(
    `${label} must be a zod 4 schema such as z.object({ ... }) (got ${parameters === null ? 'null' : typeof parameters})`,
  );
}

/**
 * Rewrites a schema for strict mode (OpenAI structured outputs, Anthropic's too): every property required, the
 * optional ones nullable, objects closed (`additionalProperties: false`).
 */
export function toStrictSchema(schema: JsonSchema, root: JsonSchema = schema): JsonSchema {
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
export function dropOptionalNulls(schema: JsonSchema, value: unknown, root: JsonSchema = schema): unknown {
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

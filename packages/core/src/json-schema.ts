/**
 * @ai4ts/core/json-schema: tools whose parameters are a JSON Schema instead of a zod schema, validated by
 * @cfworker/json-schema. A subpath of its own, so that apps which define their tools with zod never bundle the
 * JSON Schema validator.
 */
export { defineJsonSchemaTool, type JsonSchemaToolDefinition } from './tools/json-schema.js';

/** ai4ts/json-schema: tools with JSON Schema parameters (`defineJsonSchemaTool`), from @ai4ts/core/json-schema. */
export * from '@ai4ts/core/json-schema';

import { Ai4tsError, defineTool, isTool } from '@ai4ts/core';
// The wire forms live in their protocol packages; these tests check defineTool's schema through each of them.
import { toChatTool } from '@ai4ts/chat';
import { toAnthropicTool } from '@ai4ts/messages';
import { toResponsesTool } from '@ai4ts/responses';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import * as z3 from 'zod/v3';

const weatherParameters = z.object({
  city: z.string().describe('City name'),
  unit: z.enum(['c', 'f']).default('c'),
  days: z.number().int().optional(),
});

describe('defineTool', () => {
  it('names the problem when given a zod 3 schema (zod 4 is a peer dependency)', () => {
    const zod3Parameters = z3.object({ city: z3.string() });
    // @ts-expect-error a zod 3 schema is not a zod 4 ZodType (the types say so too)
    const define = () => defineTool({ name: 'get_weather', parameters: zod3Parameters });
    expect(define).toThrow(Ai4tsError);
    expect(define).toThrow(
      /Tool "get_weather": parameters is a zod 3 schema, but ai4ts needs zod 4.2 or later \(peer dependency "zod": "\^4.2.0"\)/,
    );
  });

  it('names the problem when given a zod 4 schema from before 4.2 (no toJSONSchema method)', () => {
    // What zod 4.0 and 4.1 schemas look like to the check: `_zod` and the parse methods, no `toJSONSchema`.
    const schema = z.object({ city: z.string() });
    const older = { _zod: schema._zod, safeParse: schema.safeParse.bind(schema) };
    const define = () => defineTool({ name: 'get_weather', parameters: older as unknown as z.ZodType });
    expect(define).toThrow(/parameters is a zod 4 schema older than 4.2, but ai4ts needs zod 4.2 or later/);
  });

  it('names the problem when parameters is not a zod schema at all', () => {
    for (const parameters of [{ type: 'object', properties: {} }, null, undefined]) {
      const define = () => defineTool({ name: 'get_weather', parameters: parameters as unknown as z.ZodType });
      expect(define).toThrow(Ai4tsError);
      expect(define).toThrow(/Tool "get_weather": parameters must be a zod 4 schema/);
    }
  });

  it('derives the input-side JSON Schema with zod: defaults and optionals are not required, no $schema', () => {
    const tool = defineTool({ name: 'get_weather', description: 'Weather', parameters: weatherParameters });
    expect(tool.jsonSchema).toEqual({
      type: 'object',
      properties: {
        city: { type: 'string', description: 'City name' },
        unit: { type: 'string', enum: ['c', 'f'], default: 'c' },
        days: { type: 'integer', minimum: expect.any(Number), maximum: expect.any(Number) },
      },
      required: ['city'],
    });
    expect(tool.strict).toBe(false);
    expect(tool.execute).toBeUndefined();
  });

  it('gives the three wire forms', () => {
    const tool = defineTool({ name: 'get_weather', description: 'Weather', parameters: weatherParameters });
    expect(toChatTool(tool)).toEqual({
      type: 'function',
      function: { name: 'get_weather', description: 'Weather', parameters: tool.jsonSchema },
    });
    expect(toResponsesTool(tool)).toEqual({
      type: 'function',
      name: 'get_weather',
      description: 'Weather',
      parameters: tool.jsonSchema,
      strict: false,
    });
    expect(toAnthropicTool(tool)).toEqual({
      name: 'get_weather',
      description: 'Weather',
      input_schema: tool.jsonSchema,
    });
    const strict = defineTool({ name: 'noop', parameters: z.object({}), strict: true });
    expect(toChatTool(strict)).toEqual({
      type: 'function',
      function: {
        name: 'noop',
        parameters: { type: 'object', properties: {}, required: [], additionalProperties: false },
        strict: true,
      },
    });
    expect(toResponsesTool(strict).strict).toBe(true);
    expect('description' in toAnthropicTool(strict)).toBe(false);
  });

  it('rejects bad names, non-object parameters and bad timeouts', () => {
    expect(() => defineTool({ name: 'has space', parameters: z.object({}) })).toThrow(TypeError);
    expect(() => defineTool({ name: 'x', parameters: z.string() })).toThrow(/zod object schema/);
    expect(() => defineTool({ name: 'x', parameters: z.object({}), timeout: 0 })).toThrow(RangeError);
  });

  it('tells defineTool objects from wire tools', () => {
    const tool = defineTool({ name: 't', parameters: z.object({}) });
    expect(isTool(tool)).toBe(true);
    expect(isTool({ ...tool })).toBe(true);
    expect(isTool(toChatTool(tool))).toBe(false);
    expect(isTool(toAnthropicTool(tool))).toBe(false);
    expect(isTool(null)).toBe(false);
  });

  it('validates to the parsed output, defaults filled in', async () => {
    const tool = defineTool({ name: 'get_weather', parameters: weatherParameters });
    const ok = await tool.validate({ city: 'Paris' });
    expect(ok.success && ok.data).toEqual({ city: 'Paris', unit: 'c' });
    const bad = await tool.validate({ city: 3 });
    expect(bad.success).toBe(false);
  });
});

describe('strict mode', () => {
  const parameters = z.object({
    query: z.string(),
    limit: z.number().default(10),
    note: z.string().nullable(),
    tags: z.array(z.object({ name: z.string(), weight: z.number().optional() })).optional(),
    mode: z.enum(['fast', 'exact']).optional(),
    filter: z.object({ since: z.string().optional() }).optional(),
  });
  const tool = defineTool({ name: 'search', description: 'Search', parameters, strict: true });

  it('requires every property, makes optional ones nullable, closes every object', () => {
    expect(tool.jsonSchema).toEqual({
      type: 'object',
      properties: {
        query: { type: 'string' },
        limit: { type: ['number', 'null'], default: 10 },
        note: { type: ['string', 'null'] },
        tags: {
          type: ['array', 'null'],
          items: {
            type: 'object',
            properties: { name: { type: 'string' }, weight: { type: ['number', 'null'] } },
            required: ['name', 'weight'],
            additionalProperties: false,
          },
        },
        mode: { anyOf: [{ type: 'string', enum: ['fast', 'exact'] }, { type: 'null' }] },
        filter: {
          type: ['object', 'null'],
          properties: { since: { type: ['string', 'null'] } },
          required: ['since'],
          additionalProperties: false,
        },
      },
      required: ['query', 'limit', 'note', 'tags', 'mode', 'filter'],
      additionalProperties: false,
    });
    expect(toChatTool(tool).function.strict).toBe(true);
  });

  it('reads the nulls a strict model sends for omitted optionals as absent, at every level', async () => {
    const fromModel = {
      query: 'q',
      limit: null,
      note: null,
      tags: [{ name: 'a', weight: null }, { name: 'b', weight: 2 }],
      mode: null,
      filter: { since: null },
    };
    const parsed = await tool.validate(fromModel);
    expect(parsed.success).toBe(true);
    // `limit` got its default; `note` is nullable in the schema itself, so its null is kept.
    expect(parsed.data).toEqual({
      query: 'q',
      limit: 10,
      note: null,
      tags: [{ name: 'a' }, { name: 'b', weight: 2 }],
      filter: {},
    });
    expect((await tool.validate({ ...fromModel, query: null })).success).toBe(false);
  });

  it('keeps the description outside the null branch', () => {
    const described = defineTool({
      name: 'd',
      strict: true,
      parameters: z.object({ kind: z.enum(['a', 'b']).optional().describe('Kind') }),
    });
    expect(described.jsonSchema.properties).toEqual({
      kind: { description: 'Kind', anyOf: [{ type: 'string', enum: ['a', 'b'] }, { type: 'null' }] },
    });
  });
});

import {
  executeToolCalls,
  isTool,
  type JsonSchema,
  ToolContent,
  ToolError,
  validateToolCall,
} from '@ai4ts/core';
import { toChatTool } from '@ai4ts/chat';
import { toAnthropicTool } from '@ai4ts/messages';
import { defineJsonSchemaTool } from '@ai4ts/core/json-schema';
import { describe, expect, it } from 'vitest';

const place: JsonSchema = {
  type: 'object',
  properties: {
    city: { type: 'string', minLength: 1 },
    when: { type: 'string', format: 'date' },
    unit: { enum: ['c', 'f'] },
    stops: { type: 'array', items: { $ref: '#/$defs/stop' } },
  },
  required: ['city'],
  additionalProperties: false,
  $defs: { stop: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } },
};

function recorder() {
  const ran: unknown[] = [];
  const tool = defineJsonSchemaTool({
    name: 'plan',
    description: 'Plans a trip',
    parameters: place,
    execute: async (args) => {
      ran.push(args);
      return 'planned';
    },
  });
  return { tool, ran };
}

describe('defineJsonSchemaTool', () => {
  it('is a tool: the schema goes on the wire as given', () => {
    const { tool } = recorder();
    expect(isTool(tool)).toBe(true);
    expect(toChatTool(tool)).toEqual({
      type: 'function',
      function: { name: 'plan', description: 'Plans a trip', parameters: place },
    });
    expect(toAnthropicTool(tool).input_schema).toEqual(place);
  });

  it('accepts valid arguments, $ref and format included', async () => {
    const { tool } = recorder();
    const valid = { city: 'Paris', when: '2026-12-01', stops: [{ name: 'Lyon' }] };
    expect(await tool.validate(valid)).toEqual({ success: true, data: valid });
  });

  it('names each problem with its path', async () => {
    const { tool } = recorder();
    const checked = await tool.validate({ city: '', when: 'tomorrow', unit: 'k', stops: [{}], extra: 1 });
    expect(checked.success).toBe(false);
    if (checked.success) return;
    const paths = checked.error.issues.map((issue) => issue.path.join('.'));
    expect(paths).toEqual(expect.arrayContaining(['city', 'when', 'unit', 'stops.0', 'extra']));
    expect(checked.error.issues.every((issue) => issue.message.length > 0)).toBe(true);
  });

  it('never runs on invalid arguments: the model gets an error result', async () => {
    const { tool, ran } = recorder();
    const results = await executeToolCalls(
      [
        { id: 'a', name: 'plan', arguments: '{"city":42}' },
        { id: 'b', name: 'plan', arguments: '{"city":"Rome"' },
        { id: 'c', name: 'plan', arguments: '{"city":"Rome"}' },
      ],
      [tool],
    );
    expect(results.map((result) => result.isError)).toEqual([true, true, false]);
    expect(JSON.parse(results[0]?.content ?? '').error).toMatch(/^Invalid arguments for tool "plan": city: /);
    expect(ran).toEqual([{ city: 'Rome' }]);
  });

  it('reads the draft from $schema (draft-07 array `items`) and defaults to 2020-12', async () => {
    const draft7 = defineJsonSchemaTool({
      name: 'pair',
      parameters: {
        $schema: 'http://json-schema.org/draft-07/schema#',
        type: 'object',
        properties: { pair: { type: 'array', items: [{ type: 'string' }, { type: 'number' }] } },
      },
    });
    expect((await draft7.validate({ pair: ['a', 1] })).success).toBe(true);
    expect((await draft7.validate({ pair: [1, 'a'] })).success).toBe(false);
    expect(draft7.jsonSchema).not.toHaveProperty('$schema');
    const modern = defineJsonSchemaTool({
      name: 'tuple',
      parameters: { type: 'object', properties: { pair: { prefixItems: [{ type: 'string' }], items: false } } },
    });
    expect((await modern.validate({ pair: ['a'] })).success).toBe(true);
    expect((await modern.validate({ pair: ['a', 'b'] })).success).toBe(false);
  });

  it('strict: the wire schema is closed and required-nullable, a null for an optional property means absent', async () => {
    const tool = defineJsonSchemaTool({
      name: 'opt',
      strict: true,
      parameters: { type: 'object', properties: { a: { type: 'string' }, b: { type: 'integer' } }, required: ['a'] },
    });
    expect(tool.jsonSchema).toEqual({
      type: 'object',
      properties: { a: { type: 'string' }, b: { type: ['integer', 'null'] } },
      required: ['a', 'b'],
      additionalProperties: false,
    });
    expect(await tool.validate({ a: 'x', b: null })).toEqual({ success: true, data: { a: 'x' } });
    expect((await tool.validate({ a: null, b: 1 })).success).toBe(false);
  });

  it('refuses a schema that is not an object schema, an arguments value that is not an object, and a bad name', async () => {
    expect(() => defineJsonSchemaTool({ name: 'x', parameters: { type: 'string' } })).toThrow(TypeError);
    expect(() => defineJsonSchemaTool({ name: 'a b', parameters: { type: 'object' } })).toThrow(TypeError);
    const open = defineJsonSchemaTool({ name: 'open', parameters: {} });
    expect(open.jsonSchema).toEqual({ type: 'object' });
    expect((await open.validate([1])).success).toBe(false);
  });
});

describe('a schema the validator cannot evaluate', () => {
  const cycles: Record<string, JsonSchema> = {
    'the root referring to itself': { type: 'object', $ref: '#' },
    'two $defs referring to each other': {
      type: 'object',
      properties: { x: { $ref: '#/$defs/a' } },
      $defs: { a: { $ref: '#/$defs/b' }, b: { $ref: '#/$defs/a' } },
    },
  };
  for (const [name, parameters] of Object.entries(cycles))
    it(`a $ref cycle (${name}) is a clear error of that tool, never a RangeError; other tools still run`, async () => {
      const loop = defineJsonSchemaTool({ name: 'loop', parameters, execute: () => 'ran' });
      const fine = defineJsonSchemaTool({ name: 'fine', parameters: { type: 'object' }, execute: () => 'ran' });
      const checked = await validateToolCall({ id: 'c1', name: 'loop', arguments: '{"x":1}' }, [loop, fine]);
      expect(checked).toBeInstanceOf(ToolError);
      expect((checked as ToolError).message).toMatch(/^Tool "loop" cannot validate its arguments: .*its schema has a \$ref cycle/);
      const [failed, ran] = await executeToolCalls(
        [
          { id: 'c1', name: 'loop', arguments: '{"x":1}' },
          { id: 'c2', name: 'fine', arguments: '{}' },
        ],
        [loop, fine],
      );
      expect(failed).toMatchObject({ isError: true, toolCallId: 'c1' });
      expect(ran).toMatchObject({ isError: false, output: 'ran' });
    });

  it('an unresolvable $ref is a clear error of that tool', async () => {
    const tool = defineJsonSchemaTool({
      name: 'dangling',
      parameters: { type: 'object', properties: { x: { $ref: '#/$defs/missing' } } },
      execute: () => 'ran',
    });
    const checked = await validateToolCall({ id: 'c1', name: 'dangling', arguments: '{"x":1}' }, [tool]);
    expect(checked).toBeInstanceOf(ToolError);
    expect((checked as ToolError).message).toMatch(/^Tool "dangling" cannot validate its arguments: .*Unresolved \$ref/);
  });
});

describe('ToolContent results', () => {
  it('parts become the text the model reads; isError makes an error result', async () => {
    const image = { type: 'image', data: 'AAAA', mimeType: 'image/png' } as const;
    const tool = defineJsonSchemaTool({
      name: 'draw',
      parameters: { type: 'object', properties: { fail: { type: 'boolean' } } },
      execute: ({ fail }) =>
        new ToolContent([{ type: 'text', text: fail ? 'no ink' : 'drawn' }, image], { isError: fail === true }),
    });
    const [ok, failed] = await executeToolCalls(
      [
        { id: 'a', name: 'draw', arguments: '{}' },
        { id: 'b', name: 'draw', arguments: '{"fail":true}' },
      ],
      [tool],
    );
    expect(ok).toMatchObject({ isError: false, output: 'drawn\n[image: image/png]', content: 'drawn\n[image: image/png]' });
    expect(ok?.parts).toEqual([{ type: 'text', text: 'drawn' }, image]);
    expect(failed).toMatchObject({ isError: true, content: JSON.stringify({ error: 'no ink\n[image: image/png]' }) });
  });
});

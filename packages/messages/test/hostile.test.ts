/**
 * Hostile server data: block indexes no API sends (huge, negative, fractional, out of order, repeated) cost nothing
 * and break nothing, and `__proto__` / `constructor` keys in the JSON stay plain data.
 */
import { ProtocolError, type Usage } from '@ai4ts/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Message, MessagesStreamListener } from '../src/index.js';
import { messageStart } from './fixtures.js';

/** Every object in `value` has the prototype JSON.parse gives: Object.prototype, or Array.prototype for arrays. */
function expectPlainPrototypes(value: unknown): void {
  if (typeof value !== 'object' || value === null) return;
  expect(Object.getPrototypeOf(value)).toBe(Array.isArray(value) ? Array.prototype : Object.prototype);
  for (const key of Object.keys(value)) expectPlainPrototypes(Reflect.get(value, key));
}

/** Feeds SSE data lines (JSON text, so `1e999` and `__proto__` arrive as the wire has them). */
function feed(listener: MessagesStreamListener, lines: string[]): void {
  for (const data of lines) listener.pushSse({ event: 'message', data });
}

const START = JSON.stringify(messageStart({ input_tokens: 10, output_tokens: 1 }));
const STOP = ['{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":5}}', '{"type":"message_stop"}'];

/** One block's events: a text block, or a tool_use block whose input streams in two pieces. */
function blockLines(index: string, i: number, kind: 'text' | 'tool'): string[] {
  if (kind === 'text') {
    return [
      `{"type":"content_block_start","index":${index},"content_block":{"type":"text","text":""}}`,
      `{"type":"content_block_delta","index":${index},"delta":{"type":"text_delta","text":"t${i}"}}`,
      `{"type":"content_block_stop","index":${index}}`,
    ];
  }
  return [
    `{"type":"content_block_start","index":${index},"content_block":{"type":"tool_use","id":"toolu_${i}","name":"f","input":{}}}`,
    `{"type":"content_block_delta","index":${index},"delta":{"type":"input_json_delta","partial_json":"{\\"n\\":"}}`,
    `{"type":"content_block_delta","index":${index},"delta":{"type":"input_json_delta","partial_json":"${i}}"}}`,
    `{"type":"content_block_stop","index":${index}}`,
  ];
}

describe('MessagesStreamListener: hostile indexes', () => {
  const validIndex = fc.oneof(fc.nat(20), fc.constantFrom(1e9, 2 ** 31, 2 ** 53, 1e300));
  /** Events that can never be right, whatever came before: each must fail the stream with a ProtocolError. */
  const broken = fc.constantFrom(
    '{"type":"content_block_start","index":-1,"content_block":{"type":"text","text":""}}',
    '{"type":"content_block_start","index":0.5,"content_block":{"type":"text","text":""}}',
    '{"type":"content_block_start","index":1e999,"content_block":{"type":"text","text":""}}',
    '{"type":"content_block_start","index":"0","content_block":{"type":"text","text":""}}',
    '{"type":"content_block_delta","index":-1e9,"delta":{"type":"text_delta","text":"x"}}',
    '{"type":"content_block_delta","index":123456789012,"delta":{"type":"text_delta","text":"x"}}',
    '{"type":"content_block_stop","index":7.25}',
  );

  it('blocks at any distinct indexes, in any order, come out in index order; a broken index is a ProtocolError', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.tuple(validIndex, fc.constantFrom<'text' | 'tool'>('text', 'tool')), {
          maxLength: 8,
          selector: ([index]) => index,
        }),
        fc.option(fc.tuple(broken, fc.nat()), { nil: undefined }),
        (blocks, injected) => {
          const lines = [START, ...blocks.flatMap(([index, kind], i) => blockLines(JSON.stringify(index), i, kind)), ...STOP];
          // Anything in `broken` fails the stream, wherever it lands after message_start.
          if (injected) lines.splice(1 + (injected[1] % (lines.length - 1)), 0, injected[0]);
          const listener = new MessagesStreamListener();
          let message: Message | undefined;
          try {
            feed(listener, lines);
            message = listener.end();
          } catch (error) {
            expect(error).toBeInstanceOf(ProtocolError);
            expect(listener.status).toBe('failed');
            return;
          }
          expect(injected).toBeUndefined();
          const sorted = blocks.map(([index, kind], i) => ({ index, kind, i })).sort((a, b) => a.index - b.index);
          expect(message.content).toEqual(
            sorted.map(({ kind, i }) =>
              kind === 'text' ? { type: 'text', text: `t${i}` } : { type: 'tool_use', id: `toolu_${i}`, name: 'f', input: { n: i } },
            ),
          );
          expect(listener.text).toBe(sorted.flatMap(({ kind, i }) => (kind === 'text' ? [`t${i}`] : [])).join(''));
          expect(listener.toolUses.map((block) => block.id)).toEqual(
            sorted.flatMap(({ kind, i }) => (kind === 'tool' ? [`toolu_${i}`] : [])),
          );
          expectPlainPrototypes(message);
        },
      ),
    );
  });

  it('a start at an index already started is a ProtocolError, even at 1e9', () => {
    const listener = new MessagesStreamListener();
    const lines = [START, ...blockLines('1000000000', 0, 'text'), ...blockLines('1000000000', 1, 'text')];
    expect(() => feed(listener, lines)).toThrow(ProtocolError);
    expect(listener.snapshot()?.content).toEqual([{ type: 'text', text: 't0' }]);
  });
});

describe('MessagesStreamListener: __proto__ in server data', () => {
  it('a message_delta usage with __proto__ keeps the numbers the JSON says (issue 11, item 5)', () => {
    const listener = new MessagesStreamListener();
    const usages: Usage[] = [];
    listener.on('usage', (event) => usages.push(event.usage));
    feed(listener, [
      '{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","model":"c","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":1}}}',
      '{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"input_tokens":10,"output_tokens":9,"__proto__":{"cache_read_input_tokens":1000000}}}',
      '{"type":"message_stop"}',
    ]);
    const message = listener.end();
    expect(usages.at(-1)).toEqual({ prompt_tokens: 10, completion_tokens: 9, total_tokens: 19 });
    expect(Object.getPrototypeOf(message.usage)).toBe(Object.prototype);
    expect(message.usage.cache_read_input_tokens).toBeUndefined();
    expect(Object.hasOwn(message.usage, '__proto__')).toBe(true);
    expect(JSON.stringify(message.usage)).toBe('{"input_tokens":10,"output_tokens":9,"__proto__":{"cache_read_input_tokens":1000000}}');
    expectPlainPrototypes(message);
  });

  it('__proto__, constructor and prototype keys in a message, a block, a delta and a stop reason stay own data', () => {
    const listener = new MessagesStreamListener();
    feed(listener, [
      '{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","model":"c","content":[],"stop_reason":null,"stop_sequence":null,"__proto__":{"id":"evil"},"usage":{"input_tokens":3,"output_tokens":1,"__proto__":{"input_tokens":99}}}}',
      '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"","__proto__":{"text":"evil"},"constructor":"c"}}',
      '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"ok","__proto__":{"text":"evil"}}}',
      '{"type":"content_block_stop","index":0}',
      '{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"t","name":"f","input":{}}}',
      '{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\\"__proto__\\":{\\"admin\\":true},\\"a\\":1}"}}',
      '{"type":"content_block_stop","index":1}',
      '{"type":"message_delta","delta":{"stop_reason":"constructor","__proto__":{"stop_reason":"end_turn"},"prototype":1},"usage":{"output_tokens":2}}',
      '{"type":"message_stop"}',
    ]);
    const message = listener.end();
    expectPlainPrototypes(message);
    expect(message.id).toBe('m');
    expect(message.usage.input_tokens).toBe(3);
    expect(message.stop_reason).toBe('constructor');
    expect(message.content[0]).toEqual(JSON.parse('{"type":"text","text":"ok","__proto__":{"text":"evil"},"constructor":"c"}'));
    const tool = listener.toolUses[0];
    expect(tool?.input).toEqual(JSON.parse('{"__proto__":{"admin":true},"a":1}'));
    expect(Reflect.get(tool?.input ?? {}, 'admin')).toBeUndefined();
    expect(Object.hasOwn(message, '__proto__') && Object.hasOwn(message, 'prototype')).toBe(true);
    const finishes: unknown[] = [];
    const again = new MessagesStreamListener().on('finish', (event) => finishes.push(event.finishReason));
    feed(again, [START, '{"type":"message_delta","delta":{"stop_reason":"constructor"}}', '{"type":"message_stop"}']);
    expect(finishes).toEqual(['constructor']);
  });
});

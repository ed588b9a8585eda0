/**
 * Hostile server data: indexes no provider sends (huge, negative, fractional, repeated, not numbers) cost nothing
 * and break nothing, and `__proto__` / `constructor` keys in the JSON stay plain data.
 */
import { type ChatCompletion, ChatStreamListener } from '@ai4ts/chat';
import { Ai4tsError } from '@ai4ts/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { JsonProgress } from '../src/merge.js';
import { chunk, finish } from './helpers.js';

/** Every object in `value` has the prototype JSON.parse gives: Object.prototype, or Array.prototype for arrays. */
function expectPlainPrototypes(value: unknown): void {
  if (typeof value !== 'object' || value === null) return;
  expect(Object.getPrototypeOf(value)).toBe(Array.isArray(value) ? Array.prototype : Object.prototype);
  for (const key of Object.keys(value)) expectPlainPrototypes(Reflect.get(value, key));
}

const hostileIndex = fc.oneof(
  fc.constantFrom(1e9, 2 ** 31, 2 ** 53, Number.MAX_VALUE, -1, -1e9, 0.5, -0, Number.NaN, Number.POSITIVE_INFINITY),
  fc.integer({ min: -3, max: 3 }),
  fc.double(),
);

/** Pushes chunks then ends; anything thrown must be one of the SDK's typed errors. */
function settle(chunks: unknown[]): ChatCompletion | Ai4tsError {
  // About merging, not the terminator: read as a server that ends without [DONE].
  const listener = new ChatStreamListener({ finishOnEnd: true });
  try {
    for (const c of chunks) listener.push(c);
    return listener.end();
  } catch (error) {
    expect(error).toBeInstanceOf(Ai4tsError);
    return error instanceof Ai4tsError ? error : new Ai4tsError(String(error));
  }
}

describe('ChatStreamListener: hostile indexes', () => {
  it('calls at any distinct indexes come out whole, in arrival order, their fragments interleaved any way', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(hostileIndex, { minLength: 1, maxLength: 8, comparator: 'SameValueZero' }),
        fc.array(fc.nat(), { maxLength: 40 }),
        (indexes, picks) => {
          const calls = indexes.map((index, i) => ({ index, args: JSON.stringify({ n: i, s: 'x'.repeat(i) }), at: 0 }));
          const chunks: unknown[] = calls.map((call, i) =>
            chunk({ tool_calls: [{ index: call.index, id: `call_${i}`, type: 'function', function: { name: `f${i}` } }] }),
          );
          // The argument fragments, in an order the picks choose.
          const open = () => calls.filter((call) => call.at < call.args.length);
          for (let p = 0; open().length > 0; p++) {
            const ready = open();
            const call = ready[(picks[p] ?? 0) % ready.length];
            if (!call) break;
            const piece = call.args.slice(call.at, call.at + 1 + ((picks[p] ?? 0) % 5));
            call.at += piece.length;
            chunks.push(chunk({ tool_calls: [{ index: call.index, function: { arguments: piece } }] }));
          }
          chunks.push(finish('tool_calls'));
          const result = settle(chunks);
          expect(result).not.toBeInstanceOf(Ai4tsError);
          if (result instanceof Ai4tsError) return;
          expect(result.choices[0]?.message.tool_calls).toEqual(
            calls.map((call, i) => ({ id: `call_${i}`, type: 'function', function: { name: `f${i}`, arguments: call.args } })),
          );
        },
      ),
    );
  });

  it('any index values (repeated, missing, not numbers) and choice indexes give a completion or a typed error', () => {
    const anyIndex = fc.oneof(hostileIndex, fc.constantFrom(undefined, null, '0', '1e9', {}, [], true));
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            index: anyIndex,
            choice: anyIndex,
            id: fc.constantFrom(undefined, '', 'null', 'a', 'b'),
            name: fc.constantFrom(undefined, '', 'f', 'g'),
            args: fc.constantFrom(undefined, '', '{', '}', '{"a":1}', '"', '[]'),
          }),
          { maxLength: 20 },
        ),
        (fragments) => {
          const chunks: unknown[] = fragments.map(({ index, choice, id, name, args }) => ({
            choices: [{ index: choice, delta: { tool_calls: [{ index, id, function: { name, arguments: args } }] } }],
          }));
          const choices = new Set(fragments.map((f) => (typeof f.choice === 'number' ? f.choice : 0)));
          for (const choice of choices) chunks.push({ choices: [{ index: choice, delta: {}, finish_reason: 'stop' }] });
          const result = settle(chunks);
          if (result instanceof Ai4tsError) return;
          expectPlainPrototypes(result);
          // At most one call per fragment, each with an id and its arguments as a string.
          const calls = result.choices.flatMap((choice) => choice.message.tool_calls ?? []);
          expect(calls.length).toBeLessThanOrEqual(fragments.length);
          for (const call of calls) {
            expect(call.id).not.toBe('');
            expect(typeof call.function.arguments).toBe('string');
          }
        },
      ),
    );
  });
});

describe('ChatStreamListener: __proto__ in server data', () => {
  const pushed = (...lines: string[]): ChatCompletion => {
    const listener = new ChatStreamListener();
    for (const data of lines) listener.pushSse({ event: 'message', data });
    listener.pushSse({ event: 'message', data: '[DONE]' });
    return listener.end();
  };

  it('usage with __proto__ keeps the numbers the JSON says', () => {
    const completion = pushed(
      '{"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}',
      '{"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":2,"__proto__":{"prompt_tokens":1000000,"total_tokens":7}}}',
    );
    expect(completion.usage?.prompt_tokens).toBe(10);
    expect(completion.usage?.total_tokens).toBe(12);
    expect(Object.getPrototypeOf(completion.usage)).toBe(Object.prototype);
    expect(Object.hasOwn(completion.usage ?? {}, '__proto__')).toBe(true);
    expectPlainPrototypes(completion);
  });

  it('unknown delta and tool-call fields named __proto__, constructor or prototype are kept as own data', () => {
    const completion = pushed(
      '{"choices":[{"index":0,"delta":{"content":"a","__proto__":{"polluted":1},"constructor":{"x":[1]}}}]}',
      '{"choices":[{"index":0,"delta":{"__proto__":{"more":2},"constructor":{"x":[2]},"prototype":3}}]}',
      '{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"f","arguments":"{}"},"__proto__":{"sig":"s"},"extra_content":{"__proto__":{"deep":true}}}]}}]}',
      '{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}',
    );
    const message = completion.choices[0]?.message;
    expectPlainPrototypes(completion);
    expect(JSON.parse(JSON.stringify(message))).toEqual(
      JSON.parse(
        '{"__proto__":{"polluted":1,"more":2},"constructor":{"x":[1,2]},"prototype":3,"role":"assistant","content":"a",' +
          '"tool_calls":[{"__proto__":{"sig":"s"},"extra_content":{"__proto__":{"deep":true}},"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]}',
      ),
    );
    expect(Reflect.get(message ?? {}, 'polluted')).toBeUndefined();
    expect(Reflect.get({}, 'polluted')).toBeUndefined();
    expect(Reflect.get({}, 'deep')).toBeUndefined();
  });
});

describe('JsonProgress: reading growing arguments once', () => {
  const parses = (text: string) => {
    try {
      JSON.parse(text);
      return true;
    } catch {
      return false;
    }
  };

  it('says complete exactly when JSON.parse accepts the text so far, however the text grows', () => {
    const text = fc.oneof(
      fc.json(),
      fc.json().map((json) => `${json} `),
      fc.tuple(fc.json(), fc.constantFrom('}', ']', '"', 'x', '{}', ' 1')).map(([json, tail]) => json + tail),
      fc.string({ unit: fc.constantFrom('{', '}', '[', ']', '"', '\\', ':', ',', '1', 'a', ' ') }),
    );
    fc.assert(
      fc.property(text, fc.array(fc.nat(), { maxLength: 8 }), (whole, cuts) => {
        const progress = new JsonProgress();
        const ends = [...new Set([...cuts.map((cut) => cut % (whole.length + 1)), whole.length])].sort((a, b) => a - b);
        for (const end of ends) {
          const prefix = whole.slice(0, end);
          expect(progress.complete(prefix)).toBe(parses(prefix));
        }
      }),
    );
  });
});

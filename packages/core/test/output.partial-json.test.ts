import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PartialJsonParser } from '../src/output/partial-json.js';
import { expectMonotone } from '@ai4ts/test-kit';

/** Every value the parser reported, in order, for `text` cut into `pieces`. */
function partials(pieces: readonly string[]): { values: unknown[]; parser: PartialJsonParser } {
  const parser = new PartialJsonParser();
  const values: unknown[] = [];
  for (const piece of pieces) if (parser.push(piece)) values.push(parser.value);
  if (parser.end()) values.push(parser.value);
  return { values, parser };
}

/** `text` cut at the given positions. */
function cut(text: string, positions: readonly number[]): string[] {
  const sorted = [...new Set(positions.map((p) => p % (text.length + 1)))].sort((a, b) => a - b);
  const pieces: string[] = [];
  let from = 0;
  for (const at of sorted) {
    pieces.push(text.slice(from, at));
    from = at;
  }
  pieces.push(text.slice(from));
  return pieces;
}

describe('PartialJsonParser', () => {
  it('for any JSON value and any fragmentation: partials are monotone and the last equals JSON.parse', () => {
    fc.assert(
      fc.property(
        fc.jsonValue({ maxDepth: 4 }),
        fc.boolean(),
        fc.array(fc.nat(), { maxLength: 40 }),
        (value, pretty, positions) => {
          const text = pretty ? JSON.stringify(value, null, 2) : JSON.stringify(value);
          const expected: unknown = JSON.parse(text);
          const { values, parser } = partials(cut(text, positions));
          expect(parser.error).toBeUndefined();
          expect(parser.complete).toBe(true);
          expectMonotone(values, expected);
          expect(values.at(-1)).toEqual(expected);
          expect(Object.is(parser.value, expected) || JSON.stringify(parser.value) === JSON.stringify(expected)).toBe(true);
        },
      ),
      { numRuns: 400 },
    );
  });

  it('any unicode string, escaped or not, split anywhere (surrogate pairs and \\u escapes across deltas)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), fc.boolean(), fc.array(fc.nat(), { maxLength: 30 }), (s, ascii, positions) => {
        const text = ascii
          ? JSON.stringify(s).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
          : JSON.stringify(s);
        const { values } = partials(cut(text, positions));
        expect(values.at(-1)).toBe(s);
        for (const partial of values) expect(s.startsWith(partial as string)).toBe(true);
      }),
    );
  });

  it('a number appears only once complete: -0.5e-3 digit by digit', () => {
    const { values } = partials([...'{"n": -0.5e-3}']);
    expect(values).toEqual([{}, { n: -0.0005 }]);
    const root = partials([...'-0.5e-3']);
    expect(root.values).toEqual([-0.0005]);
    expect(Object.is(partials(['-0']).values[0], -0)).toBe(true);
  });

  it('no half keywords: `tru` is not `true`', () => {
    const parser = new PartialJsonParser();
    parser.push('[tru');
    expect(parser.value).toEqual([]);
    parser.push('e, nul');
    expect(parser.value).toEqual([true]);
    parser.push('l, fals');
    expect(parser.value).toEqual([true, null]);
  });

  it('a member appears once its key is complete and its value has begun', () => {
    const parser = new PartialJsonParser();
    parser.push('{"na');
    expect(parser.value).toEqual({});
    parser.push('me":');
    expect(parser.value).toEqual({});
    parser.push(' "A');
    expect(parser.value).toEqual({ name: 'A' });
    parser.push('\\');
    expect(parser.value).toEqual({ name: 'A' });
    parser.push('n", "tags": [');
    expect(parser.value).toEqual({ name: 'A\n', tags: [] });
  });

  it('shares every unchanged subtree with the previous value', () => {
    const parser = new PartialJsonParser();
    parser.push('{"a": {"x": [1, 2]}, "b": {"y": "h');
    const first = parser.value as { a: unknown; b: { y: string } };
    parser.push('i');
    const second = parser.value as { a: unknown; b: { y: string } };
    expect(second).not.toBe(first);
    expect(second.a).toBe(first.a);
    expect(second.b).not.toBe(first.b);
    expect(first.b.y).toBe('h');
    expect(second.b.y).toBe('hi');
    expect(parser.value).toBe(second);
  });

  it('a closed container keeps its identity in later partials, and closing changes nothing', () => {
    const parser = new PartialJsonParser();
    parser.push('{"a": {"x": [1, "s');
    const first = parser.value as { a: { x: unknown[] } };
    expect(parser.push('"]}')).toBe(false);
    expect(parser.value).toBe(first);
    parser.push(', "b": true');
    const second = parser.value as { a: unknown };
    expect(second).toEqual({ a: { x: [1, 's'] }, b: true });
    expect(second.a).toBe(first.a);
  });

  it('a partial taken early reads as it was, whenever it is read', () => {
    const parser = new PartialJsonParser();
    parser.push('{"list": [{"n": "a');
    const early = parser.partial();
    parser.push('bc"}, {"n": "d"}], "z": tr');
    expect(early()).toEqual({ list: [{ n: 'a' }] });
    expect(parser.value).toEqual({ list: [{ n: 'abc' }, { n: 'd' }] });
  });

  it('with large containers in tiny deltas (where changes merge): partials are monotone and the last equals JSON.parse', () => {
    fc.assert(
      fc.property(
        fc.array(fc.jsonValue({ maxDepth: 1 }), { minLength: 60, maxLength: 160 }),
        fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 20 }),
        (items, sizes) => {
          const text = JSON.stringify({ items });
          const pieces: string[] = [];
          for (let at = 0, i = 0; at < text.length; i++) {
            const size = sizes[i % sizes.length] as number;
            pieces.push(text.slice(at, at + size));
            at += size;
          }
          const expected: unknown = JSON.parse(text);
          const { values } = partials(pieces);
          expectMonotone(values, expected);
          expect(values.at(-1)).toEqual(expected);
        },
      ),
      { numRuns: 30 },
    );
  }, 30_000);

  describe('the schedule of partials shown', () => {
    /** Each shown partial's open list, as `{ items: [...] }`, pushed in `size`-character deltas. */
    function shownLists(text: string, size: number): { lists: unknown[][]; deltas: number } {
      const parser = new PartialJsonParser();
      const lists: unknown[][] = [];
      const show = (shown: boolean) => {
        const items = shown ? (parser.value as { items?: unknown[] } | undefined)?.items : undefined;
        if (items) lists.push(items);
      };
      let deltas = 0;
      for (let at = 0; at < text.length; at += size, deltas++) show(parser.push(text.slice(at, at + size)));
      show(parser.end());
      return { lists, deltas };
    }

    it('bounds what building every shown partial copies by the text read: a growing list', () => {
      const items = Array.from({ length: 20_000 }, (_, i) => i);
      const text = JSON.stringify({ items });
      const { lists, deltas } = shownLists(text, 1);
      const copied = lists.reduce((sum, list) => sum + list.length, 0);
      // 32 units a partial and 8 a character (see partial-json.ts); showing every change would copy ~2e8 entries.
      expect(copied).toBeLessThanOrEqual(32 * deltas + 8 * text.length);
      expect(lists.at(-1)).toEqual(items);
      // While the list is small, every change is shown: each length from 0 to 20 in turn.
      expect(lists.slice(0, 21).map((list) => list.length)).toEqual(Array.from({ length: 21 }, (_, i) => i));
    });

    it('bounds the characters of a long string in progress over every shown partial', () => {
      const body = 'lorem ipsum dolor sit amet, '.repeat(8_000);
      const text = JSON.stringify({ body });
      const parser = new PartialJsonParser();
      const lengths: number[] = [];
      let deltas = 0;
      for (let at = 0; at < text.length; at += 10, deltas++) {
        if (parser.push(text.slice(at, at + 10))) lengths.push((parser.value as { body?: string }).body?.length ?? 0);
      }
      // A string costs a unit per 32 characters, a unit per character past 64K (see partial-json.ts): every shown
      // partial's string together costs at most 32 a partial + 8 a character.
      const cost = lengths.reduce((sum, length) => sum + (length <= 65_536 ? length / 32 : length), 0);
      expect(cost).toBeLessThanOrEqual(32 * deltas + 8 * text.length);
      expect(lengths.at(-1)).toBe(body.length);
      // Shown all along (about every 1/256 of the string so far, every 1/8 past 64K), not only at the end.
      expect(lengths.filter((length) => length <= 65_536).length).toBeGreaterThan(512);
      expect(lengths.filter((length) => length > 65_536 && length < body.length).length).toBeGreaterThan(4);
    });

    it('end() shows the change held back, even when the text is cut', () => {
      const parser = new PartialJsonParser();
      parser.push(`[${Array.from({ length: 500 }, (_, i) => i).join(',')}`);
      const held = parser.push(',500,');
      expect(held).toBe(false);
      expect(parser.end()).toBe(true);
      expect(parser.error).toContain('Unexpected end');
      expect((parser.value as unknown[]).length).toBe(501);
      expect(parser.end()).toBe(false);
    });
  });

  it('deep nesting', () => {
    const depth = 5000;
    const text = '['.repeat(depth) + ']'.repeat(depth);
    const { values } = partials(cut(text, [1, 2, 777, 5001, 9000]));
    let level: unknown = values.at(-1);
    let levels = 0;
    while (Array.isArray(level) && level.length === 1) {
      level = level[0];
      levels++;
    }
    expect([levels, level]).toEqual([depth - 1, []]);
  });

  it('keeps a __proto__ key as an own member, as JSON.parse does', () => {
    const { values } = partials(['{"__proto__": {"polluted": true}}']);
    const value = values.at(-1) as object;
    expect(Object.hasOwn(value, '__proto__')).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(value).toEqual(JSON.parse('{"__proto__": {"polluted": true}}'));
  });

  it.each([
    ['{"a" 1}', 'Expected ":"'],
    ['[1,]', 'Unexpected "]"'],
    ['{"a": tx}', 'Unexpected "tx"'],
    ['"\\x"', 'Bad escape'],
    ['01', 'Bad number'],
    ['[1] 2', 'after the JSON value'],
    ['"a\nb"', 'Control character'],
    ['{"a": 1', 'Unexpected end'],
  ])('rejects %j', (text, message) => {
    const parser = new PartialJsonParser();
    parser.push(text);
    parser.end();
    expect(parser.error).toContain(message);
    expect(() => JSON.parse(text)).toThrow();
  });
});

import { describe, expect, it } from 'vitest';
import { copyExtra, mergeExtra, normalizeUsage } from '../src/merge.js';

const KNOWN = new Set(['content']);

describe('mergeExtra / copyExtra', () => {
  it('leaves known fields and null values out, and creates nothing when nothing else came', () => {
    expect(mergeExtra(undefined, { content: 'x', audio: null, other: undefined }, KNOWN)).toBeUndefined();
  });

  it('concatenates arrays, merges objects key by key, replaces other values', () => {
    let extra = mergeExtra(undefined, { details: [1], meta: { a: { x: 1 } }, tag: 'first' }, KNOWN);
    extra = mergeExtra(extra, { details: [2, 3], meta: { a: { y: 2 }, b: true }, tag: 'second' }, KNOWN);
    expect(extra).toEqual({ details: [1, 2, 3], meta: { a: { x: 1, y: 2 }, b: true }, tag: 'second' });
  });

  it('never touches the source objects, and a copy never changes with later merges', () => {
    const first = { details: [{ n: 1 }], meta: { a: 1 } };
    const extra = mergeExtra(undefined, first, KNOWN);
    const snapshot = copyExtra(extra);
    mergeExtra(extra, { details: [{ n: 2 }], meta: { b: 2 } }, KNOWN);
    expect(first).toEqual({ details: [{ n: 1 }], meta: { a: 1 } });
    expect(snapshot).toEqual({ details: [{ n: 1 }], meta: { a: 1 } });
    expect(copyExtra(undefined)).toEqual({});
  });
});

describe('normalizeUsage', () => {
  it('reads OpenAI and input/output counters and derives the total', () => {
    expect(normalizeUsage({ prompt_tokens: 3, completion_tokens: 4 })).toMatchObject({ total_tokens: 7 });
    expect(normalizeUsage({ input_tokens: 2, output_tokens: 5 })).toMatchObject({
      prompt_tokens: 2,
      completion_tokens: 5,
      total_tokens: 7,
    });
  });
});

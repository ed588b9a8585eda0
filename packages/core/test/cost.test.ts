import { addCost, costOf, DEFAULT_PRICES, priceOf } from '@ai4ts/core';
import { describe, expect, it } from 'vitest';

describe('cost', () => {
  it('prices input, cached input, output and reasoning tokens per million', () => {
    const usage = {
      prompt_tokens: 1_000_000,
      completion_tokens: 500_000,
      total_tokens: 1_500_000,
      prompt_tokens_details: { cached_tokens: 400_000 },
      completion_tokens_details: { reasoning_tokens: 100_000 },
    };
    expect(costOf(usage, { input: 2, output: 8 })).toEqual({ input: 2, output: 4, total: 6 });
    expect(costOf(usage, { input: 2, output: 8, cachedInput: 0.5 })).toEqual({ input: 1.4, output: 4, total: 5.4 });
    const withReasoning = costOf(usage, { input: 2, output: 8, cachedInput: 0.5, reasoning: 10 });
    expect(withReasoning.output).toBeCloseTo(4.2, 10);
    expect(withReasoning.total).toBeCloseTo(5.6, 10);
  });

  it('finds a dated snapshot under its base name, never a prefix or an inherited key', () => {
    expect(priceOf(DEFAULT_PRICES, 'gpt-4o-2024-08-06')).toBe(DEFAULT_PRICES['gpt-4o']);
    expect(priceOf(DEFAULT_PRICES, 'claude-sonnet-4-5-20250929')).toBe(DEFAULT_PRICES['claude-sonnet-4-5']);
    expect(priceOf(DEFAULT_PRICES, 'gpt-4o-mini')).toBe(DEFAULT_PRICES['gpt-4o-mini']);
    expect(priceOf(DEFAULT_PRICES, 'gpt-4o-audio-preview')).toBeUndefined();
    expect(priceOf(DEFAULT_PRICES, 'constructor')).toBeUndefined();
    expect(priceOf(DEFAULT_PRICES, undefined)).toBeUndefined();
  });

  it('adds costs; undefined only when both are', () => {
    const a = { input: 1, output: 2, total: 3 };
    expect(addCost(undefined, undefined)).toBeUndefined();
    expect(addCost(a, undefined)).toBe(a);
    expect(addCost(a, { input: 0.5, output: 0.5, total: 1 })).toEqual({ input: 1.5, output: 2.5, total: 4 });
  });
});

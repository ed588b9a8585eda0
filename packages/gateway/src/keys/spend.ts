/**
 * What a call of a virtual key costs and is expected to cost: prices from core's table (`priceOf`, `costOf`), budget
 * periods, and the cheap estimate a request reserves at admission. Money is counted in whole nano-dollars
 * (1e-9 USD), so that Redis adds integers and no sum drifts.
 */
import { costOf, type Prices, priceOf, type Usage } from '@ai4ts/core';
import type { BudgetPeriod } from './key.js';

/** Nano-dollars in a dollar. */
export const NANO = 1_000_000_000;

/** Dollars to a nano-dollar (the budgets' unit), never in exponent form: `0.0000525`, `0.001`, `0`. */
export function usd(dollars: number): string {
  return dollars.toFixed(9).replace(/\.?0+$/, '');
}

/** Output tokens reserved for a request that asks for no maximum. */
export const DEFAULT_OUTPUT_ESTIMATE = 1024;

/**
 * The tokens a request reserves at admission: its body's bytes / 4 (a rough count of input tokens, not a tokenizer)
 * plus the output it asks for at most (`max_tokens` and its kin), or {@link DEFAULT_OUTPUT_ESTIMATE}.
 */
export function estimateTokens(bodyBytes: number, maxTokens: number | undefined): { input: number; output: number } {
  return { input: Math.ceil(bodyBytes / 4), output: maxTokens ?? DEFAULT_OUTPUT_ESTIMATE };
}

/** The cost of `usage` for `model` in nano-dollars; 0 for a model the table has no price for. */
export function costNano(prices: Prices, model: string, usage: Usage): number {
  const price = priceOf(prices, model);
  return price ? Math.ceil(costOf(usage, price).total * NANO) : 0;
}

/** The cost of `usage` for `model` in USD; undefined for a model the table has no price for. */
export function costUsd(prices: Prices, model: string, usage: Usage): number | undefined {
  const price = priceOf(prices, model);
  return price && costOf(usage, price).total;
}

/** Usage as core's shape, from token counts. */
export function usageOf(input: number, output: number): Usage {
  return { prompt_tokens: input, completion_tokens: output, total_tokens: input + output };
}

/** The budget period holding `now`: its start and the next one's, in ms since the epoch (UTC). */
export function periodAt(period: BudgetPeriod, now: number): { start: number; end: number } {
  const date = new Date(now);
  const year = date.getUTCFullYear();
  const month = date.getUTCMonth();
  const day = date.getUTCDate();
  switch (period) {
    case 'day':
      return { start: Date.UTC(year, month, day), end: Date.UTC(year, month, day + 1) };
    case 'week': {
      // Monday starts the week: getUTCDay() is 0 on Sunday.
      const monday = day - ((date.getUTCDay() + 6) % 7);
      return { start: Date.UTC(year, month, monday), end: Date.UTC(year, month, monday + 7) };
    }
    case 'month':
      return { start: Date.UTC(year, month, 1), end: Date.UTC(year, month + 1, 1) };
  }
}

/** The rate window (one minute, fixed, aligned on the minute) holding `now`. */
export function minuteAt(now: number): { start: number; end: number } {
  const start = now - (now % 60_000);
  return { start, end: start + 60_000 };
}

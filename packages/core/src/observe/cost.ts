/**
 * What a model call cost: its usage priced with a table of per-million-token prices. The SDK never guesses a
 * price: a model missing from the table has no cost.
 */
import type { Usage } from '../events.js';

/** Prices of one model in currency units per million tokens. */
export interface ModelPrice {
  /** Input (prompt) tokens. */
  input: number;
  /** Output (completion) tokens, reasoning included unless `reasoning` is set. */
  output: number;
  /** Input tokens read from the provider's prompt cache (default: `input`). */
  cachedInput?: number;
  /** Reasoning tokens, when the provider prices them apart from output (default: `output`). */
  reasoning?: number;
}

/** A price table: model name to price. A dated snapshot model (`gpt-4o-2024-08-06`) falls back to its base name. */
export type Prices = Readonly<Record<string, ModelPrice>>;

/** The cost of one call or a sum of calls, in the price table's currency. */
export interface Cost {
  input: number;
  output: number;
  total: number;
}

/**
 * List prices in US dollars per million tokens of the presets' common models, as the providers listed them in October 2025 (OpenAI,
 * Anthropic, DeepSeek). Prices change: pass your own table (`prices`) for numbers you bill on.
 */
export const DEFAULT_PRICES: Prices = {
  'gpt-4o': { input: 2.5, output: 10, cachedInput: 1.25 },
  'gpt-4o-mini': { input: 0.15, output: 0.6, cachedInput: 0.075 },
  'gpt-4.1': { input: 2, output: 8, cachedInput: 0.5 },
  'gpt-4.1-mini': { input: 0.4, output: 1.6, cachedInput: 0.1 },
  'gpt-4.1-nano': { input: 0.1, output: 0.4, cachedInput: 0.025 },
  o3: { input: 2, output: 8, cachedInput: 0.5 },
  'o4-mini': { input: 1.1, output: 4.4, cachedInput: 0.275 },
  'claude-sonnet-4-5': { input: 3, output: 15, cachedInput: 0.3 },
  'claude-haiku-4-5': { input: 1, output: 5, cachedInput: 0.1 },
  'claude-opus-4-1': { input: 15, output: 75, cachedInput: 1.5 },
  'deepseek-chat': { input: 0.28, output: 0.42, cachedInput: 0.028 },
  'deepseek-reasoner': { input: 0.28, output: 0.42, cachedInput: 0.028 },
};

/** A model's price: its own entry, else its name without a trailing date (`-2024-08-06`, `-20250929`). */
export function priceOf(prices: Prices, model: string | undefined): ModelPrice | undefined {
  if (model === undefined) return undefined;
  if (Object.hasOwn(prices, model)) return prices[model];
  const base = model.replace(/-(\d{4}-\d{2}-\d{2}|\d{8})$/, '');
  return base !== model && Object.hasOwn(prices, base) ? prices[base] : undefined;
}

/** The cost of `usage` at `price`; cached input and reasoning tokens at their own prices when the table has them. */
export function costOf(usage: Usage, price: ModelPrice): Cost {
  const cached = usage.prompt_tokens_details?.cached_tokens ?? 0;
  const reasoning = price.reasoning === undefined ? 0 : (usage.completion_tokens_details?.reasoning_tokens ?? 0);
  const input =
    ((usage.prompt_tokens - cached) * price.input + cached * (price.cachedInput ?? price.input)) / 1_000_000;
  const output =
    ((usage.completion_tokens - reasoning) * price.output + reasoning * (price.reasoning ?? price.output)) / 1_000_000;
  return { input, output, total: input + output };
}

/** The sum of two costs; undefined when both are. */
export function addCost(a: Cost | undefined, b: Cost | undefined): Cost | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return { input: a.input + b.input, output: a.output + b.output, total: a.total + b.total };
}

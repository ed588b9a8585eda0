/**
 * The counters behind a virtual key's limits: requests and tokens per minute (a fixed window aligned on the minute),
 * spend per budget period, and streams open. Admission checks every limit and counts the request in one step, so
 * that two requests never both take the last unit: in memory for one instance ({@link MemoryKeyCounters}), in one
 * Lua script for several (`RedisKeyCounters` in `@ai4ts/gateway/redis`).
 *
 * A request reserves its estimate (tokens, and their price) at admission; {@link KeyCounters.settle} replaces the
 * estimate with what the call used once it ended, however it ended.
 */
import type { VirtualKey } from './key.js';
import { minuteAt, NANO, periodAt } from './spend.js';

/** What a request asks of its key at admission. */
export interface Ask {
  /** Estimated input plus output tokens. */
  tokens: number;
  /** Estimated cost in nano-dollars. */
  nano: number;
  /** Whether it takes a stream slot. */
  stream: boolean;
}

/** The key's limits as the counters read them; a missing one is no limit. */
export interface KeyLimits {
  rpm?: number | undefined;
  tpm?: number | undefined;
  /** Budget in nano-dollars for the period starting at `periodStart`. */
  budgetNano?: number | undefined;
  maxStreams?: number | undefined;
}

/** What was counted in the key's current windows: after admission, or when refused, as it stood. */
export interface Counts {
  requests: number;
  tokens: number;
  spentNano: number;
}

/** Which limit refused a request. */
export type Refusal = 'requests' | 'tokens' | 'budget' | 'streams';

/** A request admitted: what it reserved, where, to settle once it ends. */
export interface Ticket {
  keyId: string;
  minute: number;
  /** The budget period's start and end (ms); the whole time when the key has no budget. */
  period: { start: number; end: number };
  tokens: number;
  nano: number;
  stream: boolean;
}

export type Admission = { admitted: true; ticket: Ticket; counts: Counts } | { admitted: false; refusal: Refusal; counts: Counts };

/** What a call used, once it ended. */
export interface Used {
  tokens: number;
  nano: number;
}

/** The counters of every key; see the file comment. */
export interface KeyCounters {
  admit(key: VirtualKey, ask: Ask, now: number): Promise<Admission>;
  /** Replaces the ticket's estimate with what was used, and gives back its stream slot. */
  settle(ticket: Ticket, used: Used): Promise<void>;
  /** Nano-dollars the key spent in its current budget period (reservations in flight included). */
  spent(key: VirtualKey, now: number): Promise<number>;
  /** Whether the counters can be reached (`/readyz`). */
  ready(): Promise<boolean>;
  close(): Promise<void>;
}

/** The key's limits, its money in nano-dollars. */
export function limitsOf(key: VirtualKey): KeyLimits {
  return {
    rpm: key.rpm,
    tpm: key.tpm,
    budgetNano: key.budget && Math.round(key.budget.usd * NANO),
    maxStreams: key.maxStreams,
  };
}

/** The budget period of a key at `now`; all time when it has no budget. */
export function periodOf(key: VirtualKey, now: number): { start: number; end: number } {
  return key.budget ? periodAt(key.budget.period, now) : { start: 0, end: Number.POSITIVE_INFINITY };
}

/**
 * Which limit the request breaks, given what is counted: a request over the rpm; tokens when the reservation would
 * pass the tpm; budget when the reserved cost would pass it; a stream past `maxStreams`. The one rule both the
 * memory counters and the Lua script follow (the script spells it again in Lua).
 */
export function refusalOf(limits: KeyLimits, counts: Counts, streams: number, ask: Ask): Refusal | undefined {
  if (limits.rpm !== undefined && counts.requests + 1 > limits.rpm) return 'requests';
  if (limits.tpm !== undefined && counts.tokens + ask.tokens > limits.tpm) return 'tokens';
  if (limits.budgetNano !== undefined && counts.spentNano + ask.nano > limits.budgetNano) return 'budget';
  if (ask.stream && limits.maxStreams !== undefined && streams + 1 > limits.maxStreams) return 'streams';
  return undefined;
}

/** The counters in this process's memory: one instance. Windows past are dropped as new ones open. */
export class MemoryKeyCounters implements KeyCounters {
  /** `<key id>:<minute>` to requests and tokens. */
  readonly #minutes = new Map<string, { requests: number; tokens: number }>();
  /** `<key id>:<period start>` to nano-dollars. */
  readonly #spend = new Map<string, number>();
  readonly #streams = new Map<string, number>();
  #minute = 0;

  #prune(minute: number): void {
    if (minute === this.#minute) return;
    this.#minute = minute;
    for (const id of this.#minutes.keys()) if (!id.endsWith(`:${minute}`)) this.#minutes.delete(id);
  }

  async admit(key: VirtualKey, ask: Ask, now: number): Promise<Admission> {
    const minute = minuteAt(now).start;
    this.#prune(minute);
    const period = periodOf(key, now);
    const window = this.#minutes.get(`${key.id}:${minute}`) ?? { requests: 0, tokens: 0 };
    const spentNano = this.#spend.get(`${key.id}:${period.start}`) ?? 0;
    const streams = this.#streams.get(key.id) ?? 0;
    const counts = { requests: window.requests, tokens: window.tokens, spentNano };
    const refusal = refusalOf(limitsOf(key), counts, streams, ask);
    if (refusal) return { admitted: false, refusal, counts };
    const after = { requests: window.requests + 1, tokens: window.tokens + ask.tokens, spentNano: spentNano + ask.nano };
    this.#minutes.set(`${key.id}:${minute}`, { requests: after.requests, tokens: after.tokens });
    this.#spend.set(`${key.id}:${period.start}`, after.spentNano);
    if (ask.stream) this.#streams.set(key.id, streams + 1);
    return { admitted: true, ticket: { keyId: key.id, minute, period, ...ask }, counts: after };
  }

  async settle(ticket: Ticket, used: Used): Promise<void> {
    const window = this.#minutes.get(`${ticket.keyId}:${ticket.minute}`);
    // A window already past is not reopened: its minute is over.
    if (window) window.tokens = Math.max(0, window.tokens + used.tokens - ticket.tokens);
    const spendKey = `${ticket.keyId}:${ticket.period.start}`;
    const spent = this.#spend.get(spendKey);
    if (spent !== undefined) this.#spend.set(spendKey, Math.max(0, spent + used.nano - ticket.nano));
    if (ticket.stream) this.#streams.set(ticket.keyId, Math.max(0, (this.#streams.get(ticket.keyId) ?? 1) - 1));
  }

  async spent(key: VirtualKey, now: number): Promise<number> {
    return this.#spend.get(`${key.id}:${periodOf(key, now).start}`) ?? 0;
  }

  async ready(): Promise<boolean> {
    return true;
  }

  async close(): Promise<void> {}
}

/** What a key spent in its current budget period, and, with a budget, the period and when it resets. */
export async function spendOf(counters: KeyCounters, key: VirtualKey, now = Date.now()): Promise<Record<string, unknown>> {
  const spent = (await counters.spent(key, now)) / NANO;
  const period = periodOf(key, now);
  return {
    id: key.id,
    name: key.name,
    spentUsd: spent,
    ...(key.budget && {
      budgetUsd: key.budget.usd,
      period: key.budget.period,
      periodStart: new Date(period.start).toISOString(),
      resetsAt: new Date(period.end).toISOString(),
    }),
  };
}

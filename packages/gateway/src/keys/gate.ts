/**
 * Virtual keys at the gateway's door: which key a request presents (401 for an unknown, revoked or expired one),
 * whether it may call the model (403), whether its limits admit it (429 with OpenAI's rate-limit headers), and, once
 * the call ended however it ended, what it used: its usage priced with the table, or, when the upstream never said
 * (a stream cut short), the input estimate and the output seen, by characters / 4.
 */
import type { Prices, Usage } from '@ai4ts/core';
import type { BridgeEvent } from '@ai4ts/bridge';
import type { GatewayRequest } from '../codecs/neutral.js';
import { HttpError, invalid } from '../http/errors.js';
import { allowsModel, hashKey, isVirtualKey, type VirtualKey } from './key.js';
import { type Admission, type Ask, type Counts, type KeyCounters, limitsOf, periodOf, type Ticket } from './limits.js';
import { costNano, estimateTokens, minuteAt, NANO, usageOf, usd } from './spend.js';
import type { KeyStore } from './store.js';

/** What the gateway needs of virtual keys: where they are, their counters, and the prices of their calls. */
export interface KeysOptions {
  store: KeyStore;
  /** In memory by default: right for one instance only. Give `RedisKeyCounters` for several. */
  counters?: KeyCounters;
}

function unauthorized(message: string): HttpError {
  return new HttpError(401, invalid(message, null, 'invalid_api_key'), { 'www-authenticate': 'Bearer' });
}

/** The virtual keys of one gateway; see the file comment. */
export class KeyGate {
  readonly store: KeyStore;
  readonly counters: KeyCounters;
  readonly #prices: Prices;

  constructor(store: KeyStore, counters: KeyCounters, prices: Prices) {
    this.store = store;
    this.counters = counters;
    this.#prices = prices;
  }

  /** Whether both the store and the counters answer: `/readyz` says `key_store_unavailable` when not. */
  async ready(): Promise<boolean> {
    const answers = await Promise.all([this.store.ready(), this.counters.ready()].map((ready) => ready.catch(() => false)));
    return answers.every(Boolean);
  }

  /**
   * The key a token is: undefined when the token is no virtual key (the static token is checked then), a 401 when it
   * is one the gateway does not know, revoked or expired. The message names neither the token nor the key.
   */
  async identify(token: string, now = Date.now()): Promise<VirtualKey | undefined> {
    if (!isVirtualKey(token)) return undefined;
    const key = await this.store.find(await hashKey(token));
    if (!key) throw unauthorized('Unknown virtual key');
    if (key.revokedAt !== undefined) throw unauthorized(`The virtual key ${key.name} was revoked`);
    if (key.expiresAt !== undefined && Date.parse(key.expiresAt) <= now)
      throw unauthorized(`The virtual key ${key.name} expired at ${key.expiresAt}`);
    return key;
  }

  /**
   * Admits one call of `key`: a 403 `model_not_allowed` for a model outside its patterns, a 429 over a limit or its
   * budget; else the call, which reserved its estimate and must be ended once ({@link KeyCall.end}).
   */
  async admit(
    key: VirtualKey,
    request: Pick<GatewayRequest, 'model' | 'stream' | 'maxTokens'>,
    bodyLength: number,
    now = Date.now(),
  ): Promise<KeyCall> {
    if (!allowsModel(key, request.model))
      throw new HttpError(
        403,
        invalid(`The virtual key ${key.name} may not call the model ${request.model}`, 'model', 'model_not_allowed'),
      );
    const estimate = estimateTokens(bodyLength, request.maxTokens);
    const ask: Ask = {
      tokens: estimate.input + estimate.output,
      nano: costNano(this.#prices, request.model, usageOf(estimate.input, estimate.output)),
      stream: request.stream,
    };
    const admission = await this.counters.admit(key, ask, now);
    const headers = rateHeaders(key, admission.counts, now);
    if (!admission.admitted) throw refused(key, admission, headers, now);
    return new KeyCall(key, admission.ticket, estimate.input, headers, (usage) => costNano(this.#prices, request.model, usage), this.counters);
  }
}

/** OpenAI's rate-limit headers for what is counted; only for the limits the key has. */
function rateHeaders(key: VirtualKey, counts: Counts, now: number): Record<string, string> {
  const reset = `${Math.max(1, Math.ceil((minuteAt(now).end - now) / 1000))}s`;
  const headers: Record<string, string> = {};
  if (key.rpm !== undefined) {
    headers['x-ratelimit-limit-requests'] = String(key.rpm);
    headers['x-ratelimit-remaining-requests'] = String(Math.max(0, key.rpm - counts.requests));
    headers['x-ratelimit-reset-requests'] = reset;
  }
  if (key.tpm !== undefined) {
    headers['x-ratelimit-limit-tokens'] = String(key.tpm);
    headers['x-ratelimit-remaining-tokens'] = String(Math.max(0, key.tpm - counts.tokens));
    headers['x-ratelimit-reset-tokens'] = reset;
  }
  return headers;
}

/** The 429 of a refused admission, with when to come back. */
function refused(key: VirtualKey, admission: Admission & { admitted: false }, headers: Record<string, string>, now: number): HttpError {
  const minuteLeft = Math.max(1, Math.ceil((minuteAt(now).end - now) / 1000));
  const limits = limitsOf(key);
  switch (admission.refusal) {
    case 'requests':
      return rateLimited(`The virtual key ${key.name} is over its limit of ${key.rpm} requests per minute`, headers, minuteLeft);
    case 'tokens':
      return rateLimited(
        `The virtual key ${key.name} is over its limit of ${key.tpm} tokens per minute (this request reserves its input estimate and max output tokens)`,
        headers,
        minuteLeft,
      );
    case 'streams':
      return rateLimited(`The virtual key ${key.name} has its maximum of ${key.maxStreams} streams open`, headers, 1);
    case 'budget': {
      const resetAt = periodOf(key, now).end;
      const spent = (admission.counts.spentNano / NANO).toFixed(4);
      // Exact, not rounded to cents: a budget of $0.001 is not shown as $0.00.
      const budget = usd((limits.budgetNano ?? 0) / NANO);
      return new HttpError(
        429,
        {
          message: `The virtual key ${key.name} has spent $${spent} of its budget of $${budget} per ${key.budget?.period}; the budget resets at ${new Date(resetAt).toISOString()}`,
          type: 'insufficient_quota',
          param: null,
          code: 'budget_exceeded',
        },
        { ...headers, 'retry-after': String(Math.max(1, Math.ceil((resetAt - now) / 1000))) },
      );
    }
  }
}

function rateLimited(message: string, headers: Record<string, string>, retryAfter: number): HttpError {
  return new HttpError(
    429,
    { message, type: 'rate_limit_error', param: null, code: 'rate_limit_exceeded' },
    { ...headers, 'retry-after': String(retryAfter) },
  );
}

/**
 * One admitted call: it watches the upstream's events for usage and output, and settles the counters once, when
 * {@link end} is first called (the answer is complete, failed, or its client left).
 */
export class KeyCall {
  readonly key: VirtualKey;
  /** OpenAI's rate-limit headers as they stood at admission, for the reply. */
  readonly headers: Record<string, string>;
  readonly #ticket: Ticket;
  readonly #input: number;
  readonly #price: (usage: Usage) => number;
  readonly #counters: KeyCounters;
  #usage: Usage | undefined;
  #outputChars = 0;
  #ended = false;

  constructor(
    key: VirtualKey,
    ticket: Ticket,
    input: number,
    headers: Record<string, string>,
    price: (usage: Usage) => number,
    counters: KeyCounters,
  ) {
    this.key = key;
    this.#ticket = ticket;
    this.#input = input;
    this.headers = headers;
    this.#price = price;
    this.#counters = counters;
  }

  /** Reads one upstream event: its usage, or the size of its output. */
  /**
   * Settles a call whose answer passed through unread (a route with `state: 'upstream'`): its input estimate, the
   * one measure the gateway has of it. Returns the cost in USD, as {@link end} does.
   */
  endUnread(): number {
    this.#usage ??= usageOf(this.#input, 0);
    return this.end();
  }

  /** The call's usage as its answer reports it: an event's, or a JSON answer's (embeddings, rerank). */
  used(usage: Usage): void {
    this.#usage = usage;
  }

  see(event: BridgeEvent): void {
    switch (event.type) {
      case 'usage':
        this.used(event.usage);
        break;
      case 'content':
      case 'reasoning':
      case 'tool_call.delta':
        this.#outputChars += event.delta.length;
        break;
      default:
        break;
    }
  }

  /**
   * Settles the call once: its usage, or, without one, the input estimate and the output seen (nothing when there was
   * no output). Returns the cost in
   * USD it was charged. A counter that fails is not the client's failure: the answer stands.
   */
  end(): number {
    // A call that failed before any output cost nothing; one cut short after output cost its input and that output.
    const usage =
      this.#usage ?? (this.#outputChars === 0 ? usageOf(0, 0) : usageOf(this.#input, Math.ceil(this.#outputChars / 4)));
    const nano = this.#price(usage);
    if (!this.#ended) {
      this.#ended = true;
      void this.#counters.settle(this.#ticket, { tokens: usage.prompt_tokens + usage.completion_tokens, nano }).catch(() => undefined);
    }
    return nano / NANO;
  }
}

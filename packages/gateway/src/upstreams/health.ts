/**
 * One upstream's health as its route sees it: the failures in the current window, the cooldown they started, the
 * answers in flight, and the EWMA of its time to first event. A circuit breaker in its plainest form: closed
 * (`healthy`), open (`cooling`), and `half-open` once the cooldown is over, until the next answer says which.
 */

/** When an upstream cools down, and for how long; milliseconds, as the upstream timeouts are. */
export interface CooldownOptions {
  /** Failures within `window` that start a cooldown. Default 3. */
  failures?: number;
  /** The window the failures are counted in. Default 60000. */
  window?: number;
  /** How long the upstream is skipped (unless every upstream of the route cools down). Default 30000. */
  duration?: number;
}

/** The defaults: three failures in a minute cool an upstream for thirty seconds. */
export const DEFAULT_COOLDOWN: Readonly<Required<CooldownOptions>> = { failures: 3, window: 60_000, duration: 30_000 };

/** `cooling`: skipped until `cooldownUntil`; `half-open`: tried again after a cooldown, one failure cools it again. */
export type UpstreamState = 'healthy' | 'cooling' | 'half-open';

/** One upstream of one route, as `Gateway.health()` and `/readyz` report it. */
export interface UpstreamHealth {
  /** The route's model pattern. */
  route: string;
  /** The upstream's name (`x-ai4ts-upstream`). */
  upstream: string;
  state: UpstreamState;
  /** Failures in the current window (a connection error, a 5xx, a 429, a timeout before the first event). */
  failures: number;
  /** When a cooldown ends, in epoch milliseconds; only while `cooling`. */
  cooldownUntil?: number;
  /** Answers it is giving now: from the request sent until the answer's end. */
  inFlight: number;
  /** The exponentially weighted mean of its time to first event, in milliseconds; undefined before its first answer. */
  latencyMs?: number;
  /** The cooldowns it started since its route was built (a reload of the routes builds them anew). */
  cooldowns: number;
}

/** How much a new time to first event weighs in the mean. */
const EWMA_WEIGHT = 0.3;

/** The health of one upstream; `now` is epoch milliseconds, given by the caller so that one request reads one time. */
export class Health {
  readonly #options: Readonly<Required<CooldownOptions>>;
  /** When each failure of the current window happened. */
  #failures: number[] = [];
  /** The end of the current or last cooldown; 0 when the upstream answered since (or never cooled). */
  #cooldownUntil = 0;
  #inFlight = 0;
  #latency: number | undefined;
  #cooldowns = 0;

  constructor(options: Readonly<Required<CooldownOptions>>) {
    this.#options = options;
  }

  state(now: number): UpstreamState {
    if (now < this.#cooldownUntil) return 'cooling';
    return this.#cooldownUntil > 0 ? 'half-open' : 'healthy';
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  /** The EWMA of its time to first event; undefined until it answered once. */
  get latency(): number | undefined {
    return this.#latency;
  }

  /** One more answer in flight; the function ends it (once, however often it is called). */
  begin(): () => void {
    this.#inFlight++;
    let ended = false;
    return () => {
      if (!ended) this.#inFlight--;
      ended = true;
    };
  }

  /** A first event arrived `ms` after the request was sent: the upstream is healthy again. */
  answered(ms: number): void {
    this.#failures = [];
    this.#cooldownUntil = 0;
    this.#latency = this.#latency === undefined ? ms : this.#latency + EWMA_WEIGHT * (ms - this.#latency);
  }

  /** It failed before its first event: counted, and cooled down at the threshold (at once when half-open). */
  failed(now: number): void {
    const { failures, window, duration } = this.#options;
    const state = this.state(now);
    if (state === 'cooling') return;
    this.#failures = [...this.#failures.filter((time) => now - time < window), now];
    if (state === 'half-open' || this.#failures.length >= failures) {
      this.#cooldownUntil = now + duration;
      this.#failures = [];
      this.#cooldowns++;
    }
  }

  report(route: string, upstream: string, now: number): UpstreamHealth {
    const state = this.state(now);
    return {
      route,
      upstream,
      state,
      failures: this.#failures.filter((time) => now - time < this.#options.window).length,
      ...(state === 'cooling' && { cooldownUntil: this.#cooldownUntil }),
      inFlight: this.#inFlight,
      ...(this.#latency !== undefined && { latencyMs: Math.round(this.#latency) }),
      cooldowns: this.#cooldowns,
    };
  }
}

/** The cooldown options with defaults filled in; a value that is not a positive number is refused at the start. */
export function resolveCooldown(options: CooldownOptions = {}): Readonly<Required<CooldownOptions>> {
  const out = { ...DEFAULT_COOLDOWN };
  for (const key of ['failures', 'window', 'duration'] as const) {
    const value = options[key];
    if (value === undefined) continue;
    if (!Number.isFinite(value) || value <= 0) throw new RangeError(`cooldown.${key} must be more than 0`);
    out[key] = value;
  }
  return out;
}

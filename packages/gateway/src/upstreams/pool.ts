/**
 * A route's upstreams: asked in the strategy's order until one gives its first event. A failure before any event
 * (a connection error, a retryable status, a timeout) moves to the next, once the upstream's own retries are spent;
 * a refusal of the request itself (400, 413, 422) is the client's and ends the search. After the first event no other
 * upstream is asked: the client must never get two answers mixed.
 */
import { ApiError, ConnectionError, TimeoutError } from '@ai4ts/core';
import { isRetryableStatus } from '@ai4ts/sse';
import { type CooldownOptions, Health, resolveCooldown, type UpstreamHealth } from './health.js';
import { type Order, orderOf, type Strategy } from './strategy.js';
import type { UpstreamTarget } from './targets.js';

/** One upstream of a route. */
export interface PoolMember {
  /** What `x-ai4ts-upstream`, the access log and the health report call it: never a URL with credentials. */
  readonly name: string;
  readonly target: UpstreamTarget;
  readonly weight: number;
  readonly health: Health;
}

/** The upstream that answered: its first event is in `value`; `end` is called once its answer ended. */
export interface Answered<T> {
  member: PoolMember;
  value: T;
  end: () => void;
}

export class UpstreamPool {
  /** The route's model pattern. */
  readonly route: string;
  readonly members: readonly PoolMember[];
  readonly #order: Order;

  constructor(
    route: string,
    upstreams: readonly { name?: string | undefined; target: UpstreamTarget; weight?: number | undefined }[],
    strategy: Strategy = 'priority',
    cooldown?: CooldownOptions,
  ) {
    if (upstreams.length === 0) throw new RangeError(`The route ${route} has no upstream`);
    const options = resolveCooldown(cooldown);
    this.route = route;
    this.members = upstreams.map(({ name, target, weight = 1 }) => {
      if (!Number.isFinite(weight) || weight <= 0) throw new RangeError(`The route ${route}: a weight must be more than 0`);
      return { name: name ?? target.name, target, weight, health: new Health(options) };
    });
    const names = this.members.map((member) => member.name);
    const twice = names.find((name, index) => names.indexOf(name) !== index);
    if (twice !== undefined) throw new RangeError(`The route ${route} has two upstreams named ${twice}: give each a name`);
    this.#order = orderOf(strategy);
  }

  /** The upstreams to ask, in order: those cooling down are skipped, unless every one is. */
  candidates(now: number): PoolMember[] {
    const open = this.members.filter((member) => member.health.state(now) !== 'cooling');
    return this.#order(open.length ? open : this.members);
  }

  /**
   * Asks `attempt` of each candidate in turn (`tried` counts from 1) until one resolves; its answer counts as in
   * flight until `end`. Throws the last failure when none answered, or at once a failure that is not the upstream's
   * (the client left, the request was refused).
   */
  async answer<T>(
    attempt: (member: PoolMember, tried: number) => Promise<T>,
    signal: AbortSignal,
  ): Promise<Answered<T>> {
    const candidates = this.candidates(Date.now());
    for (const [index, member] of candidates.entries()) {
      const end = member.health.begin();
      const sent = performance.now();
      try {
        const value = await attempt(member, index + 1);
        member.health.answered(performance.now() - sent);
        return { member, value, end };
      } catch (error) {
        end();
        if (signal.aborted || !fallsOver(error, member.target)) throw error;
        member.health.failed(Date.now());
        if (index === candidates.length - 1) throw error;
      }
    }
    throw new RangeError(`The route ${this.route} has no upstream`); // the constructor refuses an empty route
  }

  health(now: number): UpstreamHealth[] {
    return this.members.map((member) => member.health.report(this.route, member.name, now));
  }
}

/**
 * Whether a failure before the first event is the upstream's, so that another may be asked: it could not be reached,
 * answered a retryable status (429, 5xx, 408, 409: the one rule of @ai4ts/sse) or timed out. A daemon that timed out
 * waiting for its first event is not left: it may be running a tool, which a second daemon would run again.
 */
export function fallsOver(error: unknown, target: UpstreamTarget): boolean {
  if (error instanceof ConnectionError) return true;
  if (error instanceof TimeoutError) return target.retry !== undefined || error.phase === 'headers';
  return error instanceof ApiError && error.status !== undefined && isRetryableStatus(error.status);
}

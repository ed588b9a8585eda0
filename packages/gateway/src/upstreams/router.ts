/** The routing table: upstreams by model pattern (`*` matches any run of characters); the first route that matches wins. */
import type { CooldownOptions, UpstreamHealth } from './health.js';
import { UpstreamPool } from './pool.js';
import type { Strategy } from './strategy.js';
import { type UpstreamCalls, type UpstreamSpec, targetOf } from './targets.js';

/** A route of the table: a model pattern and its upstream, or its several upstreams ({@link PoolRouteSpec}). */
export type RouteSpec = (UpstreamSpec & { model: string }) | PoolRouteSpec;

/**
 * A route with several upstreams, of any protocols: asked in the strategy's order, the next one when one fails before
 * its first event (docs/operations.md, "Fallbacks and load balancing").
 */
export interface PoolRouteSpec {
  model: string;
  upstreams: readonly PoolUpstreamSpec[];
  /** `priority` (as listed) by default. */
  strategy?: Strategy | undefined;
  /** When an upstream that keeps failing is skipped, and for how long. */
  cooldown?: CooldownOptions | undefined;
}

/** One upstream of a {@link PoolRouteSpec}. */
export type PoolUpstreamSpec = UpstreamSpec & {
  /** Its name in `x-ai4ts-upstream`, logs and health; its kind and host (`chat@api.openai.com`) by default. */
  name?: string | undefined;
  /** Its share under the `weighted` strategy; 1 by default. */
  weight?: number | undefined;
};

/** The upstreams by model pattern; the first route that matches wins. */
export class Router {
  readonly #routes: { pattern: RegExp; pool: UpstreamPool }[];

  constructor(routes: readonly RouteSpec[], calls: UpstreamCalls) {
    this.#routes = routes.map((route) => ({ pattern: globPattern(route.model), pool: poolOf(route, calls) }));
  }

  /** The upstreams for a model, or undefined when no route matches. */
  pick(model: string): UpstreamPool | undefined {
    return this.#routes.find((route) => route.pattern.test(model))?.pool;
  }

  /** Every key of every upstream. */
  get secrets(): readonly string[] {
    return this.#routes.flatMap((route) => route.pool.members.flatMap((member) => member.target.secrets));
  }

  /** The health of every upstream of every route, read now: for `/readyz` and metrics. */
  health(): UpstreamHealth[] {
    const now = Date.now();
    return this.#routes.flatMap((route) => route.pool.health(now));
  }
}

function poolOf(route: RouteSpec, calls: UpstreamCalls): UpstreamPool {
  if (!('upstreams' in route)) return new UpstreamPool(route.model, [{ target: targetOf(route, calls) }]);
  const upstreams = route.upstreams.map((spec) => ({ name: spec.name, weight: spec.weight, target: targetOf(spec, calls) }));
  return new UpstreamPool(route.model, upstreams, route.strategy, route.cooldown);
}

/** A model pattern as a RegExp: `*` matches any run of characters, the rest literally. */
export function globPattern(glob: string): RegExp {
  const source = glob.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*');
  return new RegExp(`^${source}$`);
}

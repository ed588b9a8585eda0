/** The routing table: upstreams by model pattern (`*` matches any run of characters); the first route that matches wins. */
import { type UpstreamCalls, type UpstreamSpec, type UpstreamTarget, targetOf } from './targets.js';

/** A route of the table: a model pattern and its upstream. */
export type RouteSpec = UpstreamSpec & { model: string };

/** The upstreams by model pattern; the first route that matches wins. */
export class Router {
  readonly #routes: { pattern: RegExp; target: UpstreamTarget }[];

  constructor(routes: readonly RouteSpec[], calls: UpstreamCalls) {
    this.#routes = routes.map((route) => ({ pattern: globPattern(route.model), target: targetOf(route, calls) }));
  }

  /** The target for a model, or undefined when no route matches. */
  pick(model: string): UpstreamTarget | undefined {
    return this.#routes.find((route) => route.pattern.test(model))?.target;
  }

  /** Every key of every route. */
  get secrets(): readonly string[] {
    return this.#routes.flatMap((route) => route.target.secrets);
  }
}

/** A model pattern as a RegExp: `*` matches any run of characters, the rest literally. */
export function globPattern(glob: string): RegExp {
  const source = glob.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*');
  return new RegExp(`^${source}$`);
}

/**
 * The order a route tries its upstreams in: the first is asked, the next ones are its fallbacks. The pool gives a
 * strategy only the upstreams that are not cooling down (all of them when every one is).
 */
import { assertNever } from '@ai4ts/core/internal';

/**
 * `priority`: as listed. `weighted`: in proportion to the weights (smooth weighted round-robin, so that the counts
 * are exact over each cycle of the weights' sum). `least-busy`: the fewest answers in flight first. `latency`: the
 * lowest EWMA of time to first event first, an upstream never measured before any measured one.
 */
export type Strategy = 'priority' | 'weighted' | 'least-busy' | 'latency';

/** What a strategy reads of an upstream. */
export interface Ranked {
  readonly weight: number;
  readonly health: { readonly inFlight: number; readonly latency: number | undefined };
}

/** Orders the upstreams of one route; `weighted` keeps its round-robin state, so each route has its own. */
export type Order = <T extends Ranked>(upstreams: readonly T[]) => T[];

export function orderOf(strategy: Strategy): Order {
  switch (strategy) {
    case 'priority':
      return (upstreams) => [...upstreams];
    case 'least-busy':
      return (upstreams) => sortBy(upstreams, (upstream) => upstream.health.inFlight);
    case 'latency':
      return (upstreams) => sortBy(upstreams, (upstream) => upstream.health.latency ?? Number.NEGATIVE_INFINITY);
    case 'weighted':
      return smoothWeighted();
    default:
      return assertNever(strategy);
  }
}

/** A stable sort: equal keys keep the listed order. */
function sortBy<T>(items: readonly T[], key: (item: T) => number): T[] {
  return items
    .map((item, index) => ({ item, index, key: key(item) }))
    .sort((a, b) => a.key - b.key || a.index - b.index)
    .map(({ item }) => item);
}

/**
 * Nginx's smooth weighted round-robin: each pick adds every weight to its upstream's running score, takes the
 * highest, and takes the total off it. Weights 3 and 1 give a, a, b, a, then again. The fallbacks follow by weight.
 */
function smoothWeighted(): Order {
  const scores = new Map<Ranked, number>();
  return (upstreams) => {
    const total = upstreams.reduce((sum, upstream) => sum + upstream.weight, 0);
    let best: (typeof upstreams)[number] | undefined;
    for (const upstream of upstreams) {
      const score = (scores.get(upstream) ?? 0) + upstream.weight;
      scores.set(upstream, score);
      if (best === undefined || score > (scores.get(best) ?? 0)) best = upstream;
    }
    if (best === undefined) return [];
    scores.set(best, (scores.get(best) ?? 0) - total);
    const chosen = best;
    return [chosen, ...sortBy(upstreams, (upstream) => -upstream.weight).filter((upstream) => upstream !== chosen)];
  };
}

/**
 * Sees the route tables (`RouteScopes`) that pipelines keep privately, so a test or a bench can
 * read their size and names against their bounds from outside the client.
 */
import { RouteScopes } from '../../../src/client/scopes/route-scopes.js';

/** What the route tables seen so far hold: the largest of each figure, and whether one is off. */
export interface RoutesSeen {
  routes: number;
  names: number;
  off: boolean;
}

/** The largest figures over `seen` (one table per host pipeline that learned a route). */
export function routesSeen(seen: Iterable<RouteScopes>): RoutesSeen {
  let routes = 0;
  let names = 0;
  let off = false;
  for (const table of seen) {
    routes = Math.max(routes, table.size);
    names = Math.max(names, table.names);
    off ||= table.off;
  }
  return { routes, names, off };
}

/**
 * Runs `run` with every `RouteScopes` that learns a route while it goes collected in `seen`
 * (by wrapping `learnRoute` on the prototype, put back after).
 */
export async function watchingRoutes<T>(run: (seen: Set<RouteScopes>) => Promise<T>): Promise<T> {
  const seen = new Set<RouteScopes>();
  const learnRoute = RouteScopes.prototype.learnRoute;
  RouteScopes.prototype.learnRoute = function (this: RouteScopes, ...args) {
    seen.add(this);
    return learnRoute.apply(this, args);
  };
  try {
    return await run(seen);
  } finally {
    RouteScopes.prototype.learnRoute = learnRoute;
  }
}

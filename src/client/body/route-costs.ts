/**
 * Which calls get the look at their answer's body (`look.ts`), and what each route costs in points,
 * learned from its answers: a GraphQL call's cost is unknown before it is answered, so a call is
 * charged what its route's last answer said (see `BodyLimits.cost`); a route not answered yet is
 * charged nothing in points (it still waits while the points are spent). Routes are a `Map` (their
 * text comes from the caller's URLs), bounded per host: see docs/bounds.md.
 *
 * @module
 */
import type { Cost } from '../call/cost.js';
import type { PreparedRequest } from '../call/request.js';
import { POINTS } from './parse.js';

/** Routes whose cost a host remembers, at most; the least recently answered goes first. */
export const MAX_COST_ROUTES = 256;

/** Longest route (method, origin and path) remembered, in characters: a longer one is not. */
export const MAX_ROUTE_CHARS = 1024;

/** The route of a request: its method and URL without query or fragment. */
export function routeOf(req: PreparedRequest): string {
  const { url } = req;
  let end = url.length;
  const q = url.indexOf('?');
  if (q !== -1) end = q;
  const h = url.indexOf('#');
  if (h !== -1 && h < end) end = h;
  return `${req.method} ${url.slice(0, end)}`;
}

/** A path that names a GraphQL endpoint: `/graphql` or `/graphql.json` (Shopify's), at its end, in lower case. */
const GRAPHQL_PATH = /\/graphql(?:\.json)?\/?$/;

/** The start of a JSON object (after white space). */
const OBJECT_START = /^\s*\{/;

/**
 * Whether a call's answer gets the look: `mode` `true` (the host's `bodyLimits` option) for every
 * call, `false` for none; by default, a call to a GraphQL endpoint (its path ends in `/graphql` or
 * `/graphql.json`) or with a JSON object string body that has a `"query"` member. Other calls pay the path
 * test and nothing else.
 */
export function wantsLook(req: PreparedRequest, mode: boolean | undefined): boolean {
  if (mode !== undefined) return mode;
  // One substring search for most calls; the exact test only for URLs that name it.
  if (req.url.includes('graphql') && GRAPHQL_PATH.test(routeOf(req))) return true;
  const body = req.init?.body;
  return typeof body === 'string' && OBJECT_START.test(body) && body.includes('"query"');
}

/** The points each route of a host costs, as its answers said (see the module comment). */
export class RouteCosts {
  readonly #costs = new Map<string, number>();

  /** Routes remembered. */
  get size(): number {
    return this.#costs.size;
  }

  /** What `route` cost last, in points, or `undefined`. */
  get(route: string): number | undefined {
    return this.#costs.get(route);
  }

  /** Remembers that `route` costs `points`; forgets the least recently answered route past the bound. */
  set(route: string, points: number): void {
    if (route.length > MAX_ROUTE_CHARS) return;
    this.#costs.delete(route);
    this.#costs.set(route, points);
    if (this.#costs.size > MAX_COST_ROUTES) {
      const oldest = this.#costs.keys().next().value as string;
      this.#costs.delete(oldest);
    }
  }

  /**
   * `cost` with the points `route` is known to cost added, unless it names points already (the
   * caller's word wins). Read at each admission (a getter), so that calls already waiting (behind a
   * cold start, in line) are charged what the route's first answer taught.
   */
  charge(cost: Cost, route: string): Cost {
    const own = cost.units;
    for (const [unit] of own ?? []) if (unit === POINTS) return cost;
    const costs = this.#costs;
    return {
      requests: cost.requests,
      get units() {
        const known = costs.get(route);
        return known === undefined ? own : [...(own ?? []), [POINTS, known] as const];
      },
    };
  }
}

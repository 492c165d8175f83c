/**
 * The demo's scoped route set (`npm run demo -- --scopes github|ietf`, issue 26): one host with two
 * budgets, as GitHub keeps `core` and `search` apart. `/orders/:id` may take `rate` a second and
 * `/search` a quarter of that, each a fixed window of 1 s with its own name (GitHub's
 * `x-ratelimit-resource`, or the IETF policy name with its `pk`). The workload fires `n` orders and
 * a quarter as many searches at once; each route is read against the least time its own budget
 * allows, so a client that holds the orders while the searches are spent shows it.
 *
 * Pure: the server's configuration and the arithmetic, tested in demo.test.ts.
 */
import type { MockServerConfig } from '../../../src/server/index.js';

/** The dialects the scoped demo speaks. */
export type ScopesDialect = 'github' | 'ietf';

/** The window of both budgets, ms. */
export const SCOPES_WINDOW_MS = 1000;

/** One route of the scoped workload: its path, its budget per window and its calls. */
export interface ScopedRoute {
  /** The budget's name: `orders` or `search`. */
  name: 'orders' | 'search';
  /** The path of call `i`. */
  path(i: number): string;
  /** Requests its budget admits per {@link SCOPES_WINDOW_MS}. */
  perWindow: number;
  /** Calls the workload sends. */
  calls: number;
}

/** The two routes for `n` orders at `rate` a second: searches are a quarter of each, at least 1. */
export function scopedRoutes(n: number, rate: number): ScopedRoute[] {
  return [
    { name: 'orders', path: (i) => `/orders/${i}`, perWindow: rate, calls: n },
    {
      name: 'search',
      path: (i) => `/search?q=${i}`,
      perWindow: Math.max(1, Math.round(rate / 4)),
      calls: Math.max(1, Math.round(n / 4)),
    },
  ];
}

/** The mock server for the scoped demo: each route its own budget, named in `dialect`. */
export function scopedServerConfig(
  dialect: ScopesDialect,
  routes: ScopedRoute[],
): MockServerConfig {
  return {
    routes: routes.map((route) => ({
      method: 'GET',
      path: route.name === 'orders' ? '/orders/:id' : '/search',
      headers: dialect,
      limits: [
        {
          algorithm: 'fixed-window' as const,
          limit: route.perWindow,
          windowMs: SCOPES_WINDOW_MS,
          key: 'global' as const,
          name: route.name,
          ...(dialect === 'github' ? { resource: route.name } : { partitionKey: true }),
        },
      ],
    })),
  };
}

/**
 * The least time, ms, for `calls` requests fired at once at `startMs` (epoch) against `perWindow`
 * a window of `windowMs` aligned to the epoch: the first window admits `perWindow` at once, and
 * the last of them goes at the start of window `ceil(calls / perWindow) - 1`, less the part of
 * the first window already gone.
 */
export function leastWindowedMs(
  calls: number,
  perWindow: number,
  windowMs: number,
  startMs: number,
): number {
  const windows = Math.ceil(calls / perWindow) - 1;
  return Math.max(0, windows * windowMs - (startMs % windowMs));
}

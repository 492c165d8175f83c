/**
 * Counters of what the mock server did, per route and per client key.
 *
 * @module
 */

/** Counts for one client key on one route. */
export interface KeyStats {
  /** Requests that passed every limit. */
  admitted: number;
  /** Requests a limit rejected with 429. */
  rejected: number;
  /** Times the route's side effect ran (replays of stored responses do not count). */
  sideEffects: number;
}

/** Counts for one route. */
export interface RouteStats extends KeyStats {
  /** Admitted requests answered 503 by the `unavailable` fault. */
  unavailable: number;
  /** Connections reset by the `reset` fault. */
  resets: number;
  /** Stored responses replayed for a repeated `Idempotency-Key`. */
  replays: number;
  /** Requests refused for an `Idempotency-Key` in use (409) or reused with another body (422). */
  idempotencyConflicts: number;
  /**
   * The same counts per client key. A request's client key is made of the keys of the route's
   * limits (`ip:127.0.0.1`, `x-api-key:abc|ip:127.0.0.1`), or its IP when the route has none.
   * At most {@link MAX_KEYS_PER_ROUTE} keys are listed; later ones count under `(other)`.
   */
  keys: Record<string, KeyStats>;
}

/** A snapshot of every counter, from {@link MockServer.stats}. */
export interface MockServerStats {
  /** Requests admitted, over all routes. */
  admitted: number;
  /** Requests rejected with 429, over all routes. */
  rejected: number;
  /** Side effects run, over all routes. */
  sideEffects: number;
  /** Per route, by the route's name (`POST /payments`). */
  routes: Record<string, RouteStats>;
}

/** Which counter an event bumps. */
export type Counter = keyof KeyStats | Exclude<keyof RouteStats, 'keys' | keyof KeyStats>;

/** Client keys listed per route before the rest are counted together under `(other)`. */
export const MAX_KEYS_PER_ROUTE = 10_000;

const KEY_COUNTERS = new Set<Counter>(['admitted', 'rejected', 'sideEffects']);

function emptyRoute(): RouteStats {
  return {
    admitted: 0,
    rejected: 0,
    sideEffects: 0,
    unavailable: 0,
    resets: 0,
    replays: 0,
    idempotencyConflicts: 0,
    keys: {},
  };
}

/** The live counters behind {@link MockServerStats}. */
export class StatsRecorder {
  #routes = new Map<string, RouteStats>();
  #keyCounts = new Map<string, number>();

  /** Makes a route appear in snapshots before its first request. */
  declare(route: string): void {
    if (!this.#routes.has(route)) this.#routes.set(route, emptyRoute());
  }

  /** Adds one to `counter` of `route` (and of `key` for the per-key counters); returns the total. */
  count(route: string, key: string, counter: Counter): number {
    let stats = this.#routes.get(route);
    if (stats === undefined) {
      stats = emptyRoute();
      this.#routes.set(route, stats);
    }
    stats[counter] += 1;
    if (KEY_COUNTERS.has(counter)) {
      const keys = this.#keyCounts.get(route) ?? 0;
      const listed = key in stats.keys || keys < MAX_KEYS_PER_ROUTE ? key : '(other)';
      if (!(listed in stats.keys)) {
        stats.keys[listed] = { admitted: 0, rejected: 0, sideEffects: 0 };
        this.#keyCounts.set(route, keys + 1);
      }
      (stats.keys[listed] as KeyStats)[counter as keyof KeyStats] += 1;
    }
    return stats[counter];
  }

  /** A deep copy of every counter. */
  snapshot(): MockServerStats {
    const routes: Record<string, RouteStats> = {};
    let admitted = 0;
    let rejected = 0;
    let sideEffects = 0;
    for (const [name, stats] of this.#routes) {
      routes[name] = structuredClone(stats);
      admitted += stats.admitted;
      rejected += stats.rejected;
      sideEffects += stats.sideEffects;
    }
    return { admitted, rejected, sideEffects, routes };
  }

  /** Sets every counter back to zero (routes stay listed). */
  reset(): void {
    for (const name of this.#routes.keys()) this.#routes.set(name, emptyRoute());
    this.#keyCounts.clear();
  }
}

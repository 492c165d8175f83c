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
  /** Requests answered a plain 5xx by the `serverError` fault. */
  serverErrors: number;
  /** Stored responses replayed for a repeated `Idempotency-Key`. */
  replays: number;
  /** Requests refused for an `Idempotency-Key` in use (409) or reused with another body (422). */
  idempotencyConflicts: number;
  /**
   * Requests decided, in part or whole, on local copies of the limits because a store failed
   * (`failMode: 'open'`). They are counted in `admitted` or `rejected` too.
   */
  degraded: number;
  /** Requests answered 503 because a store failed (`failMode: 'closed'`). */
  failedClosed: number;
  /** Store calls that failed: takes, and also peeks and refunds (see `on('store-error')`). */
  storeErrors: number;
  /**
   * The same counts per client key. A request's client key is made of the keys of the route's
   * limits (`ip:127.0.0.1`, `x-api-key:abc|ip:127.0.0.1`), or its IP when the route has none.
   * At most {@link MAX_KEYS_PER_ROUTE} keys are listed; later ones count under `(other)`.
   * A null-prototype object: a key is data, whatever its name (`x-api-key:__proto__`).
   */
  keys: Record<string, KeyStats>;
}

/**
 * What clients make the server hold at the moment of a snapshot, each under a bound (see the
 * "Bounds" table of docs/mock-server.md).
 */
export interface HeldStats {
  /** Open connections (at most `maxConnections`). */
  connections: number;
  /** Requests in flight (at most `maxPipelinedRequests` per connection). */
  requests: number;
  /** Request-body bytes held (at most `maxBufferedBodyBytes`). */
  bodyBytes: number;
  /**
   * Keys in the memory stores of the limits: the default store (unless `store` is another kind)
   * and that of the local copies used while failing open. At most their `maxKeys` each.
   */
  limiterKeys: number;
  /** Keys in the `Idempotency-Key` store (at most `idempotency.maxEntries`). */
  idempotencyKeys: number;
  /** Bytes of the `Idempotency-Key` store, as counted against `idempotency.maxBytes`. */
  idempotencyBytes: number;
}

/** A snapshot of every counter, from {@link MockServer.stats}. */
export interface MockServerStats {
  /** Requests admitted, over all routes. */
  admitted: number;
  /** Requests rejected with 429, over all routes. */
  rejected: number;
  /** Side effects run, over all routes. */
  sideEffects: number;
  /** Requests decided on local copies of the limits because a store failed, over all routes. */
  degraded: number;
  /** Requests answered 503 because a store failed, over all routes. */
  failedClosed: number;
  /**
   * Per route, by the route's label (`POST /payments`, or its `name`). A null-prototype object, so
   * that a route named `__proto__` is listed like any other.
   */
  routes: Record<string, RouteStats>;
  /** What clients make the server hold now (not reset by `resetStats()`). */
  held: HeldStats;
}

/** Which counter an event bumps. */
export type Counter = keyof KeyStats | Exclude<keyof RouteStats, 'keys' | keyof KeyStats>;

/** Client keys listed per route before the rest are counted together under `(other)`. */
export const MAX_KEYS_PER_ROUTE = 10_000;

const KEY_COUNTERS = new Set<Counter>(['admitted', 'rejected', 'sideEffects']);

type RouteCounters = Omit<RouteStats, 'keys'>;

/** A route's live counters, and its client keys' (in a `Map`: keys are outside data). */
interface RouteEntry {
  counters: RouteCounters;
  keys: Map<string, KeyStats>;
}

function emptyRoute(): RouteEntry {
  return {
    counters: {
      admitted: 0,
      rejected: 0,
      sideEffects: 0,
      unavailable: 0,
      resets: 0,
      serverErrors: 0,
      replays: 0,
      idempotencyConflicts: 0,
      degraded: 0,
      failedClosed: 0,
      storeErrors: 0,
    },
    keys: new Map(),
  };
}

/** The live counters behind {@link MockServerStats}. */
export class StatsRecorder {
  readonly #routes = new Map<string, RouteEntry>();

  /** Makes a route appear in snapshots before its first request. */
  declare(route: string): void {
    if (!this.#routes.has(route)) this.#routes.set(route, emptyRoute());
  }

  /** Adds one to `counter` of `route` (and of `key` for the per-key counters); returns the total. */
  count(route: string, key: string, counter: Counter): number {
    let entry = this.#routes.get(route);
    if (entry === undefined) {
      entry = emptyRoute();
      this.#routes.set(route, entry);
    }
    entry.counters[counter] += 1;
    if (KEY_COUNTERS.has(counter)) {
      const { keys } = entry;
      let stats = keys.get(key);
      if (stats === undefined) {
        const listed = keys.size < MAX_KEYS_PER_ROUTE ? key : '(other)';
        stats = keys.get(listed);
        if (stats === undefined) {
          stats = { admitted: 0, rejected: 0, sideEffects: 0 };
          keys.set(listed, stats);
        }
      }
      stats[counter as keyof KeyStats] += 1;
    }
    return entry.counters[counter];
  }

  /**
   * A deep copy of every counter, in null-prototype objects keyed by route label and key, with
   * `held` as the server measures it.
   */
  snapshot(held: HeldStats): MockServerStats {
    const routes: Record<string, RouteStats> = Object.create(null);
    let admitted = 0;
    let rejected = 0;
    let sideEffects = 0;
    let degraded = 0;
    let failedClosed = 0;
    for (const [name, { counters, keys }] of this.#routes) {
      const byKey: Record<string, KeyStats> = Object.create(null);
      for (const [key, stats] of keys) byKey[key] = { ...stats };
      routes[name] = { ...counters, keys: byKey };
      admitted += counters.admitted;
      rejected += counters.rejected;
      sideEffects += counters.sideEffects;
      degraded += counters.degraded;
      failedClosed += counters.failedClosed;
    }
    return { admitted, rejected, sideEffects, degraded, failedClosed, routes, held };
  }

  /**
   * Each route's admitted and rejected counts, in the order routes appeared, without copying its
   * keys: what the dashboard's timeline samples every second.
   */
  routeTotals(): { route: string; admitted: number; rejected: number }[] {
    const totals: { route: string; admitted: number; rejected: number }[] = [];
    for (const [route, { counters }] of this.#routes) {
      totals.push({ route, admitted: counters.admitted, rejected: counters.rejected });
    }
    return totals;
  }

  /** Sets every counter back to zero (routes stay listed). */
  reset(): void {
    for (const name of this.#routes.keys()) this.#routes.set(name, emptyRoute());
  }
}

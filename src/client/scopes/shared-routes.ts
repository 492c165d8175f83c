/**
 * The routes a host's answers named a scope for, shared through the state store, so that a process
 * that has not seen a route yet sends it to the scope another process learned (and finds that
 * scope's state, spent or not, in the store) instead of learning it at the cost of a refusal. One
 * small document per host, under the host's key and the scope separator alone; a list of
 * `[method, folded path, scope, per major]`, the newest last, at most {@link MAX_ROUTES}.
 *
 * Read once when the host's pipeline starts, and again at most once a second while calls meet
 * routes of no known scope (with a store that has `get`: a read must not cost a write); written
 * when this process learns a route. A store failure here costs
 * nothing but the sharing (the route is learned from the answers as before). What another process
 * wrote is checked: a malformed entry is dropped, never merged.
 *
 * @module
 */
import { isPromise, type StateStore, type Transaction } from '../host/store.js';
import { CONTROL_CHARACTERS, MAX_SCOPE_NAME } from './answer-scope.js';
import { MAX_ROUTE_LENGTH } from './route-key.js';
import { MAX_ROUTES, type RouteScopes, type SharedRoute } from './route-scopes.js';

/** The shared document. */
export interface RoutesState {
  v: 1;
  routes: SharedRoute[];
}

/** The least time between two reads of the shared routes, in milliseconds. */
export const ROUTES_READ_MS = 1000;

const METHOD = /^[A-Z]{1,16}$/;

function isRoute(entry: unknown): entry is SharedRoute {
  if (!Array.isArray(entry) || entry.length !== 4) return false;
  const [method, path, scope, perMajor] = entry as unknown[];
  return (
    typeof method === 'string' &&
    METHOD.test(method) &&
    typeof path === 'string' &&
    path.startsWith('/') &&
    path.length <= MAX_ROUTE_LENGTH + 1 &&
    !CONTROL_CHARACTERS.test(path) &&
    typeof scope === 'string' &&
    scope.length > 0 &&
    scope.length <= MAX_SCOPE_NAME + 16 &&
    !CONTROL_CHARACTERS.test(scope) &&
    typeof perMajor === 'boolean'
  );
}

/** The check of a document another process wrote: its valid entries, at most {@link MAX_ROUTES}. */
export function checkRoutes(state: unknown): RoutesState {
  const routes = (state as { routes?: unknown } | null)?.routes;
  if (!Array.isArray(routes)) throw new Error('routes: not a list');
  return { v: 1, routes: routes.slice(-MAX_ROUTES).filter(isRoute) };
}

/** See the module comment. */
export class SharedRoutes {
  #readAt = Number.NEGATIVE_INFINITY;
  #reading = false;

  constructor(
    readonly store: StateStore,
    readonly key: string,
    readonly ttlMs: number,
    readonly routes: () => RouteScopes,
  ) {}

  /**
   * Whether the store says it is unavailable (`RedisStore.health()` during an outage): no read
   * then. It would fail, and the first call to reach Redis after an outage should be the one that
   * starts the replay of what ran locally, not a read of routes.
   */
  #unavailable(): boolean {
    const health = (this.store as { health?: () => { available?: boolean } }).health;
    return typeof health === 'function' && health.call(this.store).available === false;
  }

  /** Adds a route this process learned to the shared document. */
  add(route: SharedRoute): void {
    const transaction: Transaction<RoutesState, undefined> = {
      run(current) {
        const list = (current?.routes ?? []).filter(
          ([method, path]) => method !== route[0] || path !== route[1],
        );
        list.push(route);
        return [{ v: 1, routes: list.slice(-MAX_ROUTES) }, undefined];
      },
      check: checkRoutes,
    };
    try {
      const done = this.store.update(this.key, transaction, this.ttlMs);
      if (isPromise(done)) done.catch(() => {});
    } catch {
      // Sharing is a help, not a need: the route is still learned here.
    }
  }

  /** Reads the shared document and learns its routes, unless read less than a second ago. */
  read(now: number): void {
    if (this.#reading || now - this.#readAt < ROUTES_READ_MS || this.#unavailable()) return;
    this.#readAt = now;
    const learn = (state: unknown) => {
      if (state === undefined) return;
      let checked: RoutesState;
      try {
        checked = checkRoutes(state);
      } catch {
        return;
      }
      const routes = this.routes();
      for (const [method, path, name, perMajor] of checked.routes) {
        routes.learnRoute(method, path, { name, perMajor });
      }
    };
    // Read only where the store reads without writing (`get`: the memory store, RedisStore).
    if (this.store.get === undefined) return;
    try {
      const read = this.store.get<unknown>(this.key);
      if (!isPromise(read)) {
        learn(read);
        return;
      }
      this.#reading = true;
      read
        .then(learn, () => {})
        .finally(() => {
          this.#reading = false;
        });
    } catch {
      // As in add(): nothing shared, nothing lost.
    }
  }
}

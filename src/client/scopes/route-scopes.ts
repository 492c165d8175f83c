/**
 * What a host's answers taught about its budgets: which scope each route was answered from, and,
 * for a route never seen, the scope of its nearest known route (the longest known path prefix,
 * whatever the method). Kept per host pipeline, in memory, bounded; see `docs/how-it-works.md`
 * ("Many budgets per host").
 *
 * A server that names a fresh scope on every answer (a bug, or hostile) would make every route its
 * own budget: past {@link MAX_SCOPE_NAMES} distinct names the host is taken to name no scopes at
 * all, and its calls go through the host's own rules again.
 *
 * @module
 */
import type { NamedScope } from './answer-scope.js';
import { foldedSegments, majorOf, pathOf } from './route-key.js';

/** Routes and path prefixes remembered per host, at most; past it the oldest learned is forgotten. */
export const MAX_ROUTES = 512;
/** Distinct scope names a host may name in its pipeline's life before scopes are off for it. */
export const MAX_SCOPE_NAMES = 256;

/** See the module comment. */
export class RouteScopes {
  /** `GET /a/:id` for a route, `* /a` for a prefix: keys built here, values the server's names. */
  readonly #routes = new Map<string, NamedScope>();
  readonly #names = new Set<string>();
  #off = false;

  /** Whether the host named more scopes than {@link MAX_SCOPE_NAMES}: scopes are off for it. */
  get off(): boolean {
    return this.#off;
  }

  /** Routes and prefixes remembered. */
  get size(): number {
    return this.#routes.size;
  }

  /** Distinct scope names seen. */
  get names(): number {
    return this.#names.size;
  }

  /**
   * Remembers that `method` on `url` was answered from `scope`. Returns the route (its method and
   * folded path) when this is news (a route not known, or known in another scope), else
   * `undefined`.
   */
  learn(method: string, url: string, scope: NamedScope): SharedRoute | undefined {
    const path = `/${foldedSegments(pathOf(url)).join('/')}`;
    return this.learnRoute(method, path, scope)
      ? [method, path, scope.name, scope.perMajor]
      : undefined;
  }

  /**
   * Remembers that `method` on the folded `path` was answered from `scope` (what another process
   * shared: `shared-routes.ts`). Returns whether this is news.
   */
  learnRoute(method: string, path: string, scope: NamedScope): boolean {
    if (this.#off) return false;
    if (!this.#names.has(scope.name)) {
      if (this.#names.size >= MAX_SCOPE_NAMES) {
        this.#off = true;
        this.#routes.clear();
        return false;
      }
      this.#names.add(scope.name);
    }
    const fresh = this.#put(`${method} ${path}`, scope);
    const segments = path.split('/').slice(1);
    for (let k = segments.length; k >= 1; k--) {
      if (segments[0] === '') break;
      this.#put(`* /${segments.slice(0, k).join('/')}`, scope);
    }
    return fresh;
  }

  /**
   * The scope of a call, as its route or its nearest known route was answered from, with the
   * major parameter added where the scope is split by it; `undefined` when no known route is near.
   */
  scopeOf(method: string, url: string): string | undefined {
    if (this.#off || this.#routes.size === 0) return undefined;
    const path = pathOf(url);
    const segments = foldedSegments(path);
    let scope = this.#routes.get(`${method} /${segments.join('/')}`);
    for (let k = segments.length; scope === undefined && k >= 1; k--) {
      scope = this.#routes.get(`* /${segments.slice(0, k).join('/')}`);
    }
    if (scope === undefined) return undefined;
    if (!scope.perMajor) return scope.name;
    const major = majorOf(path);
    return major === '' ? scope.name : `${scope.name}@${major}`;
  }

  /** Puts `key`; returns whether it was not known with this scope. */
  #put(key: string, scope: NamedScope): boolean {
    const known = this.#routes.get(key);
    if (known !== undefined) {
      if (known.name === scope.name && known.perMajor === scope.perMajor) return false;
      this.#routes.delete(key);
    } else if (this.#routes.size >= MAX_ROUTES) {
      // The oldest learned goes (a Map keeps insertion order).
      const oldest = this.#routes.keys().next().value as string;
      this.#routes.delete(oldest);
    }
    this.#routes.set(key, scope);
    return true;
  }
}

/** A learned route as processes share it: method, folded path, scope name, split per major. */
export type SharedRoute = [method: string, path: string, scope: string, perMajor: boolean];

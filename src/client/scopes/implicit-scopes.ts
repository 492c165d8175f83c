/**
 * Scopes no answer names, which the client infers (see `docs/how-it-works.md`, "Many budgets per
 * host"): the model of an LLM request, on a host that limits per model (`model-scope.ts`), and the
 * route, on a host whose unnamed limits differ from route to route (`route-split.ts`). A host that
 * shows neither pays one check of two flags per call.
 *
 * Both kinds of names count against one bound, {@link MAX_SCOPE_NAMES} over the pipeline's life:
 * past it, no call is given an inferred scope any more (requests naming a fresh model each time
 * cannot make the client keep more).
 *
 * @module
 */
import type { RateLimitInfo } from '../../headers/types.js';
import type { PreparedRequest } from '../call/request.js';
import { KNOWN_MODEL_ORIGINS, modelScopeOf, speaksModelDialect } from './model-scope.js';
import { MAX_SCOPE_NAMES } from './route-scopes.js';
import { RouteSplit, routeKey } from './route-split.js';

/** See the module comment. One per host pipeline. */
export class ImplicitScopes {
  /** Whether the host limits per model: a known origin, or an answer in OpenAI's or Anthropic's dialect. */
  #models: boolean;
  readonly #split = new RouteSplit();
  readonly #names = new Set<string>();
  #off = false;

  /**
   * @param origin the host's origin (a {@link KNOWN_MODEL_ORIGINS} one is read for models at once).
   * @param learn whether the host learns from answers (with learning off, nothing is inferred).
   */
  constructor(
    origin: string,
    readonly learn: boolean,
  ) {
    this.#models = learn && KNOWN_MODEL_ORIGINS.has(origin);
  }

  /** Whether calls of this host may run in an inferred scope. */
  get active(): boolean {
    return (this.#models || this.#split.split) && !this.#off;
  }

  /**
   * Takes in an answer that names no scope, to `req`, read at `at` (epoch ms). Returns whether
   * the host's calls may run in an inferred scope (the answer's own call too).
   */
  answered(req: PreparedRequest, info: RateLimitInfo, at: number): boolean {
    if (this.#off || !this.learn) return false;
    if (speaksModelDialect(info)) this.#models = true;
    else this.#split.observe(req.method, req.url, info, at);
    return this.active;
  }

  /** The call's inferred scope: its model's, else its route's on a split host; or `undefined`. */
  scopeOf(req: PreparedRequest): string | undefined {
    if (!this.active) return undefined;
    let scope = this.#models ? modelScopeOf(req) : undefined;
    if (scope === undefined && this.#split.split) scope = `route:${routeKey(req.method, req.url)}`;
    if (scope === undefined || this.#names.has(scope)) return scope;
    if (this.#names.size >= MAX_SCOPE_NAMES) {
      this.#off = true;
      this.#names.clear();
      return undefined;
    }
    this.#names.add(scope);
    return scope;
  }
}

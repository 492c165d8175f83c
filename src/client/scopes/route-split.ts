/**
 * Budgets per endpoint whose fields name nothing: X answers `x-rate-limit-limit`, `-remaining` and
 * `-reset` for the endpoint called, each endpoint its own window, and no field says which. Such a
 * host is split into one scope per route (method and folded path: `route-key.ts`) once its routes
 * show that they are not one budget:
 *
 * - **different limits**: a route answers limits other than another route's, answered in between,
 *   and then its own again (`A: 5, B: 10, A: 5`): two budgets at once, not one that changed;
 * - **different windows**: with the same limits, two routes each report a steady reset moment
 *   (the same on two answers of the route in a row, as a fixed window does), more than
 *   {@link RESET_SLACK_MS} apart and both ahead, in two such alternations.
 *
 * A host with one budget reports the same limits and the same window end on every route: it keeps
 * one lane (a budget split into lanes would be overshot, once per lane). A route that reports a
 * limit other than its own earlier one (a server reporting whichever of its policies is nearest,
 * or a plan changed) shows the limits are not per route: the host is then never split.
 *
 * Only answers in the families that name no budget are read: `x-rate-limit`, `x-ratelimit` and
 * the IETF fields and drafts (without a partition key: those name their scope).
 *
 * @module
 */
import type { RateLimitInfo, RateLimitSource } from '../../headers/types.js';
import { foldedSegments, pathOf } from './route-key.js';
import { MAX_ROUTES } from './route-scopes.js';

/** The header families whose policies name no budget. */
const UNNAMED: ReadonlySet<RateLimitSource> = new Set<RateLimitSource>([
  'x-rate-limit',
  'x-ratelimit',
  'draft-6',
  'draft-7',
  'ietf',
]);

/**
 * Milliseconds two reset moments may differ by and still be one window's end: resets in whole
 * seconds (X's epoch seconds) are rounded by up to one.
 */
export const RESET_SLACK_MS = 1000;

/** What a route reported last. */
interface Seen {
  /** Its policies' limits, sorted, as one string. */
  limits: string;
  /** Its reset moment, epoch ms (`NaN`: none, or several policies). */
  resetAt: number;
  /** Whether the route reported the same reset moment on its answer before. */
  steady: boolean;
  /** The answer's number, in the order the host's answers came. */
  seq: number;
}

/** A call's route: its method and folded path (`GET /2/tweets/:id`). */
export function routeKey(method: string, url: string): string {
  return `${method} /${foldedSegments(pathOf(url)).join('/')}`;
}

/** The limits of an answer's policies, sorted, or `undefined` when it declares none. */
function limitsOf(info: RateLimitInfo): string | undefined {
  const { policies } = info;
  if (policies.length === 1) {
    const limit = policies[0]?.limit;
    return limit === undefined ? undefined : String(limit);
  }
  const limits: number[] = [];
  for (const p of policies) if (p.limit !== undefined) limits.push(p.limit);
  return limits.length === 0 ? undefined : limits.sort((a, b) => a - b).join(',');
}

/** See the module comment. One per host pipeline; memory bounded by `MAX_ROUTES` routes. */
export class RouteSplit {
  /** By route, least recently answered first. */
  readonly #routes = new Map<string, Seen>();
  #seq = 0;
  /** What the host's previous answer's route reported. */
  #last: Seen | undefined;
  /** The previous answer's method, URL and route: a call repeated is not folded again. */
  #lastMethod = '';
  #lastUrl = '';
  #lastRoute = '';
  /** Alternations seen between steady windows more than the slack apart. */
  #apart = 0;
  #split = false;
  /** A route changed its own limits: never split. */
  #mixed = false;

  /** Routes remembered (at most `MAX_ROUTES`). */
  get size(): number {
    return this.#routes.size;
  }

  /** Whether the host is split into a scope per route. */
  get split(): boolean {
    return this.#split;
  }

  /**
   * Takes in an answer to `method` on `url` that names no scope, `at` (epoch ms) being the `now`
   * its fields were read at. Returns whether the host is split per route (now or before).
   */
  observe(method: string, url: string, info: RateLimitInfo, at: number): boolean {
    if (this.#split) return true;
    if (this.#mixed || !UNNAMED.has(info.source)) return false;
    const limits = limitsOf(info);
    if (limits === undefined) return false;
    const route =
      method === this.#lastMethod && url === this.#lastUrl
        ? this.#lastRoute
        : routeKey(method, url);
    this.#lastMethod = method;
    this.#lastUrl = url;
    this.#lastRoute = route;
    const routes = this.#routes;
    const before = routes.get(route);
    if (before !== undefined && before.limits !== limits) {
      this.#mixed = true;
      routes.clear();
      this.#last = undefined;
      return false;
    }
    const resetAt =
      info.policies.length === 1 && info.resetMs !== undefined ? at + info.resetMs : Number.NaN;
    if (before !== undefined && before === this.#last) {
      // The route answered last answers again: newest already, no alternation to read.
      before.steady = Math.abs(resetAt - before.resetAt) <= RESET_SLACK_MS;
      before.resetAt = resetAt;
      before.seq = ++this.#seq;
      return false;
    }
    const seen: Seen = {
      limits,
      resetAt,
      steady: before !== undefined && Math.abs(resetAt - before.resetAt) <= RESET_SLACK_MS,
      seq: ++this.#seq,
    };
    const other = this.#last;
    this.#last = seen;
    if (before !== undefined) routes.delete(route);
    else if (routes.size >= MAX_ROUTES) routes.delete(routes.keys().next().value as string);
    routes.set(route, seen);
    // An alternation: this route answered before the other route's last answer, and again now.
    if (before === undefined || other === undefined || before.seq >= other.seq) return false;
    if (other.limits !== limits) {
      this.#split = true;
      return true;
    }
    if (!seen.steady || !other.steady) return false;
    const apart = Math.abs(resetAt - other.resetAt) > RESET_SLACK_MS;
    if (!apart) this.#apart = 0;
    else if (Math.min(resetAt, other.resetAt) > at && ++this.#apart >= 2) this.#split = true;
    return this.#split;
  }
}

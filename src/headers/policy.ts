import type { QuotaPolicy, RateLimitInfo, RateLimitSource } from './types.js';

/** The fields of a {@link QuotaPolicy}, copied one by one: no key of a policy comes from outside. */
const FIELDS = [
  'name',
  'limit',
  'remaining',
  'resetMs',
  'windowMs',
  'unit',
  'partitionKey',
  'scope',
] as const satisfies readonly (keyof QuotaPolicy)[];

/**
 * Drops what a policy contradicts itself on and removes empty fields. A remaining count above the
 * limit cannot both be true, and the parser cannot tell which one lies, so `remaining` (the value
 * the client would act on) is dropped. Returns `undefined` for a policy with no numbers left.
 */
export function finishPolicy(policy: QuotaPolicy): QuotaPolicy | undefined {
  const out: QuotaPolicy = {};
  for (const key of FIELDS) {
    const value = policy[key];
    if (value !== undefined) (out as Record<(typeof FIELDS)[number], unknown>)[key] = value;
  }
  if (out.limit !== undefined && out.remaining !== undefined && out.remaining > out.limit) {
    delete out.remaining;
  }
  const hasNumber =
    out.limit !== undefined ||
    out.remaining !== undefined ||
    out.resetMs !== undefined ||
    out.windowMs !== undefined;
  return hasNumber ? out : undefined;
}

/** {@link finishPolicy} on each policy; `undefined` when none has a number left. */
export function finishPolicies(policies: readonly QuotaPolicy[]): QuotaPolicy[] | undefined {
  const finished = policies.map(finishPolicy).filter((p): p is QuotaPolicy => p !== undefined);
  return finished.length > 0 ? finished : undefined;
}

/** A quota's counts as reported: any of them may be missing. */
export interface Counts {
  /** Units allowed per window. */
  limit?: number;
  /** Units left in the window. */
  remaining?: number;
  /** Units spent in the window (`x-ratelimit-used`, Reddit's and GitHub's). */
  used?: number;
}

/**
 * Combines a `used` count with `limit` and `remaining` (quota units), never overestimating what is
 * left:
 *
 * - `limit` missing: it is `remaining + used` (Reddit sends no limit);
 * - `remaining` missing: it is `limit - used`;
 * - all three present: `used` checks the other two. When they disagree, the smaller remaining wins
 *   (`min(remaining, limit - used)`): the server has counted at least `used`, and a client that
 *   believes less is left only waits a little longer;
 * - `used` above `limit` (GitLab's documented 429 shows `RateLimit-Observed: 67` against a limit of
 *   60) means nothing is left: remaining 0.
 *
 * A sum beyond `Number.MAX_SAFE_INTEGER` leaves `limit` unknown.
 */
export function reconcileUsed(counts: Counts): { limit?: number; remaining?: number } {
  const { used } = counts;
  let { limit, remaining } = counts;
  if (used === undefined) return { limit, remaining };
  if (limit === undefined) {
    if (remaining !== undefined && Number.isSafeInteger(remaining + used)) limit = remaining + used;
    return { limit, remaining };
  }
  const left = Math.max(0, limit - used);
  remaining = remaining === undefined ? left : Math.min(remaining, left);
  return { limit, remaining };
}

/**
 * What {@link compareRestrictiveness} reads of a policy: its counts, and when it resets, as a
 * delay (`resetMs`, as parsed) or an instant (`resetAt`, as the client keeps it): either orders
 * the same way, as long as both policies compared use the same one.
 */
export interface Restrictiveness {
  remaining?: number;
  limit?: number;
  resetMs?: number;
  resetAt?: number;
}

function fraction(p: Restrictiveness): number | undefined {
  if (p.remaining === undefined || p.limit === undefined) return undefined;
  return p.limit === 0 ? 0 : p.remaining / p.limit;
}

/**
 * Orders two policies by how restrictive they are right now; negative when `a` is more
 * restrictive. The rule, in order:
 *
 * 1. An exhausted policy (`remaining` 0, or less) is more restrictive than one with quota left; between two
 *    exhausted policies, the one that resets later (an unknown reset counts as latest).
 * 2. Between policies whose `remaining` and `limit` are both known, the smaller remaining fraction
 *    (`remaining / limit`), then the later reset. The fraction is unit-free, so a request quota and
 *    a token quota compare fairly.
 * 3. A policy with a known fraction before one without.
 * 4. Otherwise the smaller `remaining` (unknown counts as infinite), then the later reset.
 */
export function compareRestrictiveness(a: Restrictiveness, b: Restrictiveness): number {
  const resetA = a.resetMs ?? a.resetAt ?? Number.POSITIVE_INFINITY;
  const resetB = b.resetMs ?? b.resetAt ?? Number.POSITIVE_INFINITY;
  const laterResetFirst = resetA === resetB ? 0 : resetA > resetB ? -1 : 1;
  // A client's estimate may go below zero (it is over); a parsed count never does.
  const exhaustedA = a.remaining !== undefined && a.remaining <= 0;
  const exhaustedB = b.remaining !== undefined && b.remaining <= 0;
  if (exhaustedA !== exhaustedB) return exhaustedA ? -1 : 1;
  if (exhaustedA) return laterResetFirst;
  const fa = fraction(a);
  const fb = fraction(b);
  if (fa !== undefined && fb !== undefined) return fa === fb ? laterResetFirst : fa - fb;
  if (fa !== undefined) return -1;
  if (fb !== undefined) return 1;
  const ra = a.remaining ?? Number.POSITIVE_INFINITY;
  const rb = b.remaining ?? Number.POSITIVE_INFINITY;
  return ra === rb ? laterResetFirst : ra < rb ? -1 : 1;
}

/** The policies sorted most restrictive first (a new array; the sort is stable). */
export function sortByRestrictiveness(policies: readonly QuotaPolicy[]): QuotaPolicy[] {
  return [...policies].sort(compareRestrictiveness);
}

/**
 * A {@link RateLimitInfo} of `policies` read from `source`: the policies most restrictive first,
 * and the top-level fields (`limit`, `remaining`, `resetMs`, `windowMs`, `policy`) the first's.
 */
export function infoOf(policies: readonly QuotaPolicy[], source: RateLimitSource): RateLimitInfo {
  const sorted = sortByRestrictiveness(policies);
  const info: RateLimitInfo = { policies: sorted, source };
  const top = sorted[0];
  for (const key of ['limit', 'remaining', 'resetMs', 'windowMs'] as const) {
    if (top?.[key] !== undefined) info[key] = top[key];
  }
  if (top?.name !== undefined) info.policy = top.name;
  return info;
}

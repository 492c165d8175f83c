/**
 * Limits a GraphQL API reports in its JSON answer rather than in headers, read into the same
 * {@link RateLimitInfo} the header parser produces:
 *
 * - Shopify's `extensions.cost`: `{ requestedQueryCost, actualQueryCost, throttleStatus: {
 *   maximumAvailable, currentlyAvailable, restoreRate } }` (shopify.dev/docs/api/usage/limits), a
 *   leaky bucket of cost points; a query the bucket cannot hold is answered HTTP 200 with
 *   `errors[].extensions.code === 'THROTTLED'`;
 * - GitHub GraphQL's `data.rateLimit { limit, remaining, resetAt, cost }` when the query asks for
 *   it (docs.github.com/graphql/overview/rate-limits-and-query-limits-for-the-graphql-api); a
 *   spent budget is answered HTTP 200 with `errors[].type === 'RATE_LIMITED'`.
 *
 * Units are cost points (the policy's `unit` is {@link POINTS}). Pure, never throws: the value
 * comes from outside, and a field that is not a finite number in range is ignored (as if absent).
 *
 * @module
 */
import { finishPolicy, infoOf } from '../../headers/policy.js';
import type { QuotaPolicy, RateLimitInfo } from '../../headers/types.js';
import { MAX_DELAY_MS } from '../../headers/values.js';

/** The unit of a GraphQL cost policy: a call spends points, not requests. */
export const POINTS = 'points';

/** Shopify's bucket, as a policy name. */
export const SHOPIFY_POLICY = 'graphql-cost';

/** GitHub's GraphQL budget, as a policy name (GitHub's own `x-ratelimit-resource` for it). */
export const GITHUB_POLICY = 'graphql';

/** Largest count or cost read, in points (more is taken as a lie and ignored). */
export const MAX_POINTS = 1e9;

/** Most entries of `errors` looked at for a refusal (a hostile answer may list millions). */
export const MAX_ERRORS_READ = 16;

/** What an answer's body says about limits. */
export interface BodyLimits {
  /** The policies it reports (cost points); `undefined` when it reports none. */
  info: RateLimitInfo | undefined;
  /** Whether the answer is a refusal: Shopify's `THROTTLED`, GitHub's `RATE_LIMITED`. */
  throttled: boolean;
  /**
   * What such a query costs, in points, as the client should charge it next time: Shopify's
   * `requestedQueryCost` (what the bucket must hold for the query to run), else its
   * `actualQueryCost`; GitHub's `rateLimit.cost`. `undefined` when the body does not say.
   */
  cost: number | undefined;
}

/**
 * The value at `names` under `v`, own data properties of objects only (no getter runs, nothing
 * inherited is read); `undefined` where the path breaks.
 */
function at(v: unknown, ...names: string[]): unknown {
  for (const name of names) {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined;
    v = Object.getOwnPropertyDescriptor(v, name)?.value;
  }
  return v;
}

/** `v` when it is a finite number from 0 to {@link MAX_POINTS}, else `undefined`. */
function points(v: unknown): number | undefined {
  return typeof v === 'number' && v >= 0 && v <= MAX_POINTS ? v : undefined;
}

/**
 * Reads a GraphQL answer's limits from its parsed JSON `body`, or `undefined` when it says nothing
 * about them. See the module comment.
 *
 * Shopify's bucket becomes a policy of `maximumAvailable` points with `currentlyAvailable` left,
 * whose reset is when the requested cost is back: `(requestedQueryCost - currentlyAvailable) /
 * restoreRate` seconds (0 while it fits), so a spent bucket lets one query go per its cost's worth
 * of restore: the client paces at `restoreRate` points a second. No window is declared: the refill
 * model (`rules/refill.ts`) would take one for a window refilled at once until it learned
 * otherwise, and wait for the whole bucket (measured: 1.25x the least time, against 1.0x this
 * way). A refusal's wait is the same deficit over the restore rate, at least one point's time;
 * both at most the whole bucket's. GitHub's `rateLimit` is `limit` and `remaining` points; its
 * `resetAt` is not read: GitHub sends the same budget's reset in `x-ratelimit-reset` (with
 * `x-ratelimit-resource: graphql`) on every answer, and the rules take the two policies of that
 * name as one (`mergeInfo`). Left out for the core bundle's size budget.
 */
export function parseBodyLimits(body: unknown): BodyLimits | undefined {
  const errors = at(body, 'errors');
  let throttled = false;
  if (Array.isArray(errors)) {
    for (const e of errors.slice(0, MAX_ERRORS_READ)) {
      if (at(e, 'extensions', 'code') === 'THROTTLED' || at(e, 'type') === 'RATE_LIMITED') {
        throttled = true;
      }
    }
  }
  const policies: QuotaPolicy[] = [];
  let waitMs: number | undefined;
  // Shopify's extensions.cost.
  const cost = at(body, 'extensions', 'cost');
  const requested = points(at(cost, 'requestedQueryCost'));
  const status = at(cost, 'throttleStatus');
  const max = points(at(status, 'maximumAvailable'));
  const available = points(at(status, 'currentlyAvailable'));
  const rate = points(at(status, 'restoreRate'));
  if (max !== undefined && max >= 1 && rate !== undefined && rate > 0) {
    const fullMs = Math.min(MAX_DELAY_MS, Math.ceil((max / rate) * 1000));
    const wait = (missing: number) => Math.min(fullMs, Math.ceil((missing / rate) * 1000));
    const p: QuotaPolicy = { name: SHOPIFY_POLICY, unit: POINTS, limit: Math.floor(max) };
    if (available !== undefined) {
      // (A remaining above the maximum is dropped by `finishPolicy`.)
      p.remaining = Math.floor(available);
      const missing = (requested ?? 0) - available;
      p.resetMs = missing > 0 ? wait(missing) : 0;
      if (throttled) waitMs = wait(Math.max(1, missing));
    }
    policies.push(p);
  }
  // GitHub's data.rateLimit.
  const rateLimit = at(body, 'data', 'rateLimit');
  const limit = points(at(rateLimit, 'limit'));
  const remaining = points(at(rateLimit, 'remaining'));
  const g: QuotaPolicy = { name: GITHUB_POLICY, unit: POINTS };
  if (limit !== undefined) g.limit = Math.floor(limit);
  if (remaining !== undefined) g.remaining = Math.floor(remaining);
  if (limit !== undefined || remaining !== undefined) policies.push(g);
  const charged = requested ?? points(at(cost, 'actualQueryCost')) ?? points(at(rateLimit, 'cost'));
  if (policies.length === 0 && !throttled && charged === undefined) return undefined;
  let info: RateLimitInfo | undefined;
  if (policies.length > 0) {
    const finished = policies.map(finishPolicy) as QuotaPolicy[];
    info = infoOf(finished, 'graphql');
    if (waitMs !== undefined) info.retryAfterMs = waitMs;
  }
  return { info, throttled, cost: charged };
}

/**
 * The header info and the body's together: one policy list (a body policy and a header policy of
 * the same name, GitHub's `graphql` resource, become one: the body's fields, its unit in points
 * above all, and the header's for what the body lacks, the reset), the top-level fields from the
 * most restrictive, the longer retry hint, the header family as the source. Either may be
 * `undefined`.
 */
export function mergeInfo(
  headers: RateLimitInfo | undefined,
  body: RateLimitInfo | undefined,
): RateLimitInfo | undefined {
  if (body === undefined) return headers;
  if (headers === undefined) return body;
  // A body policy takes the fields it lacks from the header policy of its name (GitHub's reset).
  const own = body.policies.map((b) => ({
    ...headers.policies.find((h) => h.name === b.name),
    ...b,
  }));
  const merged = infoOf(
    [...headers.policies.filter((h) => !own.some((b) => b.name === h.name)), ...own],
    headers.source,
  );
  const wait = Math.max(headers.retryAfterMs ?? -1, body.retryAfterMs ?? -1);
  if (wait >= 0) merged.retryAfterMs = wait;
  if (headers.global) merged.global = true;
  return merged;
}

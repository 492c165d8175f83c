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
import { sortByRestrictiveness } from '../../headers/policy.js';
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

type Obj = Record<string, unknown>;

/** `v` as an object (never an array), or `undefined`. */
function obj(v: unknown): Obj | undefined {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : undefined;
}

/** `v` when it is a finite number from 0 to {@link MAX_POINTS}, else `undefined`. */
function points(v: unknown): number | undefined {
  return typeof v === 'number' && v >= 0 && v <= MAX_POINTS ? v : undefined;
}

/** Reads a property without running anything (a getter, a prototype's field): own data only. */
function field(o: Obj | undefined, name: string): unknown {
  if (o === undefined) return undefined;
  const d = Object.getOwnPropertyDescriptor(o, name);
  return d && 'value' in d ? d.value : undefined;
}

/**
 * Reads a GraphQL answer's limits from its parsed JSON `body`, at `now` (epoch milliseconds), or
 * `undefined` when it says nothing about them. See the module comment.
 */
export function parseBodyLimits(body: unknown, now: number): BodyLimits | undefined {
  const root = obj(body);
  if (root === undefined) return undefined;
  const throttled = isRefusal(field(root, 'errors'));
  const shopify = readShopify(obj(field(obj(field(root, 'extensions')), 'cost')), throttled);
  const github = readGitHub(obj(field(obj(field(root, 'data')), 'rateLimit')), now);
  const policies: QuotaPolicy[] = [];
  if (shopify?.policy) policies.push(shopify.policy);
  if (github?.policy) policies.push(github.policy);
  const cost = shopify?.cost ?? github?.cost;
  if (policies.length === 0 && !throttled && cost === undefined) return undefined;
  let info: RateLimitInfo | undefined;
  if (policies.length > 0 || shopify?.waitMs !== undefined) {
    info = withTop({ policies: sortByRestrictiveness(policies), source: 'graphql' });
    if (shopify?.waitMs !== undefined) info.retryAfterMs = shopify.waitMs;
  }
  return { info, throttled, cost };
}

/** Whether `errors` lists a throttling refusal (first {@link MAX_ERRORS_READ} entries). */
function isRefusal(errors: unknown): boolean {
  if (!Array.isArray(errors)) return false;
  const n = Math.min(errors.length, MAX_ERRORS_READ);
  for (let i = 0; i < n; i++) {
    const e = obj(errors[i]);
    if (field(obj(field(e, 'extensions')), 'code') === 'THROTTLED') return true;
    if (field(e, 'type') === 'RATE_LIMITED') return true;
  }
  return false;
}

interface Read {
  policy: QuotaPolicy | undefined;
  cost: number | undefined;
  /** For a refusal: milliseconds until the requested cost is back. */
  waitMs?: number;
}

/**
 * Shopify's `extensions.cost`. The bucket becomes a policy of `maximumAvailable` points with
 * `currentlyAvailable` left, whose reset is when the requested cost is back: `(requestedQueryCost -
 * currentlyAvailable) / restoreRate` seconds (0 while it fits), so a spent bucket lets one query go
 * per its cost's worth of restore: the client paces at `restoreRate` points a second. No window is
 * declared: the refill model (`rules/refill.ts`) would take one for a window refilled at once until
 * it learned otherwise, and wait for the whole bucket (measured: 1.25x the least time, against 1.0x
 * this way). A refusal's wait is the same deficit over the restore rate, at least one point's time;
 * both at most the whole bucket's.
 */
function readShopify(cost: Obj | undefined, throttled: boolean): Read | undefined {
  if (cost === undefined) return undefined;
  const requested = points(field(cost, 'requestedQueryCost'));
  const actual = points(field(cost, 'actualQueryCost'));
  const status = obj(field(cost, 'throttleStatus'));
  const max = points(field(status, 'maximumAvailable'));
  const available = points(field(status, 'currentlyAvailable'));
  const rate = points(field(status, 'restoreRate'));
  const read: Read = { policy: undefined, cost: requested ?? actual };
  if (max === undefined || max < 1 || rate === undefined || rate <= 0) return read;
  const fullMs = Math.min(MAX_DELAY_MS, Math.ceil((max / rate) * 1000));
  const policy: QuotaPolicy = {
    name: SHOPIFY_POLICY,
    unit: POINTS,
    limit: Math.floor(max),
  };
  if (available !== undefined && available <= max) {
    policy.remaining = Math.floor(available);
    const missing = (requested ?? 0) - available;
    policy.resetMs = missing > 0 ? Math.min(fullMs, Math.ceil((missing / rate) * 1000)) : 0;
    if (throttled) {
      read.waitMs = Math.min(fullMs, Math.ceil((Math.max(1, missing) / rate) * 1000));
    }
  }
  read.policy = policy;
  return read;
}

/** Longest `resetAt` text read (an ISO 8601 date is 20 to 30 characters). */
const MAX_DATE_CHARS = 64;

/** GitHub's `data.rateLimit`: `limit` and `remaining` points until `resetAt` (ISO 8601). */
function readGitHub(rateLimit: Obj | undefined, now: number): Read | undefined {
  if (rateLimit === undefined) return undefined;
  const limit = points(field(rateLimit, 'limit'));
  const remaining = points(field(rateLimit, 'remaining'));
  const cost = points(field(rateLimit, 'cost'));
  const resetAt = field(rateLimit, 'resetAt');
  const policy: QuotaPolicy = { name: GITHUB_POLICY, unit: POINTS };
  if (limit !== undefined) policy.limit = Math.floor(limit);
  if (remaining !== undefined && (limit === undefined || remaining <= limit)) {
    policy.remaining = Math.floor(remaining);
  }
  if (typeof resetAt === 'string' && resetAt.length <= MAX_DATE_CHARS) {
    const at = Date.parse(resetAt);
    if (Number.isFinite(at)) policy.resetMs = Math.min(MAX_DELAY_MS, Math.max(0, at - now));
  }
  const counted = policy.limit !== undefined || policy.remaining !== undefined;
  return { policy: counted ? policy : undefined, cost };
}

/** Fills the top-level fields from the most restrictive policy (the first). */
function withTop(info: RateLimitInfo): RateLimitInfo {
  for (const key of ['limit', 'remaining', 'resetMs', 'windowMs'] as const) delete info[key];
  delete info.policy;
  const top = info.policies[0];
  if (top?.limit !== undefined) info.limit = top.limit;
  if (top?.remaining !== undefined) info.remaining = top.remaining;
  if (top?.resetMs !== undefined) info.resetMs = top.resetMs;
  if (top?.windowMs !== undefined) info.windowMs = top.windowMs;
  if (top?.name !== undefined) info.policy = top.name;
  return info;
}

/**
 * The header info and the body's together: one policy list (a body policy replaces a header
 * policy of the same name: GitHub's headers count the `graphql` resource without saying its unit
 * is points), the top-level fields from the most restrictive, the longer retry hint, the header
 * family as the source. Either may be `undefined`.
 */
export function mergeInfo(
  headers: RateLimitInfo | undefined,
  body: RateLimitInfo | undefined,
): RateLimitInfo | undefined {
  if (body === undefined) return headers;
  if (headers === undefined) return body;
  const names = new Set(body.policies.map((p) => p.name));
  const policies = headers.policies.filter((p) => !names.has(p.name));
  const merged: RateLimitInfo = withTop({
    policies: sortByRestrictiveness([...policies, ...body.policies]),
    source: headers.source,
  });
  const wait = Math.max(headers.retryAfterMs ?? -1, body.retryAfterMs ?? -1);
  if (wait >= 0) merged.retryAfterMs = wait;
  if (headers.global) merged.global = true;
  return merged;
}

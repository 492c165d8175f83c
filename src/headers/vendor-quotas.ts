/**
 * Providers that report their quotas in fields of their own rather than in `X-RateLimit-*`:
 * Shopify and Salesforce as `used/limit` pairs, HubSpot as one field per number. Each reader
 * follows the provider's public documentation, cited above it, and returns `undefined` when its
 * fields are absent. None of them reports a reset.
 *
 * @module
 */
import type { FieldMap } from './field-map.js';
import { finishPolicies, reconcileUsed } from './policy.js';
import type { QuotaPolicy } from './types.js';
import { parseCount, parseMillis, parseRepeated } from './values.js';

/**
 * Shopify REST Admin API ("REST Admin API rate limits", shopify.dev/docs/api/usage/rate-limits):
 * `X-Shopify-Shop-Api-Call-Limit: 32/40`, requests used in a leaky bucket of 40. The leak rate is
 * not in the header, so no reset is reported. A used count above the bucket's size cannot be true
 * of a leaky bucket, and its remaining is dropped.
 */
export function parseShopify(fields: FieldMap): QuotaPolicy[] | undefined {
  const value = fields.get('x-shopify-shop-api-call-limit');
  if (value === undefined) return undefined;
  const m = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(value);
  if (!m) return undefined;
  const used = parseCount(m[1]);
  const limit = parseCount(m[2]);
  if (used === undefined || limit === undefined) return undefined;
  return finishPolicies([
    { name: 'api-call-limit', limit, remaining: used <= limit ? limit - used : undefined },
  ]);
}

/** `api-usage=10018/100000`, optionally followed by `(appName=...)`. */
const SALESFORCE_MEMBER = /^([A-Za-z][A-Za-z0-9-]*)=(\d+)\/(\d+)(?:\([^()]*\))?$/;

/** At most this many members of `Sforce-Limit-Info` are read (Salesforce documents three). */
export const SALESFORCE_MAX_MEMBERS = 16;

/**
 * Salesforce REST API ("Limit Info Header",
 * developer.salesforce.com/docs/atlas.en-us.api_rest.meta/api_rest/headers_api_usage.htm):
 * `Sforce-Limit-Info: api-usage=10018/100000; api-bursts=1/750`, calls used over the limit. One
 * policy per member, named after it (`api-usage` is the org's daily quota). Salesforce lets an org
 * run past its limit, so a used count above the limit means nothing is left (remaining 0, see
 * {@link reconcileUsed}). Malformed members are skipped; a name repeated with other numbers is
 * dropped (as a repeated field is); only the first {@link SALESFORCE_MAX_MEMBERS} members are read.
 */
export function parseSalesforce(fields: FieldMap): QuotaPolicy[] | undefined {
  const value = fields.get('sforce-limit-info');
  if (value === undefined) return undefined;
  const byName = new Map<string, QuotaPolicy | null>();
  for (const member of value.split(/[;,]/).slice(0, SALESFORCE_MAX_MEMBERS)) {
    const m = SALESFORCE_MEMBER.exec(member.trim());
    if (!m) continue;
    const name = m[1] as string;
    const policy = {
      name,
      ...reconcileUsed({ used: parseCount(m[2], 'ceil'), limit: parseCount(m[3]) }),
    };
    const seen = byName.get(name);
    const agrees =
      seen === undefined ||
      (seen !== null && seen.limit === policy.limit && seen.remaining === policy.remaining);
    // A member repeated with other numbers cannot be trusted: the policy is dropped.
    byName.set(name, agrees ? policy : null);
  }
  const policies = [...byName.values()].filter((p): p is QuotaPolicy => p !== null);
  return policies.length > 0 ? finishPolicies(policies) : undefined;
}

const HUBSPOT = 'x-hubspot-ratelimit';
const DAY_MS = 86_400_000;

/**
 * HubSpot ("API usage guidelines", developers.hubspot.com/docs/api/usage-details, and the
 * changelog "Rate limit information headers will be included in HTTP responses"): up to three
 * policies, none with a reset:
 *
 * - `interval`: `X-HubSpot-RateLimit-Max` requests per `X-HubSpot-RateLimit-Interval-Milliseconds`
 *   (HubSpot's ten-second rolling limit), `X-HubSpot-RateLimit-Remaining` left;
 * - `secondly`: `X-HubSpot-RateLimit-Secondly` per second, `-Secondly-Remaining` left;
 * - `daily`: `X-HubSpot-RateLimit-Daily` per day, `-Daily-Remaining` left (absent for OAuth apps).
 */
export function parseHubSpot(fields: FieldMap): QuotaPolicy[] | undefined {
  const count = (suffix: string) => parseRepeated(fields.get(`${HUBSPOT}-${suffix}`), parseCount);
  const policies: QuotaPolicy[] = [
    {
      name: 'interval',
      limit: count('max'),
      remaining: count('remaining'),
      windowMs:
        parseRepeated(fields.get(`${HUBSPOT}-interval-milliseconds`), parseMillis) || undefined,
    },
    {
      name: 'secondly',
      limit: count('secondly'),
      remaining: count('secondly-remaining'),
      windowMs: 1000,
    },
    { name: 'daily', limit: count('daily'), remaining: count('daily-remaining'), windowMs: DAY_MS },
  ].filter((p) => p.limit !== undefined || p.remaining !== undefined);
  return finishPolicies(policies);
}

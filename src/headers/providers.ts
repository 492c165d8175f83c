/**
 * `X-RateLimit-*` and the provider conventions users meet daily. Each reader follows the
 * provider's public documentation, cited above it, and returns `undefined` when its headers are
 * absent.
 *
 * @module
 */
import { parseRfc3339 } from './dates.js';
import type { FieldMap } from './field-map.js';
import { finishPolicies, reconcileUsed } from './policy.js';
import type { QuotaPolicy } from './types.js';
import { clampDelay, parseCount, parseRepeated, parseResetMs, parseSecondsToMs } from './values.js';

const count = (fields: FieldMap, name: string) => parseRepeated(fields.get(name), parseCount);
const reset = (fields: FieldMap, name: string, now: number) =>
  parseRepeated(fields.get(name), (v) => parseResetMs(v, now));

/**
 * One `<prefix>-limit` / `-remaining` / `-used` / `-reset` group as a policy, `used` reconciled
 * with the others (see {@link reconcileUsed}); `undefined` when none of the four fields is present.
 * Counts may be decimals (`597.0`): `limit` and `remaining` round down, `used` rounds up.
 */
function countedPolicy(
  fields: FieldMap,
  prefix: string,
  now: number,
  limitFallback?: string,
): QuotaPolicy | undefined {
  const names = ['limit', 'remaining', 'used', 'reset'].map((kind) => `${prefix}-${kind}`);
  if (limitFallback !== undefined) names.push(limitFallback);
  if (!names.some((name) => fields.has(name))) return undefined;
  const reported = {
    limit:
      count(fields, `${prefix}-limit`) ??
      (limitFallback === undefined ? undefined : count(fields, limitFallback)),
    remaining: count(fields, `${prefix}-remaining`),
    used: parseRepeated(fields.get(`${prefix}-used`), (v) => parseCount(v, 'ceil')),
  };
  return { ...reconcileUsed(reported), resetMs: reset(fields, `${prefix}-reset`, now) };
}

/**
 * GitHub REST API ("Rate limits for the REST API", docs.github.com): `x-ratelimit-limit`,
 * `-remaining`, `-used`, `-reset` (Unix seconds) and `-resource` (`core`, `search`, `graphql`...),
 * recognised by `x-ratelimit-resource`, which becomes the policy name. `used` is reconciled with
 * the others as {@link reconcileUsed} says.
 *
 * A spent primary limit answers 403 or 429 with `x-ratelimit-remaining: 0` and the reset; a
 * secondary limit answers 403 or 429 with `retry-after` (read separately, as `retryAfterMs`), or
 * with `x-ratelimit-remaining: 0` and the reset. Either way the parse says when to come back; a
 * secondary limit with neither header is told apart only by the response body, which the parser
 * does not see.
 */
export function parseGitHub(fields: FieldMap, now: number): QuotaPolicy[] | undefined {
  const resource = fields.get('x-ratelimit-resource');
  if (resource === undefined) return undefined;
  const policy = countedPolicy(fields, 'x-ratelimit', now) ?? {};
  return finishPolicies([{ name: resource.trim() || undefined, ...policy }]);
}

/**
 * Discord ("Rate Limits", discord.com/developers/docs/topics/rate-limits): `X-RateLimit-Limit`,
 * `-Remaining`, `-Reset` (Unix seconds with a fraction), `-Reset-After` (seconds with a fraction,
 * preferred: it needs no clock), `-Bucket` (the policy), `-Scope` (`user`, `global`, `shared`) and
 * `-Global` (`true` on a global limit).
 */
export function parseDiscord(
  fields: FieldMap,
  now: number,
): { policies: QuotaPolicy[]; global: boolean } | undefined {
  const bucket = fields.get('x-ratelimit-bucket');
  const resetAfter = fields.get('x-ratelimit-reset-after');
  const scope = fields.get('x-ratelimit-scope');
  const global = fields.get('x-ratelimit-global');
  if (
    bucket === undefined &&
    resetAfter === undefined &&
    scope === undefined &&
    global === undefined
  )
    return undefined;
  const policies =
    finishPolicies([
      {
        name: bucket?.trim() || undefined,
        limit: count(fields, 'x-ratelimit-limit'),
        remaining: count(fields, 'x-ratelimit-remaining'),
        resetMs:
          parseRepeated(resetAfter, parseSecondsToMs) ?? reset(fields, 'x-ratelimit-reset', now),
        scope: scope?.trim() || undefined,
      },
    ]) ?? [];
  return { policies, global: global?.trim().toLowerCase() === 'true' };
}

const SUFFIXED = /^x-ratelimit-(limit|remaining|reset)-(.+)$/;

/**
 * OpenAI ("Rate limits", platform.openai.com/docs/guides/rate-limits) and the providers that copy
 * it (Azure OpenAI, Groq...): `x-ratelimit-limit-requests`, `x-ratelimit-remaining-tokens`,
 * `x-ratelimit-reset-requests: 1s`, `x-ratelimit-reset-tokens: 6m0s`. One policy per suffix, named
 * after it; its unit is `requests` or `tokens`.
 */
export function parseSuffixed(fields: FieldMap, now: number): QuotaPolicy[] | undefined {
  const byName = new Map<string, QuotaPolicy>();
  for (const [name, value] of fields) {
    const m = SUFFIXED.exec(name);
    if (!m) continue;
    const [, kind, suffix] = m as unknown as [string, 'limit' | 'remaining' | 'reset', string];
    const policy = byName.get(suffix) ?? {
      name: suffix,
      unit: suffix === 'requests' ? 'requests' : suffix.includes('tokens') ? 'tokens' : undefined,
    };
    if (kind === 'reset') policy.resetMs = parseRepeated(value, (v) => parseResetMs(v, now));
    else policy[kind] = parseRepeated(value, parseCount);
    byName.set(suffix, policy);
  }
  return byName.size > 0 ? finishPolicies([...byName.values()]) : undefined;
}

const ANTHROPIC = /^anthropic-ratelimit-(.+)-(limit|remaining|reset)$/;

/**
 * Anthropic ("Rate limits", docs.anthropic.com/en/api/rate-limits):
 * `anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-{limit,remaining,reset}`, the
 * reset an RFC 3339 timestamp. One policy per dimension.
 */
export function parseAnthropic(fields: FieldMap, now: number): QuotaPolicy[] | undefined {
  const byName = new Map<string, QuotaPolicy>();
  for (const [name, value] of fields) {
    const m = ANTHROPIC.exec(name);
    if (!m) continue;
    const [, dimension, kind] = m as unknown as [string, string, 'limit' | 'remaining' | 'reset'];
    const policy = byName.get(dimension) ?? {
      name: dimension,
      unit:
        dimension === 'requests' ? 'requests' : dimension.includes('tokens') ? 'tokens' : undefined,
    };
    if (kind === 'reset') {
      const at = parseRfc3339(value);
      policy.resetMs = at === undefined ? undefined : clampDelay(at - now);
    } else {
      policy[kind] = parseRepeated(value, parseCount);
    }
    byName.set(dimension, policy);
  }
  return byName.size > 0 ? finishPolicies([...byName.values()]) : undefined;
}

const AZURE_REMAINING = /^x-ms-ratelimit-remaining-(.+)$/;

/**
 * Azure Resource Manager ("Understand how Azure Resource Manager throttles requests",
 * learn.microsoft.com): `x-ms-ratelimit-remaining-subscription-reads: 11999` and similar, remaining
 * counts without a limit or reset. One policy per header.
 */
export function parseAzure(fields: FieldMap): QuotaPolicy[] | undefined {
  const policies: QuotaPolicy[] = [];
  for (const [name, value] of fields) {
    const m = AZURE_REMAINING.exec(name);
    if (m) policies.push({ name: m[1], remaining: parseRepeated(value, parseCount) });
  }
  return policies.length > 0 ? finishPolicies(policies) : undefined;
}

/**
 * Plain `X-RateLimit-Limit` / `-Remaining` / `-Reset`, with `-Used` where the server sends it
 * (Reddit: `x-ratelimit-used: 3`, `x-ratelimit-remaining: 597.0`, `x-ratelimit-reset: 33`, no
 * limit, which is then `remaining + used`). See {@link parseResetMs} for the reset and
 * {@link reconcileUsed} for `used`.
 */
export function parseXRateLimit(fields: FieldMap, now: number): QuotaPolicy[] | undefined {
  const policy = countedPolicy(fields, 'x-ratelimit', now);
  return policy ? finishPolicies([policy]) : undefined;
}

/**
 * The hyphenated spelling `X-Rate-Limit-Limit` / `-Remaining` / `-Reset`: X (Twitter) API v2
 * (docs.x.com, "Rate limits", Unix-second resets), Okta (developer.okta.com, "Rate limit best
 * practices"), and Zendesk, whose account limit comes as a bare `X-Rate-Limit: 700`
 * (developer.zendesk.com, "Best practices for avoiding rate limiting").
 */
export function parseXRateLimitHyphenated(
  fields: FieldMap,
  now: number,
): QuotaPolicy[] | undefined {
  const policy = countedPolicy(fields, 'x-rate-limit', now, 'x-rate-limit');
  return policy ? finishPolicies([policy]) : undefined;
}

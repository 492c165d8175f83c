/**
 * `X-RateLimit-*` and the provider conventions users meet daily. Each reader follows the
 * provider's public documentation, cited above it, and returns `undefined` when its headers are
 * absent.
 *
 * @module
 */
import { parseRfc3339 } from './dates.js';
import type { FieldMap } from './field-map.js';
import { finishPolicy } from './policy.js';
import type { QuotaPolicy } from './types.js';
import { clampDelay, parseCount, parseRepeated, parseResetMs, parseSecondsToMs } from './values.js';

const count = (fields: FieldMap, name: string) => parseRepeated(fields.get(name), parseCount);
const reset = (fields: FieldMap, name: string, now: number) =>
  parseRepeated(fields.get(name), (v) => parseResetMs(v, now));

function collect(policies: QuotaPolicy[]): QuotaPolicy[] | undefined {
  const finished = policies.map(finishPolicy).filter((p): p is QuotaPolicy => p !== undefined);
  return finished.length > 0 ? finished : undefined;
}

/**
 * GitHub REST API ("Rate limits for the REST API", docs.github.com): `x-ratelimit-limit`,
 * `-remaining`, `-used`, `-reset` (Unix seconds) and `-resource` (`core`, `search`, `graphql`...).
 * When `remaining` is missing it is derived from `limit - used`. Secondary limits arrive as a 403
 * or 429 with `retry-after`, read separately.
 */
export function parseGitHub(fields: FieldMap, now: number): QuotaPolicy[] | undefined {
  const resource = fields.get('x-ratelimit-resource');
  const used = count(fields, 'x-ratelimit-used');
  if (resource === undefined && used === undefined) return undefined;
  const limit = count(fields, 'x-ratelimit-limit');
  let remaining = count(fields, 'x-ratelimit-remaining');
  if (remaining === undefined && limit !== undefined && used !== undefined && used <= limit) {
    remaining = limit - used;
  }
  return collect([
    {
      name: resource?.trim() || undefined,
      limit,
      remaining,
      resetMs: reset(fields, 'x-ratelimit-reset', now),
    },
  ]);
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
    collect([
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
  return byName.size > 0 ? collect([...byName.values()]) : undefined;
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
  return byName.size > 0 ? collect([...byName.values()]) : undefined;
}

/**
 * Shopify REST Admin API ("REST Admin API rate limits", shopify.dev/docs/api/usage/rate-limits):
 * `X-Shopify-Shop-Api-Call-Limit: 32/40`, requests used in a leaky bucket of 40. The leak rate is
 * not in the header, so no reset is reported.
 */
export function parseShopify(fields: FieldMap): QuotaPolicy[] | undefined {
  const value = fields.get('x-shopify-shop-api-call-limit');
  if (value === undefined) return undefined;
  const m = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(value);
  if (!m) return undefined;
  const used = parseCount(m[1]);
  const limit = parseCount(m[2]);
  if (used === undefined || limit === undefined) return undefined;
  return collect([
    { name: 'api-call-limit', limit, remaining: used <= limit ? limit - used : undefined },
  ]);
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
  return policies.length > 0 ? collect(policies) : undefined;
}

/** Plain `X-RateLimit-Limit` / `-Remaining` / `-Reset` (see {@link parseResetMs} for the reset). */
export function parseXRateLimit(fields: FieldMap, now: number): QuotaPolicy[] | undefined {
  const limit = count(fields, 'x-ratelimit-limit');
  const remaining = count(fields, 'x-ratelimit-remaining');
  const resetMs = reset(fields, 'x-ratelimit-reset', now);
  if (
    !fields.has('x-ratelimit-limit') &&
    !fields.has('x-ratelimit-remaining') &&
    !fields.has('x-ratelimit-reset')
  ) {
    return undefined;
  }
  return collect([{ limit, remaining, resetMs }]);
}

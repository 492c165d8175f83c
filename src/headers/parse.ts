import { parseHttpDate } from './dates.js';
import { parseDraft6, parseDraft7 } from './drafts.js';
import { type FieldMap, type HeadersInput, readFields } from './field-map.js';
import { parseIetfFields } from './ietf.js';
import { infoOf } from './policy.js';
import {
  parseAnthropic,
  parseAzure,
  parseDiscord,
  parseGitHub,
  parseSuffixed,
  parseXRateLimit,
  parseXRateLimitHyphenated,
} from './providers.js';
import { parseRetryAfter, parseRetryAfterMs } from './retry-after.js';
import type { QuotaPolicy, RateLimitInfo, RateLimitSource } from './types.js';
import { parseHubSpot, parseSalesforce, parseShopify } from './vendor-quotas.js';

/** Options of {@link parseRateLimitHeaders}. */
export interface ParseRateLimitHeadersOptions {
  /**
   * The moment every returned time is relative to, in epoch milliseconds.
   * @default Date.now()
   */
  now?: number;
}

interface Found {
  source: RateLimitSource;
  policies: QuotaPolicy[];
  global?: boolean;
}

/**
 * The header families, most authoritative first. The first one present in a response supplies the
 * policies; the others are ignored, so a server that sends the same quota in two families (the
 * IETF fields plus legacy `X-RateLimit-*`) is not counted twice.
 */
function findPolicies(fields: FieldMap, now: number, serverNow: number): Found | undefined {
  return (
    nonEmpty('ietf', parseIetfFields(fields)) ??
    nonEmpty('draft-7', parseDraft7(fields)) ??
    nonEmpty('draft-6', parseDraft6(fields, serverNow)) ??
    nonEmpty('anthropic', parseAnthropic(fields, serverNow)) ??
    discord(fields, serverNow) ??
    nonEmpty('github', parseGitHub(fields, serverNow)) ??
    nonEmpty('openai', parseSuffixed(fields, now)) ??
    nonEmpty('shopify', parseShopify(fields)) ??
    nonEmpty('azure', parseAzure(fields)) ??
    nonEmpty('hubspot', parseHubSpot(fields)) ??
    nonEmpty('salesforce', parseSalesforce(fields)) ??
    nonEmpty('x-ratelimit', parseXRateLimit(fields, serverNow)) ??
    nonEmpty('x-rate-limit', parseXRateLimitHyphenated(fields, serverNow))
  );
}

/** `policies` found in the family `source`, when there are any. */
function nonEmpty(source: RateLimitSource, policies: QuotaPolicy[] | undefined): Found | undefined {
  return policies && policies.length > 0 ? { source, policies } : undefined;
}

function discord(fields: FieldMap, serverNow: number): Found | undefined {
  const found = parseDiscord(fields, serverNow);
  if (!found || (found.policies.length === 0 && !found.global)) return undefined;
  return { source: 'discord', policies: found.policies, global: found.global || undefined };
}

function retryAfter(fields: FieldMap, serverNow: number): number | undefined {
  return (
    parseRetryAfterMs(fields.get('retry-after-ms')) ??
    parseRetryAfterMs(fields.get('x-ms-retry-after-ms')) ??
    parseRetryAfter(fields.get('retry-after'), { now: serverNow })
  );
}

/**
 * How far, in milliseconds, the response's `Date` may lag `now` and still count as agreeing with
 * it: up to a second of truncation (`Date` has whole seconds) plus up to a second of transit.
 */
export const DATE_AGREEMENT_MS = 2000;

/**
 * The moment absolute times are read against: `now` when the server's `Date` agrees with it (the
 * more precise of the two), the server's `Date` when the clocks disagree by more than its own
 * resolution explains (the one the server's timestamps were written against).
 */
function referenceTime(serverDate: number | undefined, now: number): number {
  if (serverDate === undefined) return now;
  const lag = now - serverDate;
  return lag >= 0 && lag < DATE_AGREEMENT_MS ? now : serverDate;
}

/**
 * Reads everything a response says about rate limits into one {@link RateLimitInfo}, or
 * `undefined` when it says nothing.
 *
 * Understood families, in order of precedence (the first present supplies the policies): the IETF
 * `RateLimit` / `RateLimit-Policy` lists; draft 7's combined `RateLimit: limit=, remaining=,
 * reset=`; draft 6's `RateLimit-Limit` / `-Remaining` / `-Reset`; Anthropic; Discord; GitHub
 * (`x-ratelimit-resource`); OpenAI-style suffixed `x-ratelimit-*-requests` / `-tokens`; Shopify;
 * Azure Resource Manager; HubSpot; Salesforce; plain `X-RateLimit-*` (with Reddit's `-Used`);
 * hyphenated `X-Rate-Limit-*` (X, Okta, Zendesk). The retry hint comes from `retry-after-ms`,
 * `x-ms-retry-after-ms` or `Retry-After`, in that order.
 *
 * Pushback: the parser does not see the status, but says what a client needs to call a 403 or 429
 * pushback and to time it: `retryAfterMs`, or a spent policy (`remaining` 0 at the top level, the
 * most restrictive policy) with its `resetMs`, which is how GitHub answers a spent primary or
 * secondary limit.
 *
 * Times:
 * - every time is milliseconds from `now`, never negative, never above {@link MAX_DELAY_MS};
 * - absolute times (Unix resets, HTTP-dates, RFC 3339) are converted against `now` while the
 *   response's `Date` agrees with it (`Date` is at most {@link DATE_AGREEMENT_MS} behind `now`,
 *   which is what whole-second truncation plus the trip back amount to), and against `Date`
 *   otherwise: that cancels a real clock skew between client and server, at the cost of erring up
 *   to a second late (never early), since `Date` is truncated to the second;
 * - `X-RateLimit-Reset` style numbers are read by magnitude: below 1e9 delta seconds, below 1e12
 *   Unix seconds, above that Unix milliseconds; durations such as `6m0s` are understood.
 *
 * Counts: a decimal count (`597.0`) is read; a fractional one is rounded so that no more quota
 * seems left than is (`limit` and `remaining` down, `used` up). A `used` count is reconciled with
 * the others: the limit is `remaining + used` when missing, and the smaller remaining wins when
 * they disagree.
 *
 * Untrusted input: malformed fields are ignored; negative, `NaN`, exponent or overflowing counts
 * are dropped; a field repeated with different values is dropped; a remaining count above its own
 * limit is dropped. Nothing here throws.
 *
 * @param headers a fetch `Headers`, or a plain object with header names in any case.
 * @example
 * const info = parseRateLimitHeaders(response.headers);
 * if (info?.remaining === 0) await sleep(info.resetMs ?? 1000);
 */
export function parseRateLimitHeaders(
  headers: HeadersInput | null | undefined,
  options: ParseRateLimitHeadersOptions = {},
): RateLimitInfo | undefined {
  // `Date` alone (most responses) says nothing about limits: no fields then.
  const fields = readFields(headers);
  if (fields === undefined) return undefined;
  const now = Number.isFinite(options.now) ? (options.now as number) : Date.now();
  const dateField = fields.get('date');
  const serverNow = referenceTime(
    dateField === undefined ? undefined : parseHttpDate(dateField, now),
    now,
  );

  const found = findPolicies(fields, now, serverNow);
  const retryAfterMs = retryAfter(fields, serverNow);
  if (!found && retryAfterMs === undefined) return undefined;

  const info = infoOf(found?.policies ?? [], found?.source ?? 'retry-after');
  if (retryAfterMs !== undefined) info.retryAfterMs = retryAfterMs;
  if (found?.global) info.global = true;
  return info;
}

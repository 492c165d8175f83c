/**
 * Writes what the limits decided as response header fields, in each family a server may speak.
 * Every time is rounded up to whole seconds (the `openai` family's durations are exact to the
 * millisecond), so a client acting on a header is never early. A declared quota is the limit's
 * true sustained rate over whole seconds (`declared-quota.ts`), never a window rounded up. The
 * structured fields are written from parts serialised once per limit ({@link describePolicy}):
 * per request only integers are added, each within the range a structured field allows.
 *
 * @module
 */
import { serializeItem } from 'structured-headers';
import { compareRestrictiveness } from '../../headers/policy.js';
import { discordFields, githubFields } from './budget-fields.js';
import type { HeaderFamily, RetryAfterFormat } from './config.js';
import type { DeclaredQuota } from './declared-quota.js';

/** One limit's state as the headers describe it. */
export interface PolicyReport {
  /** The policy's name. */
  name: string;
  /** Units per window (or in flight). */
  limit: number;
  /** Units left now. */
  remaining: number;
  /** Milliseconds until more units become available (0 when at the limit). */
  resetMs: number;
  /** Milliseconds until a request of this request's cost would be admitted (0 if it would be). */
  retryAfterMs: number;
  /** A concurrency limit: counts requests in flight, not requests per window. */
  concurrency: boolean;
  /** What the limit counts: `requests`, `tokens`..., `concurrent-requests`. */
  unit: string;
  /** The policy in the fields, as {@link describePolicy} wrote it once for its limit. */
  field: PolicyField;
  /** The budget's name in the `github` and `discord` fields (`budget-fields.ts`). */
  resource?: string;
  /** A server-wide limit (the `discord` family's global limit). */
  serverWide?: boolean;
  /** The IETF `pk` of this request's budget, serialised (`:base64:`), when the limit writes one. */
  partition?: string;
}

/**
 * A policy's part of the header fields, serialised once per limit (not per request): its name as a
 * structured-field string, its `RateLimit-Policy` item, and the quota the drafts' fields carry.
 */
export interface PolicyField {
  /** `"name"`. */
  token: string;
  /**
   * `"name";q=100;w=60`, `"name";q=600;w=10;qu="tokens"`, or
   * `"name";q=8;qu="concurrent-requests"`.
   */
  declared: string;
  /** The declared quota per window (`q`), or a concurrency limit's slots. */
  quota: number;
  /** The declared window in whole seconds; `undefined` for a concurrency limit. */
  windowSeconds: number | undefined;
}

/** The largest integer a structured field carries; larger numbers are written as this. */
const MAX_SF_INTEGER = 999_999_999_999_999;

function sfInteger(n: number): string {
  return n > MAX_SF_INTEGER ? `${MAX_SF_INTEGER}` : `${n}`;
}

/**
 * A `RateLimit-Policy` item. The unit goes in `qu`, an sf-string in the draft's syntax (its registry
 * lists `requests`, the default and so left out, `content-bytes` and `concurrent-requests`; any
 * other unit, `tokens` say, is still a well-formed String a client may read).
 */
function declaredItem(
  token: string,
  quota: number,
  windowSeconds: number | undefined,
  unit: string,
): string {
  const window = windowSeconds === undefined ? '' : `;w=${sfInteger(windowSeconds)}`;
  const quotaUnit = unit === 'requests' ? '' : `;qu=${serializeItem(unit)}`;
  return `${token};q=${sfInteger(quota)}${window}${quotaUnit}`;
}

/**
 * Serialises a policy's name and declared quota, once, for every report of its limit.
 * @param declared its quota per whole seconds (`declared-quota.ts`), or for a concurrency limit
 *   (no window) its slots.
 * @param unit what it counts; `requests` is written as no `qu` at all.
 */
export function describePolicy(
  name: string,
  declared: DeclaredQuota | { slots: number },
  unit: string,
): PolicyField {
  const token = serializeItem(name);
  const quota = 'slots' in declared ? declared.slots : declared.quota;
  const windowSeconds = 'slots' in declared ? undefined : declared.windowSeconds;
  return { token, declared: declaredItem(token, quota, windowSeconds, unit), quota, windowSeconds };
}

/** Milliseconds as whole seconds, rounded up: never earlier than the truth. */
export function ceilSeconds(ms: number): number {
  return Math.ceil(ms / 1000);
}

/**
 * The policy the single-policy header families describe: when the request was rejected, the one
 * that holds it longest; otherwise the most restrictive by the rule the header parser uses
 * (exhausted first, then the smallest remaining fraction).
 */
export function mostRestrictive(
  policies: readonly PolicyReport[],
  rejected: boolean,
): PolicyReport {
  let top = policies[0] as PolicyReport;
  for (let i = 1; i < policies.length; i++) {
    const p = policies[i] as PolicyReport;
    const before = rejected
      ? p.retryAfterMs > top.retryAfterMs
      : compareRestrictiveness(
          { limit: p.limit, remaining: p.remaining, resetMs: p.resetMs },
          { limit: top.limit, remaining: top.remaining, resetMs: top.resetMs },
        ) < 0;
    if (before) top = p;
  }
  return top;
}

/** A policy's `RateLimit` item: `"name";r=99;t=60`, no `t` for a concurrency limit; any `pk`. */
function currentOf(p: PolicyReport): string {
  const reset = p.concurrency ? '' : `;t=${sfInteger(ceilSeconds(p.resetMs))}`;
  return `${p.field.token};r=${sfInteger(p.remaining)}${reset}${partitionParam(p)}`;
}

function partitionParam(p: PolicyReport): string {
  return p.partition === undefined ? '' : `;pk=${p.partition}`;
}

function ietfFields(policies: readonly PolicyReport[]): string[] {
  let declared = '';
  let current = '';
  for (const p of policies) {
    if (declared !== '') {
      declared += ', ';
      current += ', ';
    }
    declared += p.field.declared + partitionParam(p);
    current += currentOf(p);
  }
  return ['RateLimit-Policy', declared, 'RateLimit', current];
}

/**
 * A duration as Go's `time.Duration` prints it, which is what OpenAI sends in
 * `x-ratelimit-reset-*`: `0s`, `250ms`, `1s`, `6.75s`, `6m0s`, `1h2m3.5s`. Whole milliseconds in,
 * exact out (no rounding: the fraction is the milliseconds).
 */
export function goDuration(ms: number): string {
  const total = Math.max(0, Math.ceil(ms));
  if (total === 0) return '0s';
  if (total < 1000) return `${total}ms`;
  const hours = Math.floor(total / 3_600_000);
  const minutes = Math.floor((total % 3_600_000) / 60_000);
  const millis = total % 60_000;
  const whole = Math.floor(millis / 1000);
  const fraction = millis % 1000;
  const seconds =
    fraction === 0
      ? `${whole}s`
      : `${whole}.${String(fraction).padStart(3, '0').replace(/0+$/, '')}s`;
  if (hours > 0) return `${hours}h${minutes}m${seconds}`;
  if (minutes > 0) return `${minutes}m${seconds}`;
  return seconds;
}

/**
 * OpenAI's fields: per unit, the most restrictive policy of that unit (for a rejected request, the
 * one that holds it longest), in OpenAI's order: every `x-ratelimit-limit-<unit>`, then every
 * `-remaining-<unit>`, then every `-reset-<unit>` (a Go duration, exact to the millisecond: the time
 * until more units come back, the window's end for a window). Concurrency limits have no place in
 * it and are left out.
 */
function openAiFields(policies: readonly PolicyReport[], rejected: boolean): string[] {
  const byUnit = new Map<string, PolicyReport[]>();
  for (const p of policies) {
    if (p.concurrency) continue;
    const group = byUnit.get(p.unit);
    if (group === undefined) byUnit.set(p.unit, [p]);
    else group.push(p);
  }
  const tops = [...byUnit.values()].map((group) => mostRestrictive(group, rejected));
  const out: string[] = [];
  for (const p of tops) out.push(`x-ratelimit-limit-${p.unit}`, String(p.limit));
  for (const p of tops) out.push(`x-ratelimit-remaining-${p.unit}`, String(p.remaining));
  for (const p of tops) out.push(`x-ratelimit-reset-${p.unit}`, goDuration(p.resetMs));
  return out;
}

/** The drafts' `RateLimit-Policy`: the declared quota and its window, `10;w=1`. */
function legacyPolicy(p: PolicyReport): string {
  const { quota, windowSeconds } = p.field;
  return windowSeconds === undefined
    ? sfInteger(quota)
    : `${sfInteger(quota)};w=${sfInteger(windowSeconds)}`;
}

/**
 * The rate-limit fields of one response, as a raw list of names and values in turn.
 *
 * - `ietf` (the current draft, structured lists; every policy):
 *   `RateLimit-Policy: "per-ip";q=100;w=60` and `RateLimit: "per-ip";r=99;t=60`;
 *   a unit other than requests is written `qu="tokens"`; a concurrency limit says
 *   `qu="concurrent-requests"` and has no `w` or `t`.
 * - `draft-7` (the most restrictive policy): `RateLimit: limit=100, remaining=99, reset=60` and
 *   `RateLimit-Policy: 100;w=60`; `limit` is the declared quota, as in the policy.
 * - `draft-6` (the most restrictive): `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset`
 *   (delta seconds) and `RateLimit-Policy`, the limit again the declared quota.
 * - `x-ratelimit` (the most restrictive): `X-RateLimit-Limit`, `X-RateLimit-Remaining` and
 *   `X-RateLimit-Reset` as Unix seconds, as GitHub and most `X-` servers send it. With no window
 *   to read a quota against, the limit is the most the limit holds at once (a bucket's capacity).
 * - `openai` (the most restrictive of each unit): `x-ratelimit-limit-requests: 10`,
 *   `x-ratelimit-limit-tokens: 600`, `x-ratelimit-remaining-requests: 9`,
 *   `x-ratelimit-remaining-tokens: 550`, `x-ratelimit-reset-requests: 750ms`,
 *   `x-ratelimit-reset-tokens: 6.75s`, as OpenAI sends them; no concurrency limit.
 * - `none`: nothing.
 *
 * @param now the response's time (its `Date`), epoch milliseconds.
 */
export function rateLimitFields(
  family: HeaderFamily,
  policies: readonly PolicyReport[],
  rejected: boolean,
  now: number,
): string[] {
  if (family === 'none' || policies.length === 0) return [];
  if (family === 'ietf') return ietfFields(policies);
  if (family === 'openai') return openAiFields(policies, rejected);
  if (family === 'discord') {
    // The bucket is the route's own; the server-wide limits are Discord's global limit.
    const own = policies.filter((p) => p.serverWide !== true);
    const bucket = own.length > 0 ? mostRestrictive(own, rejected) : undefined;
    return discordFields(bucket, rejected ? mostRestrictive(policies, true) : undefined, now);
  }
  const top = mostRestrictive(policies, rejected);
  const reset = ceilSeconds(top.resetMs);
  switch (family) {
    case 'draft-7':
      return [
        'RateLimit',
        `limit=${sfInteger(top.field.quota)}, remaining=${sfInteger(top.remaining)}, reset=${sfInteger(reset)}`,
        'RateLimit-Policy',
        legacyPolicy(top),
      ];
    case 'draft-6':
      return [
        'RateLimit-Limit',
        String(top.field.quota),
        'RateLimit-Remaining',
        String(top.remaining),
        'RateLimit-Reset',
        String(reset),
        'RateLimit-Policy',
        legacyPolicy(top),
      ];
    case 'x-ratelimit':
      return [
        'X-RateLimit-Limit',
        String(top.limit),
        'X-RateLimit-Remaining',
        String(top.remaining),
        'X-RateLimit-Reset',
        String(ceilSeconds(now + top.resetMs)),
      ];
    case 'github':
      return githubFields(top, now);
  }
}

/**
 * The names of the fields {@link rateLimitFields} writes for `family` on a route with these
 * `policies` (what each counts, and whether it is a concurrency limit): found by writing the fields
 * of made-up reports of them, so that the list is whatever the writer emits.
 */
export function fieldNames(
  family: HeaderFamily,
  policies: readonly { unit: string; concurrency: boolean }[],
): string[] {
  const reports = policies.map(({ unit, concurrency }, i): PolicyReport => {
    const name = `p${i}`;
    return {
      name,
      limit: 1,
      remaining: 0,
      resetMs: 1000,
      retryAfterMs: 1000,
      concurrency,
      unit,
      field: describePolicy(
        name,
        concurrency ? { slots: 1 } : { quota: 1, windowSeconds: 1 },
        unit,
      ),
    };
  });
  const fields = rateLimitFields(family, reports, true, 0);
  const names = fields.filter((_, i) => i % 2 === 0);
  // Made-up reports are all the route's own: Discord's global refusal adds its flag.
  if (family === 'discord') names.push('X-RateLimit-Global');
  return names;
}

/**
 * `Retry-After` for a delay of `retryAfterMs`: delay-seconds rounded up, or the HTTP-date of the
 * first whole second at or after `now + retryAfterMs`. Either way a client that waits exactly as
 * told is not early, even against a `Date` truncated to the second.
 */
export function retryAfterField(
  format: RetryAfterFormat,
  retryAfterMs: number,
  now: number,
): string | undefined {
  if (format === 'none') return undefined;
  if (format === 'seconds') return String(ceilSeconds(retryAfterMs));
  return new Date(ceilSeconds(now + retryAfterMs) * 1000).toUTCString();
}

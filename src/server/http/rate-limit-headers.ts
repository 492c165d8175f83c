/**
 * Writes what the limits decided as response header fields, in each family a server may speak.
 * Every time is rounded up to whole seconds, so a client acting on a header is never early. The
 * structured fields are written from parts serialised once per limit ({@link describePolicy}):
 * per request only integers are added, each within the range a structured field allows.
 *
 * @module
 */
import { serializeItem } from 'structured-headers';
import { compareRestrictiveness } from '../../headers/policy.js';
import type { HeaderFamily, RetryAfterFormat } from './config.js';

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
  /**
   * The window a client should read `limit` against: the window, or for bucket algorithms the time
   * to refill `limit` units from empty. Absent for concurrency limits.
   */
  windowMs?: number;
  /** A concurrency limit: counts requests in flight, not requests per window. */
  concurrency: boolean;
  /** The policy in the fields, as {@link describePolicy} wrote it once for its limit. */
  field: PolicyField;
}

/**
 * A policy's part of the IETF fields, serialised once per limit (not per request): its name as a
 * structured-field string, and its `RateLimit-Policy` item for the limit's own quota.
 */
export interface PolicyField {
  /** `"name"`. */
  token: string;
  /** The quota `declared` describes. */
  limit: number;
  /** `"name";q=100;w=60`, or `"name";q=8;qu="concurrent-requests"`. */
  declared: string;
}

/** The largest integer a structured field carries; larger numbers are written as this. */
const MAX_SF_INTEGER = 999_999_999_999_999;

function sfInteger(n: number): string {
  return String(Math.min(n, MAX_SF_INTEGER));
}

function declaredItem(
  token: string,
  limit: number,
  windowMs: number | undefined,
  concurrency: boolean,
): string {
  if (concurrency) return `${token};q=${sfInteger(limit)};qu="concurrent-requests"`;
  if (windowMs === undefined) return `${token};q=${sfInteger(limit)}`;
  return `${token};q=${sfInteger(limit)};w=${sfInteger(windowSeconds(windowMs))}`;
}

/** Serialises a policy's name and declared quota, once, for every report of its limit. */
export function describePolicy(
  name: string,
  limit: number,
  windowMs: number | undefined,
  concurrency: boolean,
): PolicyField {
  const token = serializeItem(name);
  return { token, limit, declared: declaredItem(token, limit, windowMs, concurrency) };
}

/** Milliseconds as whole seconds, rounded up: never earlier than the truth. */
export function ceilSeconds(ms: number): number {
  return Math.ceil(ms / 1000);
}

/** A window as whole seconds, rounded up, at least 1. */
function windowSeconds(ms: number): number {
  return Math.max(1, ceilSeconds(ms));
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

function ietfFields(policies: readonly PolicyReport[]): string[] {
  let declared = '';
  let current = '';
  for (const p of policies) {
    const { field } = p;
    const item =
      p.limit === field.limit
        ? field.declared
        : declaredItem(field.token, p.limit, p.windowMs, p.concurrency);
    const reset = p.concurrency ? '' : `;t=${sfInteger(ceilSeconds(p.resetMs))}`;
    if (declared !== '') {
      declared += ', ';
      current += ', ';
    }
    declared += item;
    current += `${field.token};r=${sfInteger(p.remaining)}${reset}`;
  }
  return ['RateLimit-Policy', declared, 'RateLimit', current];
}

function legacyPolicy(p: PolicyReport): string {
  const limit = sfInteger(p.limit);
  return p.windowMs === undefined ? limit : `${limit};w=${sfInteger(windowSeconds(p.windowMs))}`;
}

/**
 * The rate-limit fields of one response, as a raw list of names and values in turn.
 *
 * - `ietf` (the current draft, structured lists; every policy):
 *   `RateLimit-Policy: "per-ip";q=100;w=60` and `RateLimit: "per-ip";r=99;t=60`;
 *   a concurrency limit says `qu="concurrent-requests"` and has no `w` or `t`.
 * - `draft-7` (the most restrictive policy): `RateLimit: limit=100, remaining=99, reset=60` and
 *   `RateLimit-Policy: 100;w=60`.
 * - `draft-6` (the most restrictive): `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset`
 *   (delta seconds) and `RateLimit-Policy`.
 * - `x-ratelimit` (the most restrictive): `X-RateLimit-Limit`, `X-RateLimit-Remaining` and
 *   `X-RateLimit-Reset` as Unix seconds, as GitHub and most `X-` servers send it.
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
  const top = mostRestrictive(policies, rejected);
  const reset = ceilSeconds(top.resetMs);
  switch (family) {
    case 'draft-7':
      return [
        'RateLimit',
        `limit=${sfInteger(top.limit)}, remaining=${sfInteger(top.remaining)}, reset=${sfInteger(reset)}`,
        'RateLimit-Policy',
        legacyPolicy(top),
      ];
    case 'draft-6':
      return [
        'RateLimit-Limit',
        String(top.limit),
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
  }
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

/**
 * The quota a limit declares in the header fields that carry one (the IETF `RateLimit-Policy`'s
 * `q` and `w`, the drafts' `limit` and `w`): `quota` units per `windowSeconds` whole seconds, the
 * limit's sustained rate exactly, never smaller and never larger than what it admits. The fields
 * carry whole seconds, so a limit whose own period is not a whole number of seconds is declared
 * over the shortest whole number of seconds that holds a whole number of its periods:
 *
 * - windows (fixed, sliding log, sliding-window counter), `limit` per `windowMs`: `k * limit` per
 *   `k * windowMs`, `k` the fewest windows that make whole seconds (10 per 500 ms: 20 per 1 s;
 *   10 per 1,500 ms: 20 per 3 s; 100 per 60 s: itself). An aligned span of `k` windows admits
 *   exactly `k * limit`, and every such span does, so the quota is neither more nor less than what
 *   the limit grants.
 * - buckets (token bucket, GCRA, leaky bucket), `rate` per second: `rate * w` per the fewest whole
 *   seconds `w` that make it a whole number (10/s: 10 per 1 s; 0.5/s: 1 per 2 s; 2.5/s: 5 per 2 s),
 *   or a multiple of that window when the bucket holds more than one window's quota, so that the
 *   quota is never below what the bucket holds at once (a bucket of 100 refilled at 10/s: 100 per
 *   10 s; GCRA at 10/s with a burst of 5, six at once: 10 per 1 s). That is the rate at which they
 *   refill, which a client sustains however it spends the burst, and `r` (what is available now)
 *   never exceeds `q` (parsers drop a remaining count above its quota as a contradiction). A rate
 *   that is no whole number per a whole number of seconds up to a day (0.1234567/s) is declared
 *   per day, rounded down: at most one unit a day less than the truth, never more.
 * - a concurrency limit counts requests in flight, not per time: it declares no window.
 *
 * docs/mock-server.md (Header fields) gives the reasoning per algorithm.
 *
 * @module
 */
import type { LimitConfig } from './config.js';

/** `quota` units per `windowSeconds` seconds, both whole. */
export interface DeclaredQuota {
  /** Units per window. */
  quota: number;
  /** Window length, in whole seconds (at least 1). */
  windowSeconds: number;
}

/** The longest window searched for a bucket's rate, in seconds: a day. */
export const MAX_DECLARED_WINDOW_SECONDS = 86_400;

function gcd(a: number, b: number): number {
  let x = a;
  let y = b;
  while (y !== 0) [x, y] = [y, x % y];
  return x;
}

/** `limit` units per `windowMs` (a whole number of milliseconds), over whole seconds. */
export function windowQuota(limit: number, windowMs: number): DeclaredQuota {
  const g = gcd(windowMs, 1000);
  return { quota: limit * (1000 / g), windowSeconds: windowMs / g };
}

/** The fewest whole seconds over which `ratePerSecond` is a whole number of units. */
function shortestWholeWindow(ratePerSecond: number): DeclaredQuota {
  for (let w = 1; w <= MAX_DECLARED_WINDOW_SECONDS; w++) {
    const units = ratePerSecond * w;
    const whole = Math.round(units);
    // A rate such as 0.1 or 2.5 times w is whole up to the last bit of a double.
    if (whole >= 1 && Math.abs(units - whole) <= 1e-12 * units) {
      return { quota: whole, windowSeconds: w };
    }
  }
  const perDay = Math.floor(ratePerSecond * MAX_DECLARED_WINDOW_SECONDS);
  // Slower than one a day: one per the whole seconds it takes, rounded up (never more than it).
  if (perDay < 1) return { quota: 1, windowSeconds: Math.ceil(1 / ratePerSecond) };
  return { quota: perDay, windowSeconds: MAX_DECLARED_WINDOW_SECONDS };
}

/**
 * `ratePerSecond` units per second (possibly fractional) over whole seconds, a quota of at least
 * `capacity` units (what the bucket holds at once).
 */
export function rateQuota(ratePerSecond: number, capacity: number): DeclaredQuota {
  const shortest = shortestWholeWindow(ratePerSecond);
  const windows = Math.max(1, Math.ceil(capacity / shortest.quota));
  return { quota: shortest.quota * windows, windowSeconds: shortest.windowSeconds * windows };
}

/** What `limit` declares (see the module comment); `undefined` for a concurrency limit. */
export function declaredQuota(limit: LimitConfig): DeclaredQuota | undefined {
  switch (limit.algorithm) {
    case 'fixed-window':
    case 'sliding-log':
    case 'sliding-window-counter':
      return windowQuota(limit.limit, limit.windowMs);
    case 'token-bucket':
      return rateQuota(limit.refillPerSecond, limit.capacity);
    case 'gcra':
      return rateQuota(limit.rate, limit.burst + 1);
    case 'leaky-bucket':
      return rateQuota(limit.rate, limit.capacity);
    case 'concurrency':
      return undefined;
  }
}

/**
 * Small, strict parsers for the scalar values rate-limit headers carry. Each returns `undefined`
 * for anything it cannot trust; none throws.
 *
 * @module
 */
import { parseRfc3339 } from './dates.js';

/**
 * The longest delay, in milliseconds, any parser reports: 366 days. A longer value (a hostile
 * `Retry-After: 99999999999`) is clamped to it, so it still reads as "a very long time" while all
 * arithmetic on it stays finite and exact.
 */
export const MAX_DELAY_MS = 366 * 24 * 60 * 60 * 1000;

/** Clamps a delay in milliseconds to [0, {@link MAX_DELAY_MS}]; NaN becomes `undefined`. */
export function clampDelay(ms: number): number | undefined {
  if (Number.isNaN(ms)) return undefined;
  return Math.min(MAX_DELAY_MS, Math.max(0, ms));
}

const DECIMAL = /^\d+(?:\.\d+)?$/;

/**
 * Which way {@link parseCount} rounds a fractional count. A client must never believe more quota
 * is left than there is, so a count of what is left (`limit`, `remaining`) rounds down, and a count
 * of what is spent (`used`) rounds up.
 */
export type CountRounding = 'floor' | 'ceil';

/**
 * A non-negative count (a limit, a remaining or a used quota) in quota units.
 *
 * - An integer (`597`) or a decimal (`597.0`, `596.5`, as Reddit sends): a decimal with only zeros
 *   after the point is that integer; a fractional one is rounded as `rounding` says (down by
 *   default, see {@link CountRounding}), never dropped.
 * - Signs, exponents, hex, a bare point (`5.`, `.5`) and values beyond `Number.MAX_SAFE_INTEGER`
 *   give `undefined`.
 */
export function parseCount(
  value: string | undefined,
  rounding: CountRounding = 'floor',
): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (!DECIMAL.test(text)) return undefined;
  const n = rounding === 'floor' ? Math.floor(Number(text)) : Math.ceil(Number(text));
  return Number.isSafeInteger(n) ? n : undefined;
}

/** A non-negative decimal number (`12`, `1.5`). Rejects signs, exponents and empty strings. */
export function parseDecimal(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  return DECIMAL.test(text) ? Number(text) : undefined;
}

/** Non-negative seconds, integer or decimal, as milliseconds (rounded up, clamped). */
export function parseSecondsToMs(value: string | undefined): number | undefined {
  const seconds = parseDecimal(value);
  return seconds === undefined ? undefined : clampDelay(Math.ceil(seconds * 1000));
}

/** Non-negative milliseconds, integer or decimal (rounded up, clamped). */
export function parseMillis(value: string | undefined): number | undefined {
  const ms = parseDecimal(value);
  return ms === undefined ? undefined : clampDelay(Math.ceil(ms));
}

const DURATION_PART = /(\d+(?:\.\d+)?)(h|ms|m|s|us|µs|ns)/y;
const UNIT_MS = new Map<string, number>([
  ['h', 3_600_000],
  ['m', 60_000],
  ['s', 1000],
  ['ms', 1],
  ['us', 0.001],
  ['µs', 0.001],
  ['ns', 0.000001],
]);

/**
 * A Go-style duration as OpenAI sends in `x-ratelimit-reset-*`: `1s`, `6m0s`, `20ms`,
 * `1m30.5s`, `1h2m`. Returns milliseconds (rounded up), clamped to {@link MAX_DELAY_MS}; a value
 * with anything but number-unit pairs is rejected.
 */
export function parseDurationMs(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (text === '') return undefined;
  let total = 0;
  DURATION_PART.lastIndex = 0;
  while (DURATION_PART.lastIndex < text.length) {
    const match = DURATION_PART.exec(text);
    if (!match) return undefined;
    total += Number(match[1]) * (UNIT_MS.get(match[2] as string) as number);
  }
  return clampDelay(Math.ceil(total));
}

/**
 * Values at or above this are epoch milliseconds (1e12 ms is September 2001). Between
 * {@link EPOCH_SECONDS_FLOOR} and this they are epoch seconds; below, delta seconds.
 */
export const EPOCH_MS_FLOOR = 1e12;
/** Values at or above this (1e9 s, September 2001) are epoch seconds; a 31-year delta is not. */
export const EPOCH_SECONDS_FLOOR = 1e9;

/**
 * A reset time in any of the forms `X-RateLimit-Reset` is seen with, as milliseconds from `now`:
 *
 * - a duration with units (`1s`, `6m0s`, `20ms`): a delta;
 * - a number (integer or decimal) below 1e9: delta seconds;
 * - a number from 1e9 up to 1e12: epoch seconds (Unix time, as GitHub and Discord send);
 * - a number from 1e12: epoch milliseconds;
 * - an RFC 3339 / ISO 8601 timestamp with a zone (`2026-11-30T12:00:05.25Z`, Mastodon; or without
 *   seconds, `2026-11-30T12:01Z`, Jira Cloud), see {@link parseRfc3339}.
 *
 * The boundaries sit in 2001: no real delta is 31 years long, and no real epoch timestamp is older
 * than that, so the magnitude decides without ambiguity. An epoch in the past gives 0; every
 * result is clamped to [0, {@link MAX_DELAY_MS}].
 *
 * @param now epoch milliseconds the result is relative to (use the server's `Date` to cancel
 *   clock skew).
 */
export function parseResetMs(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (!DECIMAL.test(text)) {
    const duration = parseDurationMs(text);
    if (duration !== undefined) return duration;
    const at = parseRfc3339(text);
    return at === undefined ? undefined : clampDelay(Math.ceil(at - now));
  }
  const n = Number(text);
  if (n >= EPOCH_MS_FLOOR) return clampDelay(Math.ceil(n - now));
  if (n >= EPOCH_SECONDS_FLOOR) return clampDelay(Math.ceil(n * 1000 - now));
  return clampDelay(Math.ceil(n * 1000));
}

/**
 * Reads a header value that may have been sent more than once. `Headers.get()` joins repeated
 * fields with `", "`; each part is parsed, and the value is kept only when every part parses to the
 * same number. Disagreeing duplicates cannot be trusted and give `undefined`.
 */
export function parseRepeated(
  value: string | undefined,
  parse: (part: string) => number | undefined,
): number | undefined {
  if (value === undefined) return undefined;
  if (!value.includes(',')) return parse(value);
  let result: number | undefined;
  for (const part of value.split(',')) {
    const n = parse(part);
    if (n === undefined || (result !== undefined && n !== result)) return undefined;
    result = n;
  }
  return result;
}

import { parseHttpDate } from './dates.js';
import { clampDelay, parseMillis, parseRepeated, parseSecondsToMs } from './values.js';

/** Options of {@link parseRetryAfter}. */
export interface ParseRetryAfterOptions {
  /**
   * The moment the result is relative to, in epoch milliseconds. For an HTTP-date, pass the
   * server's `Date` to cancel clock skew between client and server.
   * @default Date.now()
   */
  now?: number;
}

const IMF_FIXDATE_GLOBAL =
  /(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}:\d{2} GMT/g;

/**
 * Parses a `Retry-After` value (RFC 9110 §10.2.3) into milliseconds from `now`.
 *
 * Accepted forms:
 * - delay-seconds: `120`; a decimal such as `1.5` (Shopify sends `2.0`) is accepted too and
 *   rounded up to the millisecond;
 * - an HTTP-date in IMF-fixdate, RFC 850 or asctime format; a date in the past gives `0`.
 *
 * Rules for values that cannot be trusted:
 * - anything else (negative numbers, `NaN`, exponents, units, garbage) gives `undefined`;
 * - a field sent twice (joined as `"120, 120"`) is kept only when both copies agree;
 *   disagreeing copies give `undefined`;
 * - delays longer than {@link MAX_DELAY_MS} (366 days) are clamped to it.
 *
 * The result is never negative, `NaN` or infinite.
 *
 * @example parseRetryAfter('120') // 120000
 * @example parseRetryAfter('Wed, 21 Oct 2015 07:28:00 GMT', { now: Date.UTC(2015, 9, 21, 7, 27, 0) }) // 60000
 */
export function parseRetryAfter(
  value: string | null | undefined,
  options: ParseRetryAfterOptions = {},
): number | undefined {
  if (typeof value !== 'string') return undefined;
  const now = options.now ?? Date.now();
  if (!Number.isFinite(now)) return undefined;
  const text = value.trim();
  if (text === '') return undefined;

  const seconds = parseRepeated(text, parseSecondsToMs);
  if (seconds !== undefined) return seconds;

  const date = parseHttpDate(text, now);
  if (date !== undefined) return clampDelay(date - now);

  // The same IMF-fixdate sent twice is joined with ", ", which a date also contains.
  const dates = text.match(IMF_FIXDATE_GLOBAL);
  if (
    dates &&
    dates.length > 1 &&
    dates.join(', ') === text &&
    dates.every((d) => d === dates[0])
  ) {
    const once = parseHttpDate(dates[0] as string, now);
    return once === undefined ? undefined : clampDelay(once - now);
  }
  return undefined;
}

/**
 * Parses a millisecond retry hint (`retry-after-ms`, `x-ms-retry-after-ms`, as Azure sends).
 * Same rules as {@link parseRetryAfter}, for integer or decimal milliseconds.
 */
export function parseRetryAfterMs(value: string | null | undefined): number | undefined {
  if (typeof value !== 'string') return undefined;
  return parseRepeated(value, parseMillis);
}

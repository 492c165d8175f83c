/**
 * Strict date parsers for HTTP-date (RFC 9110 §5.6.7, all three formats) and RFC 3339
 * timestamps. `Date.parse` is not used: it accepts far more than the grammars allow and differs
 * between runtimes.
 *
 * @module
 */

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const MONTH = `(${MONTHS.join('|')})`;
const TIME = '(\\d{2}):(\\d{2}):(\\d{2})';

/** `Sun, 06 Nov 1994 08:49:37 GMT` */
const IMF_FIXDATE = new RegExp(
  `^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), (\\d{2}) ${MONTH} (\\d{4}) ${TIME} GMT$`,
);
/** `Sunday, 06-Nov-94 08:49:37 GMT` (obsolete RFC 850 format) */
const RFC850_DATE = new RegExp(
  `^(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), (\\d{2})-${MONTH}-(\\d{2}) ${TIME} GMT$`,
);
/** `Sun Nov  6 08:49:37 1994` (obsolete ANSI C asctime format) */
const ASCTIME_DATE = new RegExp(
  `^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) ${MONTH} ( \\d|\\d{2}) ${TIME} (\\d{4})$`,
);

/** Builds a UTC timestamp, or `undefined` when a field is out of range (Feb 30, 25:00, ...). */
function utc(
  year: number,
  month: number,
  day: number,
  hour: number,
  minute: number,
  second: number,
): number | undefined {
  // A leap second (:60) is accepted and read as the last second of the minute.
  const sec = second === 60 ? 59 : second;
  if (hour > 23 || minute > 59 || sec > 59 || day < 1) return undefined;
  const ms = Date.UTC(year, month, day, hour, minute, sec);
  const check = new Date(ms);
  if (check.getUTCMonth() !== month || check.getUTCDate() !== day) return undefined;
  return ms;
}

/** The last IMF-fixdate {@link parseHttpDate} parsed, and its value (epoch ms or undefined). */
let lastText: string | undefined;
let lastMs: number | undefined;

/**
 * Parses an HTTP-date in any of its three formats into epoch milliseconds.
 *
 * - The day-of-week is checked for spelling but not against the date (the date is unambiguous
 *   without it, and sloppy servers get it wrong).
 * - An RFC 850 two-digit year is read as RFC 9110 requires: a year that would be more than 50 years
 *   after `now` is taken as the most recent past year with the same last two digits.
 *
 * @param now epoch milliseconds, used only for two-digit years.
 * @returns epoch milliseconds, or `undefined` when the value is not a valid HTTP-date.
 */
export function parseHttpDate(value: string, now: number): number | undefined {
  const text = value.trim();
  // A server's `Date` changes once a second: the last IMF-fixdate parsed (which does not depend on
  // `now`) is kept with its value.
  if (text === lastText) return lastMs;
  let m = IMF_FIXDATE.exec(text);
  if (m) {
    lastMs = utc(
      Number(m[3]),
      MONTHS.indexOf(m[2] as string),
      Number(m[1]),
      Number(m[4]),
      Number(m[5]),
      Number(m[6]),
    );
    lastText = text;
    return lastMs;
  }
  m = RFC850_DATE.exec(text);
  if (m) {
    const nowYear = new Date(now).getUTCFullYear();
    let year = Math.floor(nowYear / 100) * 100 + Number(m[3]);
    if (year > nowYear + 50) year -= 100;
    return utc(
      year,
      MONTHS.indexOf(m[2] as string),
      Number(m[1]),
      Number(m[4]),
      Number(m[5]),
      Number(m[6]),
    );
  }
  m = ASCTIME_DATE.exec(text);
  if (m) {
    return utc(
      Number(m[6]),
      MONTHS.indexOf(m[1] as string),
      Number((m[2] as string).trim()),
      Number(m[3]),
      Number(m[4]),
      Number(m[5]),
    );
  }
  return undefined;
}

const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/**
 * Parses an RFC 3339 timestamp (`2026-11-30T12:00:05Z`, `2026-11-30T13:00:05.250+01:00`) into
 * epoch milliseconds. The seconds may be left out, as ISO 8601 allows and Jira Cloud sends
 * (`2026-11-30T12:01Z`, read as `:00`). A timestamp without an offset is rejected: its zone would
 * be a guess.
 */
export function parseRfc3339(value: string): number | undefined {
  const m = RFC3339.exec(value.trim());
  if (!m) return undefined;
  const base = utc(
    Number(m[1]),
    Number(m[2]) - 1,
    Number(m[3]),
    Number(m[4]),
    Number(m[5]),
    Number(m[6] ?? 0),
  );
  if (base === undefined) return undefined;
  const fraction = m[7] ? Number(`0.${m[7]}`) * 1000 : 0;
  if (m[8]) return base + fraction;
  const offsetHours = Number(m[10]);
  const offsetMinutes = Number(m[11]);
  if (offsetHours > 23 || offsetMinutes > 59) return undefined;
  const sign = m[9] === '-' ? -1 : 1;
  return base + fraction - sign * (offsetHours * 60 + offsetMinutes) * 60_000;
}

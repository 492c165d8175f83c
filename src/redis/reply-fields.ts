/**
 * A limiter function's reply (`'<status> <seconds> <micros> <fields...>'`, see `lua/common.ts`)
 * read as numbers in one pass, without splitting it into strings first.
 *
 * @module
 */

/** Fields of up to this many digits are read digit by digit: below 2^53, so exactly. */
const EXACT_DIGITS = 15;

/**
 * Reads the space-separated fields of `text` into `into` as numbers, and returns how many there
 * are (`into.length` is set to it). Each field is `Number(field)`, read digit by digit when it is
 * an optional `-` and 1 to 15 digits (the same number: exact below 2^53), by `Number()` otherwise;
 * except an empty field (`''`, as in `'0 <s> <us> '` for a fresh key), which is `NaN` (where
 * `Number('')` would be 0). A status such as `late` or `ok` reads as `NaN`: tell it apart by the
 * text (see {@link statusOf}).
 */
export function readFields(text: string, into: number[]): number {
  const length = text.length;
  let count = 0;
  let start = 0;
  let value = 0;
  // Digits read so far in this field; -1 once it holds anything else.
  let digits = 0;
  let negative = false;
  for (let i = 0; i <= length; i++) {
    const code = i < length ? text.charCodeAt(i) : 32;
    if (code === 32) {
      if (i === start) into[count] = Number.NaN;
      else if (digits > 0 && digits <= EXACT_DIGITS) into[count] = negative ? -value : value;
      else into[count] = Number(text.slice(start, i));
      count += 1;
      start = i + 1;
      value = 0;
      digits = 0;
      negative = false;
    } else if (digits >= 0 && code >= 48 && code <= 57) {
      value = value * 10 + (code - 48);
      digits += 1;
    } else if (code === 45 && i === start) {
      negative = true;
    } else {
      digits = -1;
    }
  }
  into.length = count;
  return count;
}

/** A reply's status: its first field, as text (`'1'`, `'0'`, `'late'`, `'ok'`). */
export function statusOf(text: string): string {
  const end = text.indexOf(' ');
  return end < 0 ? text : text.slice(0, end);
}

/**
 * `readFields`: a limiter function's reply read as numbers in one pass, each field the number
 * `Number()` gives (an empty field NaN), whether it is read digit by digit or not.
 */
import { describe, expect, it } from 'vitest';
import { readFields } from '../../src/redis/reply-fields.js';

function read(text: string): number[] {
  const into = [7, 7, 7, 7, 7, 7, 7, 7, 7, 7];
  const count = readFields(text, into);
  expect(into).toHaveLength(count);
  return into;
}

describe('readFields', () => {
  it('reads every field as Number() does', () => {
    const text = '1 1796158886 5123 -3 0 -0 007 1796158886333.3333 1e+21 0.1 nan';
    const expected = text.split(' ').map(Number);
    const fields = read(text);
    expect(fields).toEqual(expected);
    expect(Object.is(fields[5], -0)).toBe(true);
  });

  it('reads 15 digits by hand and 16 by Number(), both exactly', () => {
    for (const text of [
      '999999999999999',
      '-999999999999999',
      '9007199254740993',
      '1234567890123456',
    ]) {
      expect(read(`0 ${text}`)).toEqual([0, Number(text)]);
    }
  });

  it('reads an empty field (a fresh key, no receipt) as NaN, and a status word as NaN', () => {
    expect(read('0 1796158886 5123 ')).toEqual([0, 1796158886, 5123, Number.NaN]);
    expect(read('1 1 2 3 4 5 6 ')).toEqual([1, 1, 2, 3, 4, 5, 6, Number.NaN]);
    expect(read('late 1796158886 5123')).toEqual([Number.NaN, 1796158886, 5123]);
    expect(read('ok')).toEqual([Number.NaN]);
    expect(read('')).toEqual([Number.NaN]);
    expect(read('-')).toEqual([Number.NaN]);
  });
});

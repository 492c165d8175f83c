import { describe, expect, it } from 'vitest';
import { MAX_DELAY_MS, parseRetryAfter } from '../../src/index.js';

const NOW = Date.UTC(2026, 10, 30, 12, 0, 0); // Mon, 30 Nov 2026 12:00:00 GMT

describe('parseRetryAfter: delay-seconds (RFC 9110 §10.2.3)', () => {
  it('reads whole seconds as milliseconds', () => {
    expect(parseRetryAfter('120', { now: NOW })).toBe(120_000);
    expect(parseRetryAfter('0', { now: NOW })).toBe(0);
    expect(parseRetryAfter('  7 ', { now: NOW })).toBe(7000);
  });

  it('accepts decimal seconds (Shopify sends "2.0") and rounds up to the millisecond', () => {
    expect(parseRetryAfter('2.0', { now: NOW })).toBe(2000);
    expect(parseRetryAfter('1.0005', { now: NOW })).toBe(1001);
  });

  it('keeps a repeated field whose copies agree, drops one whose copies disagree', () => {
    expect(parseRetryAfter('120, 120', { now: NOW })).toBe(120_000);
    expect(parseRetryAfter('120, 5', { now: NOW })).toBeUndefined();
  });

  it('clamps an enormous delay to MAX_DELAY_MS instead of overflowing', () => {
    expect(parseRetryAfter('99999999999999999999999', { now: NOW })).toBe(MAX_DELAY_MS);
  });

  it.each([
    ['-1'],
    ['-0'],
    ['+5'],
    ['1e3'],
    ['0x10'],
    ['NaN'],
    ['Infinity'],
    ['5s'],
    [''],
    ['   '],
    ['.5'],
    ['5.'],
    ['soon'],
  ])('rejects %j', (value) => {
    expect(parseRetryAfter(value, { now: NOW })).toBeUndefined();
  });

  it('returns undefined for a missing value', () => {
    expect(parseRetryAfter(undefined)).toBeUndefined();
    expect(parseRetryAfter(null)).toBeUndefined();
  });
});

describe('parseRetryAfter: HTTP-date, all three formats of RFC 9110 §5.6.7', () => {
  const base = Date.UTC(1994, 10, 6, 8, 49, 0); // 37 s before the RFC's example date

  it('IMF-fixdate', () => {
    expect(parseRetryAfter('Sun, 06 Nov 1994 08:49:37 GMT', { now: base })).toBe(37_000);
  });

  it('obsolete RFC 850 format', () => {
    expect(parseRetryAfter('Sunday, 06-Nov-94 08:49:37 GMT', { now: base })).toBe(37_000);
  });

  it('obsolete asctime format', () => {
    expect(parseRetryAfter('Sun Nov  6 08:49:37 1994', { now: base })).toBe(37_000);
  });

  it('reads an RFC 850 two-digit year more than 50 years ahead as the past century', () => {
    const now = Date.UTC(2026, 0, 1);
    // "80": 2080 would be 54 years ahead, so it is 1980, in the past.
    expect(parseRetryAfter('Monday, 01-Jan-80 00:00:00 GMT', { now })).toBe(0);
    // "70": 2070 is 44 years ahead, not more than 50, so it stays 2070 (clamped as a long delay).
    expect(parseRetryAfter('Tuesday, 01-Jan-70 00:00:10 GMT', { now })).toBe(MAX_DELAY_MS);
    expect(parseRetryAfter('Friday, 01-Jan-27 00:00:10 GMT', { now })).toBe(
      Date.UTC(2027, 0, 1, 0, 0, 10) - now,
    );
  });

  it('gives 0 for a date in the past', () => {
    expect(parseRetryAfter('Sun, 06 Nov 1994 08:49:37 GMT', { now: NOW })).toBe(0);
  });

  it('keeps the same date sent twice', () => {
    const d = 'Mon, 30 Nov 2026 12:00:30 GMT';
    expect(parseRetryAfter(`${d}, ${d}`, { now: NOW })).toBe(30_000);
    expect(parseRetryAfter(`${d}, Mon, 30 Nov 2026 12:00:31 GMT`, { now: NOW })).toBeUndefined();
  });

  it.each([
    ['Mon, 31 Nov 2026 12:00:00 GMT'], // November has 30 days
    ['Mon, 30 Nov 2026 24:00:00 GMT'],
    ['Mon, 30 Nov 2026 12:60:00 GMT'],
    ['Mon, 30 Nov 2026 12:00:00 UTC'],
    ['Mon, 30 Nov 2026 12:00:00 +0000'],
    ['Mon 30 Nov 2026 12:00:00 GMT'],
    ['mon, 30 nov 2026 12:00:00 gmt'],
    ['2026-11-30T12:00:30Z'],
  ])('rejects the malformed date %j', (value) => {
    expect(parseRetryAfter(value, { now: NOW })).toBeUndefined();
  });
});

import { describe, expect, it } from 'vitest';
import { parseResetMs } from '../../src/headers/values.js';
import { MAX_DELAY_MS, parseRateLimitHeaders } from '../../src/index.js';

const NOW = Date.UTC(2026, 10, 30, 12, 0, 0);

describe('X-RateLimit-Limit / -Remaining / -Reset', () => {
  it('reads the three fields', () => {
    expect(
      parseRateLimitHeaders(
        { 'X-RateLimit-Limit': '100', 'X-RateLimit-Remaining': '0', 'X-RateLimit-Reset': '30' },
        { now: NOW },
      ),
    ).toEqual({
      source: 'x-ratelimit',
      limit: 100,
      remaining: 0,
      resetMs: 30_000,
      policies: [{ limit: 100, remaining: 0, resetMs: 30_000 }],
    });
  });

  it('accepts a plain object with array values and any case, and a Headers object', () => {
    const fromObject = parseRateLimitHeaders({ 'x-RateLimit-remaining': ['5', '5'] }, { now: NOW });
    const fromHeaders = parseRateLimitHeaders(new Headers({ 'X-RateLimit-Remaining': '5' }), {
      now: NOW,
    });
    expect(fromObject).toEqual(fromHeaders);
    expect(fromHeaders?.remaining).toBe(5);
  });

  it('drops duplicated fields that disagree', () => {
    const headers = new Headers();
    headers.append('X-RateLimit-Remaining', '5');
    headers.append('X-RateLimit-Remaining', '6');
    headers.append('X-RateLimit-Limit', '10');
    expect(parseRateLimitHeaders(headers, { now: NOW })?.policies).toEqual([{ limit: 10 }]);
  });

  it('converts an epoch reset against the server Date, cancelling client clock skew', () => {
    const serverNow = NOW + 90_000; // the client clock is 90 s behind the server's
    const date = new Date(serverNow).toUTCString();
    const info = parseRateLimitHeaders(
      {
        Date: date,
        'X-RateLimit-Remaining': '0',
        'X-RateLimit-Reset': String(serverNow / 1000 + 10),
      },
      { now: NOW },
    );
    expect(info?.resetMs).toBe(10_000);
  });

  it('reads against now, to the millisecond, while Date agrees with it (truncated, in transit)', () => {
    // Stamped 300 ms before the client parsed; truncated to the second, Date reads 1 s behind.
    const date = new Date(NOW - 300).toUTCString();
    const info = parseRateLimitHeaders(
      {
        Date: date,
        'X-RateLimit-Remaining': '0',
        'X-RateLimit-Reset': String((NOW + 2500) / 1000),
      },
      { now: NOW },
    );
    expect(info?.resetMs).toBe(2500);
  });

  it('reads against Date once it lags now by more than its resolution explains, or leads it', () => {
    const reset = String((NOW + 10_000) / 1000);
    const lagging = new Date(NOW - 5000).toUTCString(); // the client clock is ~5 s ahead
    const leading = new Date(NOW + 3000).toUTCString(); // the client clock is ~3 s behind
    const read = (date: string) =>
      parseRateLimitHeaders({ Date: date, 'X-RateLimit-Reset': reset }, { now: NOW })?.resetMs;
    expect(read(lagging)).toBe(15_000);
    expect(read(leading)).toBe(7000);
  });

  it('falls back to now when Date is malformed', () => {
    const info = parseRateLimitHeaders(
      { Date: 'yesterday', 'X-RateLimit-Reset': String(NOW / 1000 + 10) },
      { now: NOW },
    );
    expect(info?.resetMs).toBe(10_000);
  });
});

describe('parseResetMs: delta versus epoch, decided by magnitude', () => {
  it.each([
    ['0', 0],
    ['30', 30_000],
    ['1.5', 1500],
    ['999999999', MAX_DELAY_MS], // below 1e9: delta seconds (31 years, clamped)
    [String(NOW / 1000 + 60), 60_000], // epoch seconds
    [String(NOW / 1000 - 60), 0], // epoch seconds in the past
    [String(NOW + 2500), 2500], // epoch milliseconds
    ['1s', 1000],
    ['6m0s', 360_000],
    ['20ms', 20],
    ['1m30.5s', 90_500],
    ['1h', 3_600_000],
    ['500us', 1],
  ])('%s -> %d ms', (value, expected) => {
    expect(parseResetMs(value, NOW)).toBe(expected);
  });

  it.each([['-5'], ['abc'], ['1x'], ['s'], ['1s2'], [''], ['1e10'], ['Infinity']])(
    'rejects %j',
    (value) => {
      expect(parseResetMs(value, NOW)).toBeUndefined();
    },
  );
});

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

describe('decimal counts', () => {
  it('reads Reddit-style counts: 597.0 and 0.0 are the integers 597 and 0', () => {
    expect(
      parseRateLimitHeaders(
        { 'x-ratelimit-remaining': '597.0', 'x-ratelimit-used': '3', 'x-ratelimit-reset': '33' },
        { now: NOW },
      ),
    ).toEqual({
      source: 'x-ratelimit',
      limit: 600,
      remaining: 597,
      resetMs: 33_000,
      policies: [{ limit: 600, remaining: 597, resetMs: 33_000 }],
    });
    expect(
      parseRateLimitHeaders(
        { 'x-ratelimit-remaining': '0.0', 'x-ratelimit-used': '600', 'x-ratelimit-reset': '12' },
        { now: NOW },
      ),
    ).toMatchObject({ limit: 600, remaining: 0, resetMs: 12_000 });
  });

  it('rounds a fractional remaining or limit down and a fractional used up, keeping the policy', () => {
    expect(
      parseRateLimitHeaders(
        { 'X-RateLimit-Limit': '100.9', 'X-RateLimit-Remaining': '4.99', 'X-RateLimit-Reset': '5' },
        { now: NOW },
      )?.policies,
    ).toEqual([{ limit: 100, remaining: 4, resetMs: 5000 }]);
    // 595.5 left and 4.5 used: at most 595 left, at least 5 spent, a limit of 600.
    expect(
      parseRateLimitHeaders(
        { 'x-ratelimit-remaining': '595.5', 'x-ratelimit-used': '4.5' },
        { now: NOW },
      )?.policies,
    ).toEqual([{ limit: 600, remaining: 595 }]);
    // Below one unit left is nothing left.
    expect(parseRateLimitHeaders({ 'X-RateLimit-Remaining': '0.5' }, { now: NOW })?.remaining).toBe(
      0,
    );
  });

  it('accepts decimals in the draft-6 fields and the providers that count', () => {
    expect(
      parseRateLimitHeaders(
        { 'RateLimit-Limit': '10.0', 'RateLimit-Remaining': '2.5', 'RateLimit-Reset': '1' },
        { now: NOW },
      )?.policies,
    ).toEqual([{ limit: 10, remaining: 2, resetMs: 1000 }]);
  });

  it.each([['-1.0'], ['1e3'], ['5.'], ['.5'], ['0x10'], ['1,5.0'], [`${'9'.repeat(20)}.0`]])(
    'still drops %j',
    (value) => {
      expect(
        parseRateLimitHeaders(
          { 'X-RateLimit-Remaining': value, 'X-RateLimit-Limit': '10' },
          { now: NOW },
        )?.policies,
      ).toEqual([{ limit: 10 }]);
    },
  );
});

describe('x-ratelimit-used', () => {
  it('derives the limit from remaining + used when no limit is sent', () => {
    expect(
      parseRateLimitHeaders(
        { 'x-ratelimit-remaining': '586', 'x-ratelimit-used': '14' },
        { now: NOW },
      )?.limit,
    ).toBe(600);
  });

  it('derives remaining from limit - used when no remaining is sent', () => {
    expect(
      parseRateLimitHeaders({ 'x-ratelimit-limit': '60', 'x-ratelimit-used': '4' }, { now: NOW })
        ?.remaining,
    ).toBe(56);
  });

  it('keeps remaining when the three counts agree', () => {
    expect(
      parseRateLimitHeaders(
        { 'x-ratelimit-limit': '60', 'x-ratelimit-remaining': '56', 'x-ratelimit-used': '4' },
        { now: NOW },
      )?.policies,
    ).toEqual([{ limit: 60, remaining: 56 }]);
  });

  it('on disagreement believes the smaller remaining: never more left than limit - used', () => {
    const read = (remaining: string, used: string) =>
      parseRateLimitHeaders(
        { 'x-ratelimit-limit': '60', 'x-ratelimit-remaining': remaining, 'x-ratelimit-used': used },
        { now: NOW },
      )?.remaining;
    expect(read('56', '10')).toBe(50); // remaining overstated: limit - used wins
    expect(read('40', '4')).toBe(40); // used understated: the reported remaining wins
    expect(read('5', '67')).toBe(0); // used past the limit: nothing left
  });

  it('leaves the limit unknown when remaining + used overflows', () => {
    const big = String(Number.MAX_SAFE_INTEGER);
    expect(
      parseRateLimitHeaders({ 'x-ratelimit-remaining': big, 'x-ratelimit-used': big }, { now: NOW })
        ?.policies,
    ).toEqual([{ remaining: Number.MAX_SAFE_INTEGER }]);
  });
});

describe('parseResetMs: timestamps', () => {
  it.each([
    ['2026-11-30T12:00:05.250Z', 5250],
    ['2026-11-30T12:01Z', 60_000], // ISO 8601 without seconds, as Jira Cloud sends
    ['2026-11-30T13:01+01:00', 60_000],
    ['2026-11-30T11:00:00Z', 0], // in the past
  ])('%s -> %d ms', (value, expected) => {
    expect(parseResetMs(value, NOW)).toBe(expected);
  });

  it.each([['2026-11-30T12:01'], ['2026-11-30'], ['2026-11-30T25:00Z'], ['2026-11-30T12:00:05.Z']])(
    'rejects %j',
    (value) => {
      expect(parseResetMs(value, NOW)).toBeUndefined();
    },
  );
});

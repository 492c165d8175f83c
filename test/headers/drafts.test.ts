import { describe, expect, it } from 'vitest';
import { parseRateLimitHeaders } from '../../src/index.js';

const NOW = Date.UTC(2026, 10, 30, 12, 0, 0);
const parse = (headers: Record<string, string>) => parseRateLimitHeaders(headers, { now: NOW });

describe('draft 7: combined RateLimit dictionary (express-rate-limit standardHeaders "draft-7")', () => {
  it('reads limit, remaining and reset, and the window from RateLimit-Policy', () => {
    expect(
      parse({ RateLimit: 'limit=100, remaining=50, reset=5', 'RateLimit-Policy': '100;w=60' }),
    ).toEqual({
      source: 'draft-7',
      limit: 100,
      remaining: 50,
      resetMs: 5000,
      windowMs: 60_000,
      policies: [{ limit: 100, remaining: 50, resetMs: 5000, windowMs: 60_000 }],
    });
  });

  it('works without RateLimit-Policy', () => {
    expect(parse({ RateLimit: 'limit=10, remaining=0, reset=1' })).toMatchObject({
      limit: 10,
      remaining: 0,
      resetMs: 1000,
    });
  });

  it('attaches the current numbers to the declared policy with the same limit', () => {
    const info = parse({
      RateLimit: 'limit=1000, remaining=3, reset=100',
      'RateLimit-Policy': '10;w=1, 1000;w=3600',
    });
    expect(info?.policies).toEqual([
      { limit: 1000, remaining: 3, resetMs: 100_000, windowMs: 3_600_000 },
      { limit: 10, windowMs: 1000 },
    ]);
  });

  it('ignores members of the wrong type', () => {
    expect(parse({ RateLimit: 'limit="100", remaining=-4, reset=2' })).toMatchObject({
      source: 'draft-7',
      resetMs: 2000,
    });
    expect(parse({ RateLimit: 'limit="100"' })).toBeUndefined();
  });
});

describe('draft 6: RateLimit-Limit / -Remaining / -Reset (express-rate-limit "draft-6")', () => {
  it('reads the three fields with the policy window', () => {
    expect(
      parse({
        'RateLimit-Policy': '100;w=60',
        'RateLimit-Limit': '100',
        'RateLimit-Remaining': '99',
        'RateLimit-Reset': '60',
      }),
    ).toMatchObject({
      source: 'draft-6',
      limit: 100,
      remaining: 99,
      resetMs: 60_000,
      windowMs: 60_000,
    });
  });

  it('reads the older RateLimit-Limit that lists the policies after the current limit', () => {
    const info = parse({
      'RateLimit-Limit': '10, 10;w=1, 1000;w=3600',
      'RateLimit-Remaining': '9',
      'RateLimit-Reset': '1',
    });
    expect(info?.policies).toEqual([
      { limit: 10, remaining: 9, resetMs: 1000, windowMs: 1000 },
      { limit: 1000, windowMs: 3_600_000 },
    ]);
  });

  it('reads a limit and a remaining that carry their window (Docker Hub)', () => {
    expect(
      parseRateLimitHeaders(
        { 'RateLimit-Limit': '100;w=21600', 'RateLimit-Remaining': '76;w=21600' },
        { now: NOW },
      )?.policies,
    ).toEqual([{ limit: 100, remaining: 76, windowMs: 21_600_000 }]);
    // Several windowed policies: the first is the current one.
    expect(
      parseRateLimitHeaders(
        { 'RateLimit-Limit': '10;w=1, 1000;w=3600', 'RateLimit-Remaining': '4;w=1' },
        { now: NOW },
      )?.policies,
    ).toEqual([
      { limit: 10, remaining: 4, windowMs: 1000 },
      { limit: 1000, windowMs: 3_600_000 },
    ]);
  });

  it('still drops a remaining repeated with different values, with or without a list', () => {
    expect(
      parseRateLimitHeaders(
        { 'RateLimit-Limit': '10', 'RateLimit-Remaining': '5, 6' },
        { now: NOW },
      )?.policies,
    ).toEqual([{ limit: 10 }]);
    expect(
      parseRateLimitHeaders(
        { 'RateLimit-Limit': '10', 'RateLimit-Remaining': '5;w=1, "x"' },
        { now: NOW },
      )?.policies,
    ).toEqual([{ limit: 10, remaining: 5 }]);
    expect(
      parseRateLimitHeaders(
        { 'RateLimit-Limit': '10', 'RateLimit-Remaining': '-5;w=1' },
        { now: NOW },
      )?.policies,
    ).toEqual([{ limit: 10 }]);
  });

  it('drops remaining above limit, keeps the rest', () => {
    expect(
      parse({ 'RateLimit-Limit': '10', 'RateLimit-Remaining': '11', 'RateLimit-Reset': '3' }),
    ).toEqual({
      source: 'draft-6',
      limit: 10,
      resetMs: 3000,
      policies: [{ limit: 10, resetMs: 3000 }],
    });
  });
});

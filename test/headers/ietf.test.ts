import { describe, expect, it } from 'vitest';
import { parseRateLimitHeaders } from '../../src/index.js';

const NOW = Date.UTC(2026, 10, 30, 12, 0, 0);
const parse = (headers: Record<string, string>) => parseRateLimitHeaders(headers, { now: NOW });

describe('IETF RateLimit / RateLimit-Policy (draft-ietf-httpapi-ratelimit-headers-10..12)', () => {
  it('reads the draft example "default";r=50;t=30', () => {
    expect(parse({ RateLimit: '"default";r=50;t=30' })).toEqual({
      source: 'ietf',
      policy: 'default',
      remaining: 50,
      resetMs: 30_000,
      policies: [{ name: 'default', remaining: 50, resetMs: 30_000 }],
    });
  });

  it('joins a declared policy with its current state by name', () => {
    const info = parse({
      'RateLimit-Policy': '"default";q=100;w=10',
      RateLimit: '"default";r=12;t=8',
    });
    expect(info).toMatchObject({ source: 'ietf', policy: 'default', limit: 100, remaining: 12 });
    expect(info?.windowMs).toBe(10_000);
    expect(info?.resetMs).toBe(8000);
  });

  it('keeps every policy and puts the most restrictive on top', () => {
    const info = parse({
      'RateLimit-Policy': '"permin";q=50;w=60,"perhr";q=1000;w=3600',
      RateLimit: '"permin";r=40;t=20, "perhr";r=10;t=1800',
    });
    expect(info?.policies.map((p) => p.name)).toEqual(['perhr', 'permin']);
    expect(info).toMatchObject({ policy: 'perhr', limit: 1000, remaining: 10, resetMs: 1_800_000 });
  });

  it('ranks an exhausted policy first, even against a smaller fraction elsewhere', () => {
    const info = parse({
      'RateLimit-Policy': '"a";q=10;w=1, "b";q=1000;w=86400',
      RateLimit: '"a";r=1;t=1, "b";r=0;t=600',
    });
    expect(info?.policy).toBe('b');
  });

  it('reads fields split over several lines (joined by Headers)', () => {
    const headers = new Headers();
    headers.append('RateLimit-Policy', '"burst";q=100;w=60');
    headers.append('RateLimit-Policy', '"daily";q=1000;w=86400');
    headers.append('RateLimit', '"daily";r=999;t=80000');
    const info = parseRateLimitHeaders(headers, { now: NOW });
    expect(info?.policies).toHaveLength(2);
    expect(info?.policies.find((p) => p.name === 'daily')).toMatchObject({
      limit: 1000,
      remaining: 999,
    });
  });

  it('reads quota units and partition keys', () => {
    const info = parse({
      'RateLimit-Policy': '"peruser";q=65535;qu="content-bytes";w=10;pk=:c2RmamxqdW91aA==:',
      RateLimit: '"peruser";r=300;t=5',
    });
    expect(info?.policies[0]).toEqual({
      name: 'peruser',
      limit: 65535,
      remaining: 300,
      resetMs: 5000,
      windowMs: 10_000,
      unit: 'content-bytes',
      partitionKey: 'c2RmamxqdW91aA==',
    });
  });

  it('accepts a token as the policy name', () => {
    expect(parse({ RateLimit: 'default;r=1;t=2' })?.policy).toBe('default');
  });

  it('ignores a malformed field whole, as the draft requires', () => {
    // Single quotes are not Structured Field syntax.
    expect(parse({ RateLimit: "'default';r=12;t=8" })).toBeUndefined();
    expect(parse({ 'RateLimit-Policy': '"x";q=10,,' })).toBeUndefined();
  });

  it('ignores items without their required parameter or with a wrong type', () => {
    const info = parse({
      'RateLimit-Policy': '"noq";w=60, "neg";q=-1, "dec";q=1.5, "ok";q=5',
      RateLimit: '"nor";t=5, "str";r="5", "ok";r=2',
    });
    expect(info?.policies).toEqual([{ name: 'ok', limit: 5, remaining: 2 }]);
  });

  it('drops a remaining count above its own limit, keeping the limit', () => {
    const info = parse({ 'RateLimit-Policy': '"p";q=10;w=1', RateLimit: '"p";r=50;t=1' });
    expect(info?.policies).toEqual([{ name: 'p', limit: 10, windowMs: 1000, resetMs: 1000 }]);
  });

  it('ignores a zero window (w must be positive)', () => {
    expect(parse({ 'RateLimit-Policy': '"p";q=10;w=0' })?.windowMs).toBeUndefined();
  });

  it('takes the first of two items with the same name', () => {
    expect(parse({ RateLimit: '"p";r=1;t=1, "p";r=9;t=9' })?.remaining).toBe(1);
  });

  it('lets Retry-After ride along as retryAfterMs', () => {
    expect(parse({ RateLimit: '"p";r=0;t=8', 'Retry-After': '10' })).toMatchObject({
      remaining: 0,
      resetMs: 8000,
      retryAfterMs: 10_000,
    });
  });

  it('prefers the IETF fields over legacy X-RateLimit-* sent alongside', () => {
    const info = parse({
      RateLimit: '"p";r=3;t=4',
      'X-RateLimit-Limit': '100',
      'X-RateLimit-Remaining': '99',
    });
    expect(info?.source).toBe('ietf');
    expect(info?.policies).toHaveLength(1);
  });
});

describe('the last RateLimit-Policy and Date parsed are kept (one entry each)', () => {
  const policyA = '"a";q=100;w=60';
  const policyB = '"b";q=5;w=1';
  const dateA = 'Mon, 30 Nov 2026 12:00:10 GMT';
  const dateB = 'Mon, 30 Nov 2026 11:59:50 GMT';
  const read = (policy: string, date: string) =>
    parse({ 'RateLimit-Policy': policy, RateLimit: '"a";r=7;t=30,"b";r=2;t=1', Date: date });

  it('answers each value as if it were parsed fresh, whatever came before', () => {
    const first = read(policyA, dateA);
    const other = read(policyB, dateB);
    const again = read(policyA, dateA);
    expect(first).toMatchObject({ policy: 'a', limit: 100, remaining: 7 });
    expect(other).toMatchObject({ policy: 'b', limit: 5, remaining: 2 });
    expect(again).toEqual(first);
    // A Retry-After date is read against the server's clock (its Date): 10 s ahead, 10 s behind.
    const until = (date: string) =>
      parse({ 'Retry-After': 'Mon, 30 Nov 2026 12:01:00 GMT', Date: date })?.retryAfterMs;
    expect([until(dateA), until(dateB), until(dateA)]).toEqual([50_000, 70_000, 50_000]);
  });

  it('hands out policies that a caller may change without changing the next answer', () => {
    const first = read(policyA, dateA);
    (first?.policies[0] as { limit?: number }).limit = 1;
    expect(read(policyA, dateA)).toMatchObject({ limit: 100 });
  });
});

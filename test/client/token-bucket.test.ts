import { describe, expect, it } from 'vitest';
import { newBucket, takeTokens } from '../../src/client/policies/token-bucket.js';

describe('client token bucket', () => {
  const config = { rate: 2, burst: 5 };

  it('allows the burst, then says how long until the next unit', () => {
    const b = newBucket(config, 0);
    for (let i = 0; i < 5; i++) expect(takeTokens(b, 1, config, 0)).toBe(0);
    expect(takeTokens(b, 1, config, 0)).toBe(500);
    // 1.5 s later three units are back.
    expect(takeTokens(b, 3, config, 1500)).toBe(0);
    expect(takeTokens(b, 1, config, 1500)).toBe(500);
  });

  it('charges a cost, takes nothing when it cannot pay', () => {
    const b = newBucket(config, 0);
    expect(takeTokens(b, 4, config, 0)).toBe(0);
    expect(takeTokens(b, 3, config, 0)).toBe(1000);
    expect(b.tokens).toBe(1);
  });

  it('never refills past the burst, and a clock going back refills nothing', () => {
    const b = newBucket(config, 10_000);
    takeTokens(b, 5, config, 10_000);
    takeTokens(b, 0, config, 5_000);
    expect(b.tokens).toBe(0);
    takeTokens(b, 0, config, 1_000_000);
    expect(b.tokens).toBe(5);
  });

  it('reports an impossible cost as Infinity', () => {
    expect(takeTokens(newBucket(config, 0), 6, config, 0)).toBe(Number.POSITIVE_INFINITY);
  });
});

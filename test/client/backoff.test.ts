import { describe, expect, it } from 'vitest';
import { backoffCeiling, fullJitter, serverWait } from '../../src/client/retry/backoff.js';
import { seeded } from './helpers.js';

describe('backoffCeiling', () => {
  it('doubles from the base and stops at the cap', () => {
    expect([0, 1, 2, 3, 4].map((r) => backoffCeiling(r, 100, 1000))).toEqual([
      100, 200, 400, 800, 1000,
    ]);
  });
  it('stays finite for absurd retry counts', () => {
    expect(backoffCeiling(5000, 100, 1000)).toBe(1000);
  });
});

describe('fullJitter', () => {
  it('draws from [0, min(cap, base * 2^retry)] with the ends reachable', () => {
    expect(fullJitter(2, 100, 10_000, 0)).toBe(0);
    expect(fullJitter(2, 100, 10_000, 0.999_999_9)).toBe(400);
    expect(fullJitter(20, 100, 10_000, 0.999_999_9)).toBe(10_000);
  });

  it('is uniform: bounds hold and the mean is half the ceiling, per retry', () => {
    const random = seeded(7);
    for (const retry of [0, 1, 3, 6]) {
      const ceiling = backoffCeiling(retry, 100, 5000);
      const n = 20_000;
      let sum = 0;
      let min = Number.POSITIVE_INFINITY;
      let max = 0;
      for (let i = 0; i < n; i++) {
        const d = fullJitter(retry, 100, 5000, random());
        sum += d;
        min = Math.min(min, d);
        max = Math.max(max, d);
      }
      expect(min).toBeGreaterThanOrEqual(0);
      expect(max).toBeLessThanOrEqual(ceiling);
      // Mean of a uniform integer on [0, c] is c / 2; 20 000 draws put it within 2 %.
      expect(Math.abs(sum / n - ceiling / 2)).toBeLessThan(ceiling * 0.02);
      // Spread: both halves of the interval are used.
      expect(min).toBeLessThan(ceiling * 0.05);
      expect(max).toBeGreaterThan(ceiling * 0.95);
    }
  });
});

describe('serverWait', () => {
  const jitter = { ratio: 0.05, maxMs: 1000 };
  it('is never earlier than the server asked', () => {
    const random = seeded(3);
    for (let i = 0; i < 1000; i++) {
      const wait = Math.floor(random() * 100_000);
      const d = serverWait(wait, random(), jitter);
      expect(d).toBeGreaterThanOrEqual(wait);
      expect(d).toBeLessThanOrEqual(wait + Math.min(1000, wait * 0.05));
    }
  });
  it('caps the extra at maxMs and rounds fractional waits up', () => {
    expect(serverWait(60_000, 0.999_999, jitter)).toBe(60_999);
    expect(serverWait(1000.2, 0, jitter)).toBe(1001);
    expect(serverWait(-5, 0.5, jitter)).toBe(0);
  });
});

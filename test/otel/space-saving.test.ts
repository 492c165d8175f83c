/**
 * The heavy-hitters sketch against exact counts: 1,000,000 requests drawn from a Zipf(1.2)
 * distribution over 100,000 keys (a seeded generator: the same stream every run). The sketch,
 * with the mock server's capacity, keeps at most that many keys, finds the true top 10 in order,
 * and each estimate is within its documented bound: true <= count <= true + N / capacity.
 */
import { describe, expect, it } from 'vitest';
import { SKETCH_CAPACITY } from '../../src/server/metrics/server-metrics.js';
import { MAX_SKETCH_CAPACITY, SpaceSaving } from '../../src/server/metrics/space-saving.js';
import { seeded } from '../client/helpers.js';

/** Draws key ranks 0..n-1 with probability proportional to 1 / (rank + 1)^s. */
function zipf(n: number, s: number, random: () => number): () => number {
  const cdf = new Float64Array(n);
  let sum = 0;
  for (let k = 0; k < n; k++) {
    sum += 1 / (k + 1) ** s;
    cdf[k] = sum;
  }
  return () => {
    const u = random() * sum;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((cdf[mid] as number) < u) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

describe('SpaceSaving', () => {
  it('finds the true top 10 of 1M Zipf(1.2) requests over 100,000 keys, within N / capacity', () => {
    const keys = 100_000;
    const requests = 1_000_000;
    const draw = zipf(keys, 1.2, seeded(27));
    // Keys are strings, as the server's are, shuffled so rank and name do not coincide.
    const names = Array.from({ length: keys }, (_, i) => `key-${(i * 7919) % keys}`);
    const exact = new Map<string, number>();
    const sketch = new SpaceSaving<string>(SKETCH_CAPACITY);
    let peak = 0;
    for (let i = 0; i < requests; i++) {
      const key = names[draw()] as string;
      exact.set(key, (exact.get(key) ?? 0) + 1);
      sketch.offer(key);
      if (sketch.size > peak) peak = sketch.size;
    }
    // Bounded memory: never more keys than its capacity, while the stream had tens of thousands.
    expect(exact.size).toBeGreaterThan(40_000);
    expect(peak).toBe(SKETCH_CAPACITY);
    expect(sketch.total).toBe(requests);
    const bound = requests / SKETCH_CAPACITY;
    const trueTop = [...exact].sort((a, b) => b[1] - a[1]).slice(0, 10);
    const found = sketch.top(10);
    expect(found.map((h) => h.key)).toEqual(trueTop.map(([key]) => key));
    for (const hit of found) {
      const truth = exact.get(hit.key) as number;
      expect(hit.count).toBeGreaterThanOrEqual(truth);
      expect(hit.count - truth).toBeLessThanOrEqual(hit.error);
      expect(hit.error).toBeLessThanOrEqual(bound);
    }
    // Every key kept is within the bound, not only the top.
    for (const hit of sketch.top(SKETCH_CAPACITY)) {
      const truth = exact.get(hit.key) as number;
      expect(hit.count - truth).toBeGreaterThanOrEqual(0);
      expect(hit.count - truth).toBeLessThanOrEqual(bound);
    }
  });

  it('weights, and what it ignores', () => {
    const sketch = new SpaceSaving<string>(2);
    sketch.offer('a', 5);
    sketch.offer('b', 1);
    sketch.offer('c', 2); // takes b's place: count 1 + 2, error 1
    sketch.offer('d', Number.NaN);
    sketch.offer('e', -1);
    sketch.offer('f', Number.POSITIVE_INFINITY);
    expect(sketch.top(5)).toEqual([
      { key: 'a', count: 5, error: 0 },
      { key: 'c', count: 3, error: 1 },
    ]);
    expect(sketch.total).toBe(8);
    sketch.clear();
    expect(sketch.size).toBe(0);
  });

  it('keys are Map keys: __proto__ is a key like any other', () => {
    const sketch = new SpaceSaving<string>(3);
    sketch.offer('__proto__');
    sketch.offer('constructor', 2);
    expect(sketch.top(2).map((h) => h.key)).toEqual(['constructor', '__proto__']);
  });

  it('refuses a capacity out of its bounds, and takes the bound itself', () => {
    expect(() => new SpaceSaving(0)).toThrow(RangeError);
    expect(() => new SpaceSaving(MAX_SKETCH_CAPACITY + 1)).toThrow(/100000/);
    expect(() => new SpaceSaving(1.5)).toThrow(RangeError);
    const full = new SpaceSaving<number>(MAX_SKETCH_CAPACITY);
    for (let i = 0; i < MAX_SKETCH_CAPACITY + 10; i++) full.offer(i);
    expect(full.size).toBe(MAX_SKETCH_CAPACITY);
  });
});

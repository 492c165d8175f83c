import { describe, expect, it } from 'vitest';
import { type BucketState, bucket } from '../../../src/client/rules/bucket.js';

const config = { rate: 2, burst: 5 };
const fresh = (now: number) => bucket.fresh(config, now) as BucketState;

/** Check, then commit when allowed: 0 when the units were taken, else the wait in ms. */
function take(state: BucketState, cost: number, now: number): number {
  const request = { kind: 'attempt', cost, first: true, now } as const;
  const verdict = bucket.check(state, request, config);
  if (!verdict.ok) return verdict.waitMs ?? Number.NaN;
  bucket.commit(state, request, { ...request, seq: 0, at: now }, config);
  return 0;
}

describe('client token bucket', () => {
  it('allows the burst, then says how long until the next unit', () => {
    const b = fresh(0);
    for (let i = 0; i < 5; i++) expect(take(b, 1, 0)).toBe(0);
    expect(take(b, 1, 0)).toBe(500);
    // 1.5 s later three units are back.
    expect(take(b, 3, 1500)).toBe(0);
    expect(take(b, 1, 1500)).toBe(500);
  });

  it('charges a cost, takes nothing when it cannot pay', () => {
    const b = fresh(0);
    expect(take(b, 4, 0)).toBe(0);
    expect(take(b, 3, 0)).toBe(1000);
    expect(b.tokens).toBe(1);
  });

  it('never refills past the burst, and a clock going back refills nothing', () => {
    const b = fresh(10_000);
    take(b, 5, 10_000);
    take(b, 0, 5_000);
    expect(b.tokens).toBe(0);
    take(b, 0, 1_000_000);
    expect(b.tokens).toBe(5);
  });

  it('reports an impossible cost as Infinity', () => {
    expect(take(fresh(0), 6, 0)).toBe(Number.POSITIVE_INFINITY);
  });

  it('is equivalent to none once full again', () => {
    const b = fresh(0);
    take(b, 3, 0);
    expect(bucket.expiresAt(b, config)).toBe(1500);
  });
});

import { describe, expect, it } from 'vitest';
import {
  availableRetries,
  depositRequest,
  newBudget,
  withdrawRetry,
} from '../../src/client/policies/retry-budget.js';

const config = { ratio: 0.1, minPerSecond: 1, windowMs: 10_000 };

describe('retry budget', () => {
  it('starts with the floor: minPerSecond times the window', () => {
    const b = newBudget(config, 0);
    expect(availableRetries(b, config, 0)).toBe(10);
    let allowed = 0;
    while (withdrawRetry(b, config, 0)) allowed++;
    expect(allowed).toBe(10);
  });

  it('adds ratio times the requests of the window', () => {
    const b = newBudget({ ...config, minPerSecond: 0 }, 0);
    const c = { ...config, minPerSecond: 0 };
    for (let i = 0; i < 100; i++) depositRequest(b, c, 0);
    let allowed = 0;
    while (withdrawRetry(b, c, 0)) allowed++;
    expect(allowed).toBe(10);
  });

  it('bounds attempts per request at 1 + ratio + floor / rate during an outage', () => {
    // 50 requests per second for 60 s, every one failing and wanting every retry.
    const b = newBudget(config, 0);
    let requests = 0;
    let retries = 0;
    for (let t = 0; t < 60_000; t += 20) {
      depositRequest(b, config, t);
      requests++;
      while (withdrawRetry(b, config, t)) retries++;
    }
    const amplification = (requests + retries) / requests;
    expect(amplification).toBeLessThanOrEqual(1 + 0.1 + 1 / 50 + 0.01);
    expect(amplification).toBeGreaterThan(1.1);
  });

  it('forgets what left the window', () => {
    const c = { ...config, minPerSecond: 0 };
    const b = newBudget(c, 0);
    for (let i = 0; i < 100; i++) depositRequest(b, c, 0);
    for (let i = 0; i < 10; i++) expect(withdrawRetry(b, c, 0)).toBe(true);
    expect(withdrawRetry(b, c, 0)).toBe(false);
    // Ten seconds later, requests and retries are both gone.
    expect(availableRetries(b, c, 10_000)).toBe(0);
    for (let i = 0; i < 10; i++) depositRequest(b, c, 10_000);
    expect(withdrawRetry(b, c, 10_000)).toBe(true);
    expect(withdrawRetry(b, c, 10_000)).toBe(false);
  });

  it('slides: at half a window, half the old slots are still counted', () => {
    const c = { ...config, minPerSecond: 0 };
    const b = newBudget(c, 0);
    for (let t = 0; t < 10_000; t += 100) depositRequest(b, c, t); // 100 requests over 10 s
    expect(availableRetries(b, c, 9_999)).toBeCloseTo(10);
    expect(availableRetries(b, c, 14_999)).toBeCloseTo(5);
  });

  it('ignores a clock that goes back', () => {
    const b = newBudget(config, 50_000);
    depositRequest(b, config, 50_000);
    expect(availableRetries(b, config, 1_000)).toBeCloseTo(10.1);
  });

  it('is plain JSON', () => {
    const b = newBudget(config, 0);
    depositRequest(b, config, 0);
    expect(JSON.parse(JSON.stringify(b))).toEqual(b);
  });
});

import { describe, expect, it } from 'vitest';
import {
  availableRetries,
  type BudgetConfig,
  type BudgetState,
  budget,
} from '../../../src/client/rules/budget.js';

const config = { ratio: 0.1, minPerSecond: 1, windowMs: 10_000 };
const newBudget = (c: BudgetConfig, now: number) => budget.fresh(c, now) as BudgetState;

/** A first attempt: a deposit. */
function deposit(b: BudgetState, c: BudgetConfig, now: number): void {
  const request = { kind: 'attempt', cost: 1, first: true, now } as const;
  budget.commit(b, request, { ...request, seq: 0, at: now }, c);
}

/** A retry asking the budget: whether it got one. */
function withdraw(b: BudgetState, c: BudgetConfig, now: number): boolean {
  const request = { kind: 'retry', cost: 1, first: false, now } as const;
  if (!budget.check(b, request, c).ok) return false;
  budget.commit(b, request, { ...request, seq: 0, at: now }, c);
  return true;
}

describe('retry budget', () => {
  it('starts with the floor: minPerSecond times the window', () => {
    const b = newBudget(config, 0);
    expect(availableRetries(b, config, 0)).toBe(10);
    let allowed = 0;
    while (withdraw(b, config, 0)) allowed++;
    expect(allowed).toBe(10);
  });

  it('adds ratio times the requests of the window', () => {
    const c = { ...config, minPerSecond: 0 };
    const b = newBudget(c, 0);
    for (let i = 0; i < 100; i++) deposit(b, c, 0);
    let allowed = 0;
    while (withdraw(b, c, 0)) allowed++;
    expect(allowed).toBe(10);
  });

  it('bounds attempts per request at 1 + ratio + floor / rate during an outage', () => {
    // 50 requests per second for 60 s, every one failing and wanting every retry.
    const b = newBudget(config, 0);
    let requests = 0;
    let retries = 0;
    for (let t = 0; t < 60_000; t += 20) {
      deposit(b, config, t);
      requests++;
      while (withdraw(b, config, t)) retries++;
    }
    const amplification = (requests + retries) / requests;
    expect(amplification).toBeLessThanOrEqual(1 + 0.1 + 1 / 50 + 0.01);
    expect(amplification).toBeGreaterThan(1.1);
  });

  it('forgets what left the window', () => {
    const c = { ...config, minPerSecond: 0 };
    const b = newBudget(c, 0);
    for (let i = 0; i < 100; i++) deposit(b, c, 0);
    for (let i = 0; i < 10; i++) expect(withdraw(b, c, 0)).toBe(true);
    expect(withdraw(b, c, 0)).toBe(false);
    // Ten seconds later, requests and retries are both gone.
    expect(availableRetries(b, c, 10_000)).toBe(0);
    for (let i = 0; i < 10; i++) deposit(b, c, 10_000);
    expect(withdraw(b, c, 10_000)).toBe(true);
    expect(withdraw(b, c, 10_000)).toBe(false);
  });

  it('slides: at half a window, half the old slots are still counted', () => {
    const c = { ...config, minPerSecond: 0 };
    const b = newBudget(c, 0);
    for (let t = 0; t < 10_000; t += 100) deposit(b, c, t); // 100 requests over 10 s
    expect(availableRetries(b, c, 9_999)).toBeCloseTo(10);
    expect(availableRetries(b, c, 14_999)).toBeCloseTo(5);
  });

  it('ignores a clock that goes back', () => {
    const b = newBudget(config, 50_000);
    deposit(b, config, 50_000);
    expect(availableRetries(b, config, 1_000)).toBeCloseTo(10.1);
  });

  it('is plain JSON', () => {
    const b = newBudget(config, 0);
    deposit(b, config, 0);
    expect(JSON.parse(JSON.stringify(b))).toEqual(b);
  });

  it('a later attempt of a call deposits nothing', () => {
    const c = { ...config, minPerSecond: 0 };
    const b = newBudget(c, 0);
    const request = { kind: 'attempt', cost: 1, first: false, now: 0 } as const;
    for (let i = 0; i < 100; i++) budget.commit(b, request, { ...request, seq: 0, at: 0 }, c);
    expect(availableRetries(b, c, 0)).toBe(0);
  });
});

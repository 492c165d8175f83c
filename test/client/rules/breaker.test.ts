import { describe, expect, it } from 'vitest';
import { CircuitBreaker, type CircuitState } from '../../../src/client/rules/breaker.js';

const config = {
  failureRatio: 0.5,
  minRequests: 10,
  windowMs: 10_000,
  consecutiveFailures: 5,
  coolDownMs: 5_000,
  maxCoolDownMs: 30_000,
  halfOpenProbes: 2,
};

function breaker() {
  const transitions: [CircuitState, CircuitState, number][] = [];
  const b = new CircuitBreaker(config, (from, to, now) => transitions.push([from, to, now]));
  return { b, transitions };
}

describe('circuit breaker', () => {
  it('closed -> open after N consecutive failures', () => {
    const { b, transitions } = breaker();
    for (let i = 0; i < 4; i++) b.failure(i, false);
    expect(b.stateAt(4)).toBe('closed');
    b.failure(4, false);
    expect(b.stateAt(5)).toBe('open');
    expect(transitions).toEqual([['closed', 'open', 4]]);
  });

  it('a success resets the consecutive count', () => {
    const { b } = breaker();
    for (let i = 0; i < 4; i++) b.failure(i, false);
    b.success(4, false);
    for (let i = 5; i < 9; i++) b.failure(i, false);
    expect(b.stateAt(9)).toBe('closed');
  });

  it('closed -> open on the failure ratio, only past minRequests', () => {
    const { b } = breaker();
    // Alternate: never 5 in a row, ratio 0.5 reached at the 10th outcome.
    for (let i = 0; i < 9; i++) i % 2 === 0 ? b.failure(i, false) : b.success(i, false);
    expect(b.stateAt(9)).toBe('closed'); // 9 outcomes < minRequests
    b.success(9, false); // 5 failures / 10: ratio 0.5
    expect(b.stateAt(10)).toBe('closed'); // the ratio is judged on a failure
    b.failure(10, false); // 6 / 11
    expect(b.stateAt(11)).toBe('open');
  });

  it('old outcomes leave the sliding window', () => {
    const { b } = breaker();
    for (let i = 0; i < 4; i++) b.failure(i, false);
    for (let i = 0; i < 6; i++) b.success(10, false);
    // 20 s later the window is empty: 4 failures and 1 success are not a ratio.
    b.failure(20_000, false);
    b.success(20_001, false);
    b.failure(20_002, false);
    expect(b.stateAt(20_003)).toBe('closed');
  });

  it('open refuses with the end of the cool-down; then half-open lets probes through', () => {
    const { b, transitions } = breaker();
    for (let i = 0; i < 5; i++) b.failure(1000, false);
    expect(b.acquire(2000)).toEqual({ allowed: false, retryAt: 6000 });
    expect(b.acquire(5999)).toEqual({ allowed: false, retryAt: 6000 });
    expect(b.acquire(6000)).toEqual({ allowed: true, probe: true });
    expect(b.acquire(6000)).toEqual({ allowed: true, probe: true });
    // Two probes out: a third call is refused, told to come back when a failed probe's cool-down
    // (doubled) would end, at worst.
    expect(b.acquire(6001)).toEqual({ allowed: false, retryAt: 16_001 });
    expect(transitions.map(([f, t]) => `${f}>${t}`)).toEqual(['closed>open', 'open>half-open']);
  });

  it('half-open -> closed when every probe succeeds', () => {
    const { b, transitions } = breaker();
    for (let i = 0; i < 5; i++) b.failure(0, false);
    b.acquire(5000);
    b.acquire(5000);
    b.success(5100, true);
    expect(b.stateAt(5100)).toBe('half-open');
    b.success(5200, true);
    expect(b.stateAt(5200)).toBe('closed');
    expect(transitions.at(-1)).toEqual(['half-open', 'closed', 5200]);
    // Closed again with a clean slate: 4 failures do not reopen it.
    for (let i = 0; i < 4; i++) b.failure(5300, false);
    expect(b.stateAt(5300)).toBe('closed');
  });

  it('half-open -> open on a probe failure, for twice the cool-down, up to maxCoolDownMs', () => {
    const { b } = breaker();
    for (let i = 0; i < 5; i++) b.failure(0, false);
    b.acquire(5000);
    b.failure(5500, true);
    expect(b.stateAt(5500)).toBe('open');
    expect(b.currentCoolDownMs).toBe(10_000);
    expect(b.acquire(15_499)).toEqual({ allowed: false, retryAt: 15_500 });
    expect(b.acquire(15_500)).toEqual({ allowed: true, probe: true });
    // Doubling: 20 s, then 30 s (the cap), and 30 s from then on.
    let now = 15_600;
    const coolDowns: number[] = [];
    for (let i = 0; i < 4; i++) {
      b.failure(now, true);
      coolDowns.push(b.currentCoolDownMs);
      now += b.currentCoolDownMs;
      expect(b.acquire(now - 1).allowed).toBe(false);
      expect(b.acquire(now)).toEqual({ allowed: true, probe: true });
    }
    expect(coolDowns).toEqual([20_000, 30_000, 30_000, 30_000]);
  });

  it('starts over at coolDownMs once closed, when it opens again', () => {
    const { b } = breaker();
    for (let i = 0; i < 5; i++) b.failure(0, false);
    b.acquire(5000);
    b.failure(5000, true); // 10 s
    b.acquire(15_000);
    b.acquire(15_000);
    b.success(15_001, true);
    b.success(15_002, true);
    expect(b.stateAt(15_002)).toBe('closed');
    expect(b.currentCoolDownMs).toBe(5_000);
    for (let i = 0; i < 5; i++) b.failure(16_000, false);
    expect(b.currentCoolDownMs).toBe(5_000);
    expect(b.retryAt(16_000)).toBe(21_000);
  });

  it('never cools down for less than coolDownMs, whatever maxCoolDownMs says', () => {
    const b = new CircuitBreaker({ ...config, maxCoolDownMs: 1000 });
    for (let i = 0; i < 5; i++) b.failure(0, false);
    b.acquire(5000);
    b.failure(5000, true);
    expect(b.currentCoolDownMs).toBe(5000);
  });

  it('a probe released without a verdict frees its slot', () => {
    const { b } = breaker();
    for (let i = 0; i < 5; i++) b.failure(0, false);
    b.acquire(5000);
    b.acquire(5000);
    expect(b.acquire(5000).allowed).toBe(false);
    b.release(true);
    expect(b.acquire(5000)).toEqual({ allowed: true, probe: true });
  });

  it('late outcomes of requests sent before it opened change nothing', () => {
    const { b } = breaker();
    for (let i = 0; i < 5; i++) b.failure(0, false);
    b.success(100, false);
    b.failure(200, false);
    expect(b.stateAt(300)).toBe('open');
    expect(b.retryAt(300)).toBe(5000);
  });
});

/**
 * Issue 23, section 3: a reset announced late, learned from the answers (`rules/late-reset.ts`).
 * Flask-Limiter's fixed window, emulated on fake time: it starts at the first request after the
 * previous one ended, lasts 2 s, holds 10, and announces its end as `int(end) + 1` in Unix
 * seconds (`X-RateLimit-Reset`), up to a second late; `Retry-After` on its 429s is that minus
 * now, truncated. Honouring the announced reset took 1.45 times the least time.
 */
import { describe, expect, it } from 'vitest';
import { serverFor, simulate } from './simulate.js';

/** Flask-Limiter's `10 per 2 seconds`, as its default strategy and headers answer. */
function flaskLike(limit = 10, windowMs = 2000) {
  let start: number | undefined;
  let count = 0;
  return (at: number) => {
    if (start === undefined || at >= start + windowMs) {
      start = at;
      count = 0;
    }
    const allowed = count < limit;
    if (allowed) count++;
    const reset = Math.floor((start + windowMs) / 1000) + 1;
    const headers: Record<string, string> = {
      'x-ratelimit-limit': String(limit),
      'x-ratelimit-remaining': String(limit - count),
      'x-ratelimit-reset': String(reset),
    };
    if (!allowed) headers['retry-after'] = String(Math.trunc(reset - at / 1000));
    return { status: allowed ? 200 : 429, headers };
  };
}

// A start in the middle of a second, as a session's first request is.
const START = 1_764_500_000_437;

describe('a fixed window whose reset is announced late (Flask-Limiter)', () => {
  it('60 calls: within 1.15x of the least time, at most the one refused probe', () => {
    const outcome = simulate({
      server: serverFor('fixed-window', 5, 10),
      respond: flaskLike(),
      calls: 60,
      latencyMs: 0.25,
      start: START,
    });
    // 10 at once, then 10 per 2 s: (60 - 10) / 5 = 10 s.
    expect(outcome.completed).toBe(60);
    expect(outcome.refused).toBeLessThanOrEqual(1);
    expect(outcome.elapsedMs / 10_000).toBeLessThanOrEqual(1.15);
  });

  it('a window aligned to the clock, announced exactly: what the bounds suggest fails, twice at most, and is dropped', () => {
    // The mock server's fixed window of 10 per 2 s with X-RateLimit-* (its end, rounded up).
    const windowMs = 2000;
    let count = 0;
    let windowStart = -1;
    const aligned = (at: number) => {
      const start = Math.floor(at / windowMs) * windowMs;
      if (start !== windowStart) {
        windowStart = start;
        count = 0;
      }
      const allowed = count < 10;
      if (allowed) count++;
      const reset = Math.ceil((start + windowMs) / 1000);
      const headers: Record<string, string> = {
        'x-ratelimit-limit': '10',
        'x-ratelimit-remaining': String(10 - count),
        'x-ratelimit-reset': String(reset),
      };
      if (!allowed) headers['retry-after'] = String(Math.ceil(reset - at / 1000));
      return { status: allowed ? 200 : 429, headers };
    };
    const outcome = simulate({
      server: serverFor('fixed-window', 5, 10),
      respond: aligned,
      calls: 100,
      latencyMs: 0.25,
      start: START,
    });
    expect(outcome.completed).toBe(100);
    // The whole seconds between the bounds, then the upper bound: each refused once, then dropped.
    expect(outcome.refused).toBeLessThanOrEqual(2);
  });
});

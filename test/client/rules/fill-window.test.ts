/**
 * A token policy's window inferred from its answers (`rules/fill-window.ts`): a bucket's
 * `limit * reset / missing` holds still from answer to answer, a sliding log's or a fixed
 * window's jumps; only the first is paced as refilling continuously, and never past its reset.
 */
import { describe, expect, it } from 'vitest';
import { type FillWindowFields, learnFillWindow } from '../../../src/client/rules/fill-window.js';
import { learnRefill, type RefillFields, refilledAt } from '../../../src/client/rules/refill.js';

const tokens = (limit: number): FillWindowFields => ({ limit, unit: 'tokens' });

/** When the answers come: off a whole second, so only a reset itself in whole seconds is one. */
const NOW = 1_800_000_000_250;

describe('a token window inferred from successive answers', () => {
  it('a bucket (1,000 a minute): the same window twice, so paced at that rate', () => {
    const p = tokens(1000);
    // 100 missing, full in 6.012 s; then 150 missing, full in 9.018 s: 60.12 s each time.
    learnFillWindow(p, { remaining: 900, resetMs: 6012 }, NOW);
    expect(p.refill).toBeUndefined();
    learnFillWindow(p, { remaining: 850, resetMs: 9018 }, NOW);
    expect(p).toMatchObject({ windowMs: 60_120, refill: 'gradual' });
  });

  it('a reset rounded to the millisecond still agrees; one under 100 ms is not compared', () => {
    const p = tokens(150_000);
    // 2.5 tokens a ms: 16 missing is 6.4 ms (said 7), 20 missing is 8 ms: 14 % apart.
    learnFillWindow(p, { remaining: 149_984, resetMs: 7 }, NOW);
    learnFillWindow(p, { remaining: 149_980, resetMs: 8 }, NOW);
    expect(p.refill).toBeUndefined();
    // 251 missing is 100.4 ms (said 101), 300 missing is 120 ms.
    learnFillWindow(p, { remaining: 149_749, resetMs: 101 }, NOW);
    learnFillWindow(p, { remaining: 149_700, resetMs: 120 }, NOW);
    expect(p.refill).toBe('gradual');
  });

  it('a sliding log (600 per 10 s, full again 10 s after its newest entry): not gradual', () => {
    const p = tokens(600);
    learnFillWindow(p, { remaining: 550, resetMs: 10_000 }, NOW);
    learnFillWindow(p, { remaining: 500, resetMs: 10_000 }, NOW);
    learnFillWindow(p, { remaining: 450, resetMs: 10_000 }, NOW);
    expect(p.refill).toBeUndefined();
    expect(p.windowMs).toBeUndefined();
  });

  it('a fixed window (600 per 10 s, answers 100 ms apart): not gradual', () => {
    const p = tokens(600);
    learnFillWindow(p, { remaining: 550, resetMs: 10_000 }, NOW);
    learnFillWindow(p, { remaining: 500, resetMs: 9900 }, NOW);
    expect(p.refill).toBeUndefined();
  });

  it('a declared window, requests, or a window learned to refill at once are left alone', () => {
    const declared: FillWindowFields = { ...tokens(1000), windowMs: 10_000 };
    learnFillWindow(declared, { remaining: 900, resetMs: 6000 }, NOW);
    learnFillWindow(declared, { remaining: 850, resetMs: 9000 }, NOW);
    expect(declared.refill).toBeUndefined();
    const requests: FillWindowFields = { limit: 1000, unit: 'requests' };
    learnFillWindow(requests, { remaining: 900, resetMs: 6000 }, NOW);
    learnFillWindow(requests, { remaining: 850, resetMs: 9000 }, NOW);
    expect(requests.refill).toBeUndefined();
    const window: FillWindowFields = { ...tokens(1000), refill: 'at-once' };
    learnFillWindow(window, { remaining: 900, resetMs: 6000 }, NOW);
    learnFillWindow(window, { remaining: 850, resetMs: 9000 }, NOW);
    expect(window.refill).toBe('at-once');
  });

  it('a full answer between two short ones starts the comparison again', () => {
    const p = tokens(1000);
    learnFillWindow(p, { remaining: 900, resetMs: 6000 }, NOW);
    learnFillWindow(p, { remaining: 1000, resetMs: 0 }, NOW);
    learnFillWindow(p, { remaining: 850, resetMs: 9000 }, NOW);
    expect(p.refill).toBeUndefined();
  });

  it('resets in whole seconds (truncated, up to 1 s early): paced at the slowest window they allow', () => {
    // Anthropic's output tokens, 1,000 a minute, answers at .25 s: 100 missing is full at 6.25 s,
    // said 6 (5.75 s from now); 200 missing at 12.25 s, said 12. Taken as exact, 57.5 and
    // 58.75 s agree within 3 %, and 58.75 s paced the bucket 2 % early; the most either allows
    // is 67.5 and 63.75 s.
    const p = tokens(1000);
    learnFillWindow(p, { remaining: 900, resetMs: 5750 }, NOW);
    learnFillWindow(p, { remaining: 800, resetMs: 11_750 }, NOW);
    expect(p).toMatchObject({ windowMs: 63_750, refill: 'gradual' });
  });

  it('whole-second resets whose ranges do not meet (a fixed window) are not a bucket', () => {
    // 600 per 10 s, the window's end said 10 s away twice: 50 missing and 100 missing.
    const p = tokens(600);
    learnFillWindow(p, { remaining: 550, resetMs: 9750 }, NOW);
    learnFillWindow(p, { remaining: 500, resetMs: 9750 }, NOW);
    expect(p.refill).toBeUndefined();
  });

  it('short of a call by the estimate, it waits for what is missing at that rate, capped at the reset', () => {
    const p: RefillFields = {
      limit: 1000,
      unit: 'tokens',
      windowMs: 60_000,
      refill: 'gradual',
      remaining: 850,
      heardAt: 100_000,
      resetAt: 109_000,
    };
    // 50 missing at 1,000 a minute: 3 s (a thousandth slower).
    expect(refilledAt(p, 900)).toBeCloseTo(103_003, 0);
    // 1,000 missing would be 9 s 9 ms: the server said full at 9 s.
    expect(refilledAt({ ...p, remaining: 0 }, 1000)).toBe(109_000);
  });

  it('a pace run ahead while spent restarts from a report with units left and nothing owed', () => {
    const now = NOW;
    // 1,000 a minute; the pace ran a minute ahead while the bucket was spent; then the server
    // reports 95 left with nothing in flight: the next 100 are 5 tokens away, 0.3 s.
    const p: RefillFields = {
      limit: 1000,
      unit: 'tokens',
      windowMs: 60_000,
      refill: 'gradual',
      peak: 1000,
      paceAt: now + 60_000,
      remaining: 95,
    };
    learnRefill(p, {
      before: -5,
      remaining: 95,
      need: 100,
      inFlight: 0,
      accepted: true,
      probe: false,
      sentAt: now - 10,
      now,
      resetMs: 54_000,
    });
    p.resetAt = now + 54_000;
    // Before: the pace held it to 66 s, past the server's own full-again (and maxRetryAfterMs).
    expect(refilledAt(p, 100)).toBeCloseTo(now + 300.3, 0);
  });
});

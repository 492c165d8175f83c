/**
 * A token policy's window inferred from its answers (`rules/fill-window.ts`): a bucket's
 * `limit * reset / missing` holds still from answer to answer, a sliding log's or a fixed
 * window's jumps; only the first is paced as refilling continuously, and never past its reset.
 */
import { describe, expect, it } from 'vitest';
import {
  bucketByAnswers,
  type FillWindowFields,
  learnFillWindow,
  truncatedReset,
} from '../../../src/client/rules/fill-window.js';
import {
  learnRefill,
  type RefillFields,
  type RefillReport,
  refilledAt,
} from '../../../src/client/rules/refill.js';

const tokens = (limit: number): FillWindowFields => ({ limit, unit: 'tokens' });

describe('a token window inferred from successive answers', () => {
  it('a bucket (1,000 a minute): the same window twice, so paced at that rate', () => {
    const p = tokens(1000);
    // 100 missing, full in 6 s; then 150 missing, full in 9 s: 60 s each time.
    learnFillWindow(p, { remaining: 900, resetMs: 6000 });
    expect(p.refill).toBeUndefined();
    learnFillWindow(p, { remaining: 850, resetMs: 9000 });
    expect(p).toMatchObject({ windowMs: 60_000, refill: 'gradual' });
  });

  it('a reset rounded to the millisecond still agrees; one under 100 ms is not compared', () => {
    const p = tokens(150_000);
    // 2.5 tokens a ms: 16 missing is 6.4 ms (said 7), 20 missing is 8 ms: 14 % apart.
    learnFillWindow(p, { remaining: 149_984, resetMs: 7 });
    learnFillWindow(p, { remaining: 149_980, resetMs: 8 });
    expect(p.refill).toBeUndefined();
    // 251 missing is 100.4 ms (said 101), 300 missing is 120 ms.
    learnFillWindow(p, { remaining: 149_749, resetMs: 101 });
    learnFillWindow(p, { remaining: 149_700, resetMs: 120 });
    expect(p.refill).toBe('gradual');
  });

  it('a sliding log (600 per 10 s, full again 10 s after its newest entry): not gradual', () => {
    const p = tokens(600);
    learnFillWindow(p, { remaining: 550, resetMs: 10_000 });
    learnFillWindow(p, { remaining: 500, resetMs: 10_000 });
    learnFillWindow(p, { remaining: 450, resetMs: 10_000 });
    expect(p.refill).toBeUndefined();
    expect(p.windowMs).toBeUndefined();
  });

  it('a fixed window (600 per 10 s, answers 100 ms apart): not gradual', () => {
    const p = tokens(600);
    learnFillWindow(p, { remaining: 550, resetMs: 10_000 });
    learnFillWindow(p, { remaining: 500, resetMs: 9900 });
    expect(p.refill).toBeUndefined();
  });

  it('a declared window, requests, or a window learned to refill at once are left alone', () => {
    const declared: FillWindowFields = { ...tokens(1000), windowMs: 10_000 };
    learnFillWindow(declared, { remaining: 900, resetMs: 6000 });
    learnFillWindow(declared, { remaining: 850, resetMs: 9000 });
    expect(declared.refill).toBeUndefined();
    const requests: FillWindowFields = { limit: 1000, unit: 'requests' };
    learnFillWindow(requests, { remaining: 900, resetMs: 6000 });
    learnFillWindow(requests, { remaining: 850, resetMs: 9000 });
    expect(requests.refill).toBeUndefined();
    const window: FillWindowFields = { ...tokens(1000), refill: 'at-once' };
    learnFillWindow(window, { remaining: 900, resetMs: 6000 });
    learnFillWindow(window, { remaining: 850, resetMs: 9000 });
    expect(window.refill).toBe('at-once');
  });

  it('a full answer between two short ones starts the comparison again', () => {
    const p = tokens(1000);
    learnFillWindow(p, { remaining: 900, resetMs: 6000 });
    learnFillWindow(p, { remaining: 1000, resetMs: 0 });
    learnFillWindow(p, { remaining: 850, resetMs: 9000 });
    expect(p.refill).toBeUndefined();
  });

  it('only a reset sent as a moment in whole seconds is truncated: by its family, not its value', () => {
    // Answers a quarter of a second past a whole second.
    const at = 1_800_000_000_250;
    // Anthropic's RFC 3339 reset, read against the client's clock (a whole-second moment) or
    // against the server's `Date` (a whole number of seconds).
    expect(truncatedReset('anthropic', at, 5750)).toBe(true);
    expect(truncatedReset('anthropic', at, 6000)).toBe(true);
    // One sent to the millisecond is the truth.
    expect(truncatedReset('anthropic', at, 5812)).toBe(false);
    // OpenAI's durations (`1s`, `6m0s`) are exact, even where they fall on a whole second.
    expect(truncatedReset('openai', at, 1000)).toBe(false);
    expect(truncatedReset('openai', at - 250, 6000)).toBe(false);
    expect(truncatedReset(undefined, at, 6000)).toBe(false);
    expect(truncatedReset('anthropic', at, undefined)).toBe(false);
  });

  it('truncated resets: paced at the slowest window both allow, never faster than the bucket', () => {
    // Anthropic's output tokens, 1,000 a minute, answers at .25 s: 100 missing is full at 6.25 s,
    // said 6 (5.75 s from now); 200 missing at 12.25 s, said 12. Taken as exact, 57.5 and
    // 58.75 s agree within 3 %, and 58.75 s paced the bucket 2 % early; the most either allows
    // is 67.5 and 63.75 s.
    const p = tokens(1000);
    learnFillWindow(p, { remaining: 900, resetMs: 5750 }, true);
    expect(p).toMatchObject({ fillMs: 57_500, fillMaxMs: 67_500 });
    learnFillWindow(p, { remaining: 800, resetMs: 11_750 }, true);
    expect(p).toMatchObject({ windowMs: 63_750, refill: 'gradual' });
    expect(bucketByAnswers(p)).toBe(true);
  });

  it('truncated resets whose ranges do not meet (a fixed window) are not a bucket', () => {
    // 600 per 10 s, the window's end said 10 s away twice: 50 missing and 100 missing.
    const p = tokens(600);
    learnFillWindow(p, { remaining: 550, resetMs: 9750 }, true);
    learnFillWindow(p, { remaining: 500, resetMs: 9750 }, true);
    expect(p.refill).toBeUndefined();
    expect(bucketByAnswers(p)).toBe(false);
  });

  it('a truncated reset under 4 s (a range over a quarter wide) is not compared', () => {
    const p = tokens(1000);
    // 50 missing, said 2.75 s: 55 to 75 s, which would meet nearly anything.
    learnFillWindow(p, { remaining: 950, resetMs: 2750 }, true);
    expect(p.fillMs).toBeUndefined();
    learnFillWindow(p, { remaining: 900, resetMs: 5750 }, true);
    expect(p.refill).toBeUndefined();
    // 4 s exactly is compared.
    learnFillWindow(p, { remaining: 930, resetMs: 4000 }, true);
    expect(p).toMatchObject({ windowMs: 67_500, refill: 'gradual' });
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

  describe('a paced bucket whose report shows units left and nothing owed', () => {
    const at = 1_800_000_000_250;
    // 1,000 a minute; the pace restarted from a send after a wait for the server's reset, a minute
    // ahead; then the server reports 95 left with nothing in flight.
    const paced = (): RefillFields => ({
      limit: 1000,
      unit: 'tokens',
      windowMs: 60_000,
      refill: 'gradual',
      peak: 1000,
      paceAt: at + 60_000,
      remaining: 95,
    });
    const report: RefillReport = {
      before: -5,
      remaining: 95,
      need: 100,
      inFlight: 0,
      accepted: true,
      probe: false,
      sentAt: at - 10,
      now: at,
      resetMs: 54_000,
    };

    it('a bucket by its answers: the pace restarts from the report', () => {
      // Its window inferred from its answers (`fillMs`, fill-window.ts).
      const p = { ...paced(), fillMs: 60_000 };
      learnRefill(p, report);
      p.resetAt = at + 54_000;
      expect(p.paceAt).toBeUndefined();
      // The next 100 are 5 tokens away, 0.3 s. (Before: the pace held it 71 s, past the
      // server's own full-again and maxRetryAfterMs.)
      expect(refilledAt(p, 100)).toBeCloseTo(at + 300.3, 0);
    });

    it('a declared window (a sliding-window counter may give its units back at once): kept', () => {
      const p = paced();
      learnRefill(p, report);
      // The 95 back are taken as the pace's next units, come early: the pace moves on by them.
      expect(p.paceAt).toBeCloseTo(at + 65_700, 0);
    });

    it('with more in flight than left, the estimate owes units: the pace is kept', () => {
      const p = { ...paced(), fillMs: 60_000, remaining: -5 };
      learnRefill(p, { ...report, inFlight: 100 });
      expect(p.paceAt).toBe(at + 60_000);
    });
  });
});

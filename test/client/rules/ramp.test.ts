import { describe, expect, it } from 'vitest';
import { Host, ietf, learn, open } from './harness.js';

describe('cold-start ramp', () => {
  it('lets one request go, holds the rest until the host answers, then doubles within what it declares', () => {
    const h = new Host(learn);
    const first = h.send(0);
    // Until it answers, or for a second at most.
    expect(h.check(1, 0)).toEqual({ ok: false, waitMs: 1000, reason: 'cold-start' });
    h.answer(first, 200, ietf(9, 1), 10);
    expect(h.state.mode).toBe('declared');
    // A declared quota of 9 left, but no leave to send them at once: two go, then four.
    const second = [h.send(10), h.send(10)];
    expect(h.check(1, 10)).toMatchObject({ ok: false, reason: 'cold-start' });
    for (const t of second) h.answer(t, 200, ietf(9, 1), 11);
    for (let i = 0; i < 4; i++) h.send(11);
    expect(h.check(1, 11)).toMatchObject({ ok: false, reason: 'cold-start' });
  });

  it('the declared quota still holds inside the ramp', () => {
    const h = new Host(learn);
    h.answer(h.send(0), 200, ietf(1, 1), 10);
    h.send(10);
    // The window has room for one more, the declared quota has none.
    expect(h.check(1, 10)).toMatchObject({ ok: false, reason: 'learned-limit', policy: 's' });
  });

  it('can be turned off', () => {
    const h = new Host(open);
    for (let i = 0; i < 50; i++) h.send(0);
  });

  it('ramps up a host that declares nothing: the window doubles every round trip', () => {
    const h = new Host(learn);
    let inFlight = [h.send(0)];
    const rounds: number[] = [];
    for (let round = 0; round < 5; round++) {
      for (const t of inFlight) h.answer(t, 200, {}, 1);
      inFlight = [];
      while (h.check(1, 1).ok) inFlight.push(h.commit(1, 1));
      rounds.push(inFlight.length);
    }
    expect(rounds).toEqual([2, 4, 8, 16, 32]);
    expect(h.state.mode).toBe('blind');
  });

  it('ends at the first refusal: the pace takes over', () => {
    const h = new Host(learn);
    h.answer(h.send(0), 200, {}, 1);
    const refused = h.send(1);
    h.send(1);
    h.answer(refused, 429, {}, 2);
    expect(h.state.ramp).toBeUndefined();
    expect(h.state.pace?.rate).toBeGreaterThan(0);
  });

  it('a request unanswered for a second stops holding the others back, before any answer', () => {
    const h = new Host(learn);
    h.send(0); // a slow first request: a long poll
    expect(h.check(1, 999)).toMatchObject({ ok: false, waitMs: 1, reason: 'cold-start' });
    h.send(1000);
    expect(h.check(1, 1500)).toMatchObject({ ok: false, waitMs: 500 });
  });

  it('once answers came, a request counts for twice the shortest answer time (at least 100 ms)', () => {
    const h = new Host(learn);
    h.answer(h.send(0), 200, {}, 40); // 40 ms: bound 80 ms, so 100
    const window = Math.floor(h.state.ramp?.window ?? 0);
    const slow = Array.from({ length: window }, () => h.send(100));
    expect(h.check(1, 150)).toMatchObject({ ok: false, waitMs: 50, reason: 'cold-start' });
    expect(h.check(1, 200).ok).toBe(true);
    h.answer(h.send(300), 200, {}, 310); // 10 ms: the bound stays 100 ms
    expect(h.state.ramp?.minRttMs).toBe(10);
    for (const t of slow) h.answer(t, 200, {}, 5000); // long polls: no effect on the bound
    expect(h.state.ramp?.minRttMs).toBe(10);
    // Stragglers of a round that went stale grow nothing: 2, then 3 after the one answered round.
    expect(h.state.ramp?.window).toBe(3);
  });

  it("a round's early answers do not open the window while the rest of the round is out", () => {
    const h = new Host(learn);
    h.answer(h.send(0), 200, {}, 1);
    const [a, b] = [h.send(1), h.send(1)];
    h.answer(a, 200, {}, 2);
    // Per answer, two more would go now, and meet the limit that refuses `b`.
    expect(h.check(1, 2)).toMatchObject({ ok: false, reason: 'cold-start' });
    h.answer(b, 429, { 'retry-after': '1' }, 3);
    expect(h.state.ramp).toBeUndefined();
  });

  it('ends once its window reaches the host concurrency cap', () => {
    const h = new Host({ ...learn, openWindow: 4 });
    h.answer(h.send(0), 200, {}, 1); // window 2
    const round = [h.send(1), h.send(1)];
    for (const t of round) h.answer(t, 200, {}, 2); // window 4: the cap
    expect(h.state.ramp).toBeUndefined();
  });

  it('a request whose answer was never taken in (a store that failed) stops counting by itself', () => {
    const h = new Host(learn);
    h.send(0); // never settled
    expect(h.check(1, 500).ok).toBe(false);
    expect(h.check(1, 1000).ok).toBe(true);
  });

  it('opens the window for good past 1024', () => {
    const h = new Host(learn);
    const t = h.send(0);
    (h.state.ramp as { window: number }).window = 1023.9995;
    h.answer(t, 200, {}, 1);
    expect(h.state.ramp).toBeUndefined();
    // An ended ramp does not come back.
    h.send(2);
    expect(h.state.ramp).toBeUndefined();
  });
});

/**
 * How a declared policy's units come back (`rules/refill.ts`), step by step on fake time: at once
 * until answers show otherwise, then paced at the declared rate.
 */
import { describe, expect, it } from 'vitest';
import { findPolicy } from '../../../src/client/rules/quota.js';
import { Host, ietf, open } from './harness.js';

/** A policy declaring 10 per 1 s (one unit per 100 ms). */
const tenPerSecond = (r: number, t = 1) => ietf(r, t, 10, 1);

describe('refill of a declared policy', () => {
  it('spent, it is sent to again when the units seen at once are back, not at the whole-second reset', () => {
    const h = new Host(open);
    // Six at once (a GCRA of 10/s with a burst of 5), then spent: t says 1 s.
    const first = h.send(0);
    h.answer(first, 200, tenPerSecond(5), 1);
    const burst = Array.from({ length: 5 }, () => h.send(1));
    burst.forEach((ticket, i) => {
      h.answer(ticket, 200, tenPerSecond(4 - i), 2);
    });
    // Six units come back within 600 ms at 10/s, whether at once or one by one.
    expect(h.check(1, 601)).toMatchObject({ ok: false, waitMs: 1, reason: 'learned-limit' });
    expect(h.check(1, 602).ok).toBe(true);
  });

  it('a partial refill shows the units come back one by one: then it is paced at q / w', () => {
    const h = new Host(open);
    h.answer(h.send(0), 200, tenPerSecond(5), 1);
    for (let i = 0; i < 5; i++) h.answer(h.send(1), 200, tenPerSecond(4 - i), 2);
    // The probe at 602 finds 3 left of 6: not a window's turn.
    h.answer(h.send(602), 200, tenPerSecond(2), 603);
    expect(findPolicy(h.state.quota, 's')?.refill).toBe('gradual');
    h.answer(h.send(603), 200, tenPerSecond(1), 604);
    h.answer(h.send(604), 200, tenPerSecond(0), 605);
    // Spent at 605: the next unit 100 ms later, and one each 100 ms after that (a thousandth
    // slower), several in flight if need be.
    expect(h.check(1, 704).ok).toBe(false);
    h.send(705);
    expect(h.check(1, 804).ok).toBe(false);
    expect(h.check(1, 806).ok).toBe(true);
  });

  it('a window found full at its refill waits its turn whole, then one probe, then the rest', () => {
    const h = new Host(open);
    // 10 per 1 s as a fixed window of 5 per 500 ms: five at once.
    h.answer(h.send(0), 200, tenPerSecond(4), 1);
    for (let i = 0; i < 4; i++) h.answer(h.send(1), 200, tenPerSecond(3 - i), 2);
    // At 502 the probe finds it full (4 left besides itself); the trial holds the last unit.
    h.answer(h.send(502), 200, tenPerSecond(4), 503);
    for (let i = 0; i < 3; i++) h.answer(h.send(503), 200, tenPerSecond(3 - i), 504);
    expect(h.check(1, 600)).toMatchObject({ ok: false, reason: 'learned-limit' });
    // Sent at 653, the window had given nothing back: at once it is.
    h.answer(h.send(653), 200, tenPerSecond(0), 654);
    expect(findPolicy(h.state.quota, 's')?.refill).toBe('at-once');
    // Whole again 500 ms after that answer: one probe, whose answer lets the rest go.
    expect(h.check(1, 1153).ok).toBe(false);
    const probe = h.send(1154);
    expect(probe.probed).toEqual(['s']);
    expect(h.check(1, 1154)).toMatchObject({ ok: false, reason: 'probe' });
    h.answer(probe, 200, tenPerSecond(4), 1155);
    for (let i = 0; i < 4; i++) h.send(1155);
    expect(h.check(1, 1155).ok).toBe(false);
  });

  it('a reset of 2 s or more is believed over a model that says sooner', () => {
    const h = new Host(open);
    h.answer(h.send(0), 200, tenPerSecond(0, 3), 0);
    // The model would say 100 ms (one unit seen, 10/s); the server says nothing before 2 s.
    expect(h.check(1, 1999)).toMatchObject({ ok: false, waitMs: 1001 });
  });

  it('a paced request refused ends the pace: refilled as a window from then on', () => {
    const h = new Host(open);
    h.answer(h.send(0), 200, tenPerSecond(5), 1);
    for (let i = 0; i < 5; i++) h.answer(h.send(1), 200, tenPerSecond(4 - i), 2);
    h.answer(h.send(602), 200, tenPerSecond(2), 603);
    h.answer(h.send(603), 200, tenPerSecond(1), 604);
    h.answer(h.send(604), 200, tenPerSecond(0), 605);
    expect(findPolicy(h.state.quota, 's')?.refill).toBe('gradual');
    // The paced request at 705 is refused: the units do not come back at 10/s after all.
    h.answer(h.send(705), 429, { ...tenPerSecond(0), 'retry-after': '1' }, 706);
    expect(findPolicy(h.state.quota, 's')).toMatchObject({ refill: 'at-once', resetAt: 1706 });
    expect(findPolicy(h.state.quota, 's')?.paceAt).toBeUndefined();
    // Once the hold is over, a partial refill is no evidence of a pace again.
    h.answer(h.send(1800), 200, tenPerSecond(3), 1801);
    expect(findPolicy(h.state.quota, 's')?.refill).toBe('at-once');
  });

  it('keeps its state plain JSON', () => {
    const h = new Host(open);
    h.answer(h.send(0), 200, tenPerSecond(0), 1);
    h.answer(h.send(101), 200, tenPerSecond(0), 102);
    expect(JSON.parse(JSON.stringify(h.state))).toEqual(h.state);
  });
});

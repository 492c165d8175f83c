import { describe, expect, it } from 'vitest';
import { BLIND_POLICY } from '../../../src/client/rules/blind.js';
import { Host, ietf, open } from './harness.js';

describe('blind quota (Retry-After only)', () => {
  it('learns the quota per window from the successes before a 429, then probes one at a time', () => {
    const h = new Host(open);
    const batch = Array.from({ length: 8 }, () => h.send(0));
    // The server took 5, refused 3.
    for (let i = 0; i < 5; i++) h.answer(batch[i]!, 200, {}, 1);
    for (let i = 5; i < 8; i++) h.answer(batch[i]!, 429, { 'retry-after': '1' }, 2);
    // Learned from 429s alone: the blind quota's, not a declared policy.
    expect(h.state.blind?.policy).toMatchObject({ name: BLIND_POLICY, remaining: 5 });
    expect(h.state.quota).toBeUndefined();
    expect(h.check(1, 500)).toMatchObject({ ok: false, reason: 'retry-after' });
    // After the hold: five at once, then one probe at a time, once they are answered.
    const after = h.holdUntil;
    const five = Array.from({ length: 5 }, () => h.send(after));
    expect(h.check(1, after)).toMatchObject({ ok: false, reason: 'probe' });
    for (const t of five) h.answer(t, 200, {}, after);
    const probe = h.send(after);
    expect(h.check(1, after)).toMatchObject({ ok: false, reason: 'probe' });
    h.answer(probe, 200, {}, after + 1);
    expect(h.check(1, after + 1).ok).toBe(true);
  });

  it('does not count answers that arrive during the hold (a short estimate beats a long one)', () => {
    const h = new Host(open);
    const a = h.send(0);
    const b = h.send(0);
    const c = h.send(0);
    h.answer(a, 200, {}, 1);
    h.answer(b, 429, { 'retry-after': '1' }, 2);
    h.answer(c, 200, {}, 3); // answered during the hold
    expect(h.state.blind?.policy?.remaining).toBe(1);
  });

  it('sends the probe only once no other answer is pending', () => {
    const h = new Host(open);
    h.answer(h.send(0), 429, { 'retry-after': '1' }, 0);
    const after = h.holdUntil;
    const pending = h.send(after); // probe: the estimate is 0
    expect(h.check(1, after)).toMatchObject({ ok: false, reason: 'probe' });
    h.answer(pending, 200, {}, after + 5);
    expect(h.check(1, after + 5).ok).toBe(true);
  });

  it('gives way to real policies as soon as the server declares some', () => {
    const h = new Host(open);
    h.answer(h.send(0), 429, { 'retry-after': '1' }, 0);
    expect(h.state.blind?.policy).toBeDefined();
    h.answer(h.send(2000), 200, ietf(5, 1), 2000);
    expect(h.state.blind).toBeUndefined();
    expect(h.state.mode).toBe('declared');
  });
});

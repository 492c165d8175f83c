import { describe, expect, it } from 'vitest';
import { TIMED_POLICY } from '../../../src/client/rules/timed.js';
import { Host, ietf, open } from './harness.js';

describe('timed quota: a host that sends only Retry-After', () => {
  it('learns the quota per window from the successes before a 429, then probes one at a time', () => {
    const h = new Host(open);
    const batch = Array.from({ length: 8 }, () => h.send(0));
    // The server took 5, refused 3.
    for (let i = 0; i < 5; i++) h.answer(batch[i]!, 200, {}, 1);
    for (let i = 5; i < 8; i++) h.answer(batch[i]!, 429, { 'retry-after': '1' }, 2);
    // Learned from timed refusals alone: the timed quota's, not a declared policy.
    expect(h.state.timed?.policy).toMatchObject({ name: TIMED_POLICY, remaining: 5 });
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
    expect(h.state.timed?.policy?.remaining).toBe(1);
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

  it('lives beside declared policies: a secondary limit the declared quota does not explain', () => {
    const h = new Host(open);
    // A declared quota with plenty of room, and a secondary limit of 2 writes per window.
    const first = [h.send(0), h.send(0)];
    for (const t of first) h.answer(t, 201, ietf(4998, 3600, 5000, 3600), 1);
    const refused = [h.send(2), h.send(2), h.send(2)];
    for (const t of refused)
      h.answer(t, 429, { ...ietf(4998, 3600, 5000, 3600), 'retry-after': '1' }, 3);
    expect(h.state.mode).toBe('declared');
    expect(h.state.timed?.policy).toMatchObject({ remaining: 2 });
    // When the hold lifts: the window's two at once, then one at a time.
    const after = h.holdUntil;
    h.send(after);
    h.send(after);
    expect(h.check(1, after)).toMatchObject({ ok: false, reason: 'probe', policy: TIMED_POLICY });
  });

  it('leaves a refusal without timing to the pace, and a spent declared policy to the quota', () => {
    const h = new Host(open);
    h.answer(h.send(0), 200, {}, 0);
    h.answer(h.send(1), 429, {}, 1);
    expect(h.state.timed?.policy).toBeUndefined();
    const g = new Host(open);
    g.answer(g.send(0), 429, { ...ietf(0, 5), 'retry-after': '5' }, 0);
    expect(g.state.timed?.policy).toBeUndefined();
  });

  it('forgets the learned quota a window and one more after the last timed refusal', () => {
    const h = new Host(open);
    h.answer(h.send(0), 200, {}, 0);
    h.answer(h.send(1), 429, { 'retry-after': '1' }, 1);
    const policy = h.state.timed?.policy;
    expect(policy).toBeDefined();
    const window = policy?.windowMs ?? 0;
    const end = (policy?.resetAt ?? 0) + window;
    h.prune(end - 1);
    expect(h.state.timed?.policy).toBeDefined();
    h.prune(end);
    expect(h.state.timed?.policy).toBeUndefined();
  });
});

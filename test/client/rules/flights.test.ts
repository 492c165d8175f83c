import { describe, expect, it } from 'vitest';
import { flightExpiry } from '../../../src/client/rules/flights.js';
import type { LearnConfig } from '../../../src/client/rules/host-rules.js';
import { findPolicy } from '../../../src/client/rules/quota.js';
import { elsewhere, Host, ietf, open } from './harness.js';

describe('lost requests: what a dead process left in flight stops counting', () => {
  const conc = (r: number) => ({
    'ratelimit-policy': '"slots";q=2;qu="concurrent-requests"',
    ratelimit: `"slots";r=${r}`,
  });
  const ttl: LearnConfig = { ...open, flightTtlMs: 60_000 };

  it('takes a request as lost at its own time, rounded up to a grain', () => {
    // 60 s: a grain of 2 s (a thirty-second of it, in whole seconds); 5 s: a grain of 1 s.
    expect(flightExpiry(1_000, 60_000)).toBe(62_000);
    expect(flightExpiry(1_001, 60_000)).toBe(62_000);
    expect(flightExpiry(2_001, 60_000)).toBe(64_000);
    expect(flightExpiry(1_500, 5_000)).toBe(7_000);
    // Ten minutes: a grain of 19 s, so at most ~32 entries in flight at once.
    expect(flightExpiry(0, 600_000)).toBe(608_000);
  });

  it('a probe that is never answered holds its policy until its time is up, not forever', () => {
    const h = new Host(ttl);
    h.answer(h.send(0), 200, ietf(0, 1), 0);
    // Past the reset, one probe goes; its process dies with it.
    expect(h.admit(1, 1000)).toMatchObject({ ticket: { probed: ['s'], expires: 62_000 } });
    expect(h.admit(1, 30_000)).toMatchObject({ ok: false, reason: 'probe', waitMs: undefined });
    expect(h.admit(1, 61_999)).toMatchObject({ ok: false, reason: 'probe' });
    expect(h.admit(1, 62_000)).toMatchObject({ ticket: { probed: ['s'] } });
    expect(h.inFlight).toEqual({ units: 1, requests: 1 });
  });

  it("honours each request's own time: a long attempt timeout keeps its slot", () => {
    const h = new Host(ttl);
    h.answer(h.send(0), 200, conc(1), 0); // 2 slots, both free
    // One sent with a 120 s attempt timeout (121 s with the margin), one with none (60 s).
    const long = h.admit(1, 500, 121_000);
    h.admit(1, 500);
    expect(h.admit(1, 59_000)).toMatchObject({ ok: false, reason: 'learned-limit' });
    // The second is lost at 62 s; the first still holds its slot.
    expect(h.admit(1, 62_000)).toMatchObject({ ticket: { seq: 4 } });
    expect(h.admit(1, 62_000)).toMatchObject({ ok: false, reason: 'learned-limit' });
    expect(long).toMatchObject({ ticket: { expires: flightExpiry(500, 121_000) } });
    expect(h.inFlight).toEqual({ units: 2, requests: 2 });
  });

  it('a concurrency slot held by a request never answered comes back once, not twice', () => {
    const h = new Host(ttl);
    h.answer(h.send(0), 200, conc(1), 0); // 2 slots, both free
    const lost = [h.send(500), h.send(500)];
    const next = h.send(62_000);
    expect(next.seq).toBe(4);
    expect(h.inFlight).toEqual({ units: 1, requests: 1 });
    expect(findPolicy(h.state.quota, 'slots')?.remaining).toBe(1);
    // A lost request answered after all gives back nothing more: it gave its slot back already.
    h.noAnswer(lost[0]!, 62_001);
    expect(h.inFlight).toEqual({ units: 1, requests: 1 });
    expect(findPolicy(h.state.quota, 'slots')?.remaining).toBe(1);
    // The live one's does.
    h.noAnswer(next, 62_003);
    expect(h.inFlight).toEqual({ units: 0, requests: 0 });
    expect(h.state.flights?.list ?? []).toEqual([]);
    expect(findPolicy(h.state.quota, 'slots')?.remaining).toBe(2);
  });

  it('a replayed request whose time is up already counts as lost at once', () => {
    const h = new Host(ttl);
    h.answer(h.send(0), 200, conc(0), 0); // 1 slot, free
    // Sent on a local copy at 1 s while the store was away, replayed at 70 s.
    const stale = elsewhere({ probed: [], expires: flightExpiry(1000, 60_000) });
    h.replay(stale, 70_000);
    expect(h.inFlight).toEqual({ units: 0, requests: 0 });
    expect(findPolicy(h.state.quota, 'slots')?.remaining).toBe(1);
    // Its late answer takes nothing from a live request.
    const live = h.commit(1, 70_000);
    h.noAnswer(stale, 70_001);
    expect(h.inFlight).toEqual({ units: 1, requests: 1 });
    expect(live.expires).toBeGreaterThan(70_000);
  });

  it('keeps counting what is due later, and stops at the first entry not due', () => {
    const h = new Host(ttl);
    h.commit(2, 0);
    h.commit(3, 30_500);
    h.prune(59_999);
    expect(h.inFlight).toEqual({ units: 5, requests: 2 });
    h.prune(60_000);
    expect(h.inFlight).toEqual({ units: 3, requests: 1 });
    expect(h.state.flights?.list).toEqual([[92_000, 1, 3]]);
    h.prune(92_000);
    expect(h.inFlight).toEqual({ units: 0, requests: 0 });
    expect(h.state.flights?.list ?? []).toEqual([]);
  });

  it('is JSON: a state read back from a shared store prunes the same', () => {
    const h = new Host(ttl);
    h.commit(1, 5_000);
    h.commit(1, 1_000); // a clock that stepped back: filed in order
    const third = h.commit(2, 5_500);
    expect(h.state.flights?.list).toEqual([
      [62_000, 1, 1],
      [66_000, 2, 3],
    ]);
    h.state = JSON.parse(JSON.stringify(h.state));
    h.prune(62_000);
    expect(h.inFlight).toEqual({ units: 3, requests: 2 });
    expect(h.state.flights?.list).toEqual([[66_000, 2, 3]]);
    // Answers find their entry, wherever it is in the list.
    h.noAnswer(third, 62_001);
    expect(h.inFlight).toEqual({ units: 1, requests: 1 });
    expect(h.state.flights?.list).toEqual([[66_000, 1, 1]]);
  });
});

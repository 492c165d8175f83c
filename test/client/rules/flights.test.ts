import { describe, expect, it } from 'vitest';
import { flightExpiry } from '../../../src/client/rules/flights.js';
import type { LearnConfig } from '../../../src/client/rules/host-rules.js';
import { findPolicy } from '../../../src/client/rules/quota.js';
import { elsewhere, Host, ietf, learn, open } from './harness.js';

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
    const first = h.send(0);
    h.answer(first, 200, conc(1), 0);
    h.bodyEnds(first, 0); // 2 slots, both free
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
    const first = h.send(0);
    h.answer(first, 200, conc(1), 0);
    h.bodyEnds(first, 0); // 2 slots, both free
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

describe('an answer that declares a concurrency policy: in flight until its body ends', () => {
  /** Two slots, and a rate of 100 per minute, as a server that declares both sends them. */
  const both = (slots: number, rate: number) => ({
    'ratelimit-policy': '"slots";q=2;qu="concurrent-requests", "rate";q=100;w=60',
    ratelimit: `"slots";r=${slots}, "rate";r=${rate};t=30`,
  });

  it('keeps the request in flight, and its slot taken, until the end of its body', () => {
    const h = new Host(open);
    const first = h.send(0);
    h.answer(first, 200, both(1, 99), 10);
    expect(h.inFlight).toEqual({ units: 1, requests: 1 });
    expect(findPolicy(h.state.quota, 'slots')?.remaining).toBe(1);
    h.bodyEnds(first, 500);
    expect(h.inFlight).toEqual({ units: 0, requests: 0 });
    expect(findPolicy(h.state.quota, 'slots')?.remaining).toBe(2);
    // An answer without one ends its request with its headers, as before.
    const plain = h.send(600);
    h.answer(plain, 200, ietf(5, 1), 610);
    expect(h.inFlight).toEqual({ units: 0, requests: 0 });
  });

  it("a body's end changes nothing but the requests in flight and the slot", () => {
    const h = new Host(learn); // with the cold-start ramp
    const first = h.send(0);
    h.answer(first, 200, both(1, 99), 10);
    const second = h.send(20);
    h.answer(second, 200, both(0, 98), 30);
    const before = structuredClone(h.state);
    h.bodyEnds(first, 40);
    const after = structuredClone(h.state);
    expect(after.flights?.requests).toBe((before.flights?.requests ?? 0) - 1);
    expect(findPolicy(after.quota, 'slots')?.remaining).toBe(
      (findPolicy(before.quota, 'slots')?.remaining ?? 0) + 1,
    );
    const { flights: _f1, quota: q1, ...rest1 } = before;
    const { flights: _f2, quota: q2, ...rest2 } = after;
    expect(rest2).toEqual(rest1);
    expect(findPolicy(q2, 'rate')).toEqual(findPolicy(q1, 'rate'));
    expect(q2?.applied).toBe(q1?.applied);
  });

  it('a body open when another answer reports is not counted again: the server counts it already', () => {
    const h = new Host(open);
    const first = h.send(0);
    h.answer(first, 200, both(1, 99), 10); // first's body streams on
    const second = h.send(20);
    // The server counts both: 0 slots left, as reported. The rate beside it is taken one lower
    // than reported: the answered request still counts in flight (a concurrency report is read
    // with its own slot counted), and the declared quota cannot tell which policy it charges.
    h.answer(second, 200, both(0, 98), 30);
    expect(findPolicy(h.state.quota, 'slots')?.remaining).toBe(0);
    expect(findPolicy(h.state.quota, 'rate')?.remaining).toBe(97);
    expect(h.state.flights).toMatchObject({ requests: 2, units: 2, open: 2 });
    // Slots come back with bodies, not with time.
    expect(h.check(1, 40)).toMatchObject({ ok: false, reason: 'learned-limit', waitMs: undefined });
    expect(h.check(1, 50_000).ok).toBe(false);
    h.bodyEnds(first, 50);
    expect(h.check(1, 50).ok).toBe(true);
    h.bodyEnds(second, 60);
    expect(findPolicy(h.state.quota, 'slots')?.remaining).toBe(2);
    expect(h.state.flights).toMatchObject({ requests: 0, units: 0 });
    expect(h.state.flights?.open).toBeUndefined();
  });

  it('an open body taken as lost leaves no open units behind', () => {
    const h = new Host(open);
    const first = h.send(0);
    h.answer(first, 200, both(1, 99), 10);
    h.prune(62_000); // its time is up (60 s, rounded up to 2 s)
    expect(h.state.flights).toMatchObject({ requests: 0, units: 0 });
    expect(h.state.flights?.open).toBeUndefined();
    expect(findPolicy(h.state.quota, 'slots')?.remaining).toBe(2);
    // Its end, after all, gives back nothing more.
    h.bodyEnds(first, 63_000);
    expect(findPolicy(h.state.quota, 'slots')?.remaining).toBe(2);
  });
});

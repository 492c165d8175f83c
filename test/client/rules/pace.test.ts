import { describe, expect, it } from 'vitest';
import {
  ACCEPTED_SHARE,
  cubic,
  DOWN_AFTER_MS,
  LONGEST_PROBE_GAP_MS,
  MIN_RATE,
  PACE_TTL_MS,
} from '../../../src/client/rules/pace-curve.js';
import { Host, ietf, open } from './harness.js';

/** Sends `n` requests spread over the 900 ms before `until`, all accepted (the last second's rate). */
function warm(h: Host, n: number, until: number) {
  for (let i = 0; i < n; i++) {
    const at = until - 900 + Math.floor((i * 900) / n);
    h.answer(h.send(at), 200, {}, at);
  }
}

describe('adaptive pace', () => {
  it('never paces a host that never refuses', () => {
    const h = new Host(open);
    for (let t = 0; t < 5000; t += 10) h.answer(h.send(t), 200, {}, t);
    expect(h.state.pace?.rate).toBeUndefined();
    expect(h.check(1, 5000).ok).toBe(true);
  });

  it('cuts to 0.9 of the rate the host accepted over the last second, and the next request waits a full interval', () => {
    const h = new Host(open);
    warm(h, 9, 10_000);
    const refused = h.send(10_000); // the tenth in the last second
    h.answer(refused, 429, {}, 10_001);
    expect(h.state.pace?.rate).toBeCloseTo(ACCEPTED_SHARE * 9, 6);
    // 8.1 a second: the bucket starts empty, the next request goes 124 ms after the cut.
    expect(h.check(1, 10_001)).toMatchObject({ ok: false, reason: 'pace', waitMs: 124 });
    expect(h.check(1, 10_125).ok).toBe(true);
  });

  it('a limit far under the rate sent (2 accepted of 10 sent): paced at 1.8, not at a share of 10', () => {
    const h = new Host(open);
    warm(h, 2, 10_000);
    for (let i = 0; i < 8; i++) h.send(10_000);
    h.answer(h.send(10_000), 429, {}, 10_001);
    expect(h.state.pace?.rate).toBeCloseTo(1.8, 6);
  });

  it('cuts below the rate that was refused, whatever was accepted', () => {
    const h = new Host(open);
    // Ten slow requests sent long ago, accepted within the last second; one sent since, refused.
    const slow = Array.from({ length: 10 }, () => h.send(8000));
    for (const t of slow) h.answer(t, 200, {}, 9900);
    h.answer(h.send(9950), 429, {}, 9951);
    expect(h.state.pace?.rate).toBeCloseTo(ACCEPTED_SHARE * 1, 6); // sent at 1 a second, not 0.9 x 10
  });

  it('after a burst, a refusal at the pace cuts it even while the burst still counts as accepted', () => {
    // Stripe's shape: a bucket of 25 taken at once, 6 more refused: the first cut, to 22.5 a second.
    const h = new Host(open);
    for (const t of Array.from({ length: 25 }, () => h.send(10_000))) h.answer(t, 200, {}, 10_001);
    for (const t of Array.from({ length: 6 }, () => h.send(10_001))) h.answer(t, 429, {}, 10_002);
    expect(h.state.pace?.rate).toBeCloseTo(ACCEPTED_SHARE * 25, 6);
    // Paced and accepted for 300 ms, then one refused: the last second still holds the 25 of the
    // burst, more than the rate refused. The cut goes under that rate (it stayed at it before).
    let t = 10_002;
    while (t < 10_300) {
      t++;
      if (h.check(1, t).ok) h.answer(h.send(t), 200, {}, t);
    }
    while (!h.check(1, t).ok) t++;
    const refusedAt = h.state.pace?.rate ?? 0;
    h.answer(h.send(t), 429, {}, t);
    expect(h.state.pace?.rate).toBeLessThanOrEqual(ACCEPTED_SHARE * refusedAt + 1e-9);
  });

  it('cuts once per overshoot: refusals of requests sent before the cut say nothing new', () => {
    const h = new Host(open);
    warm(h, 10, 10_000);
    const inFlight = [h.send(10_000), h.send(10_000), h.send(10_000)];
    h.answer(inFlight[0]!, 429, {}, 10_010);
    const rate = h.state.pace?.rate;
    h.answer(inFlight[1]!, 429, {}, 10_011);
    h.answer(inFlight[2]!, 429, {}, 10_012);
    expect(h.state.pace?.rate).toBe(rate);
    // A request sent after the cut and refused cuts again.
    const after = h.send(10_200);
    h.answer(after, 429, {}, 10_201);
    expect(h.state.pace?.rate).toBeLessThan(rate ?? 0);
  });

  it('stops pacing a host that fails everything for a second after a cut: an outage, not a shedder', () => {
    const h = new Host(open);
    warm(h, 10, 10_000);
    // A fast 503 while the host accepts others: a shedder's pushback, the pace is cut.
    h.answer(h.send(10_000), 503, {}, 10_001);
    const rate = h.state.pace?.rate;
    expect(rate).toBeDefined();
    // Sent after the cut and failed, within the second: still paced (a shedder may refuse one).
    let t = 10_001 + 200;
    h.answer(h.send(t), 503, {}, t + 1);
    expect(h.state.pace?.rate).toBe(rate);
    // Nothing accepted for a second since the cut: down, the pace stops, and no new cut comes.
    t = 10_001 + DOWN_AFTER_MS + 10;
    h.answer(h.send(t), 503, {}, t + 1);
    expect(h.state.pace?.rate).toBeUndefined();
    expect(h.check(1, t + 2).ok).toBe(true);
    h.answer(h.send(t + 2), 503, {}, t + 3);
    expect(h.state.pace?.rate).toBeUndefined();
    // Back up, then a shedder's refusal again: pacing starts again.
    for (let i = 0; i < 5; i++) h.answer(h.send(t + 100 + i), 200, {}, t + 101 + i);
    h.answer(h.send(t + 200), 503, {}, t + 201);
    expect(h.state.pace?.rate).toBeDefined();
  });

  it('grows back along the cubic curve: at the peak after K seconds, faster beyond', () => {
    const [peak, floor] = [10, 8.1];
    const k = Math.cbrt((peak - floor) / 0.4) * 1000;
    expect(cubic(peak, floor, 0)).toBeCloseTo(floor, 6);
    expect(cubic(peak, floor, k)).toBeCloseTo(peak, 6);
    expect(cubic(peak, floor, k + 500) - cubic(peak, floor, k)).toBeLessThan(
      cubic(peak, floor, k + 2000) - cubic(peak, floor, k + 1500),
    );
    // Through the rule: accepted answers move the pace along the curve.
    const h = new Host(open);
    warm(h, 9, 10_000);
    h.answer(h.send(10_000), 429, {}, 10_000); // cut at 10 000 from 10 a second
    let t = 10_000;
    while (t < 10_000 + k) {
      t += 150;
      if (h.check(1, t).ok) h.answer(h.send(t), 200, {}, t);
    }
    expect(h.state.pace?.rate).toBeGreaterThan(ACCEPTED_SHARE * 9);
    expect(h.state.pace?.rate).toBeLessThanOrEqual(
      cubic(10, ACCEPTED_SHARE * 9, t - 10_000) + 1e-9,
    );
  });

  it('grows to twice the rate actually sent, no further', () => {
    const h = new Host(open);
    warm(h, 9, 10_000);
    h.answer(h.send(10_000), 429, {}, 10_000);
    // One request every 5 s from then on: the cubic curve would take off, the cap does not.
    for (let t = 15_000; t <= 50_000; t += 5000) h.answer(h.send(t), 200, {}, t);
    expect(h.state.pace?.rate).toBeLessThanOrEqual(2);
  });

  it('stops pacing after a minute without a refusal', () => {
    const h = new Host(open);
    warm(h, 9, 10_000);
    h.answer(h.send(10_000), 429, {}, 10_000);
    expect(h.state.pace?.rate).toBeDefined();
    const at = 10_000 + PACE_TTL_MS;
    h.answer(h.send(at), 200, {}, at);
    expect(h.state.pace?.rate).toBeUndefined();
    expect(h.check(1, at).ok).toBe(true);
  });

  it('leaves a refusal its headers explain (a spent policy) to the declared quota', () => {
    const h = new Host(open);
    h.answer(h.send(0), 429, ietf(0, 2), 0);
    expect(h.state.pace?.rate).toBeUndefined();
    expect(h.check(1, 1)).toMatchObject({ ok: false, reason: 'retry-after' });
  });

  it('never cuts below MIN_RATE', () => {
    const h = new Host(open);
    // Refused while nothing else was sent in the last second: the cut is to MIN_RATE, not below.
    h.answer(h.send(0), 429, {}, 1);
    expect(h.state.pace?.rate).toBe(MIN_RATE);
    // Accepted since, then refused again: a cut again, still MIN_RATE at least.
    h.answer(h.send(2001), 200, {}, 2002);
    h.answer(h.send(4003), 429, {}, 4004);
    expect(h.state.pace?.misses).toBeUndefined();
    expect(h.state.pace?.rate).toBeGreaterThanOrEqual(MIN_RATE);
  });

  // Issue 23 §3: probing every 2 s (MIN_RATE) kept a limiter that counts its refusals locked out.
  it('in a lockout, probes less often with every refused probe, down to one per LONGEST_PROBE_GAP_MS', () => {
    const h = new Host(open);
    let t = 0;
    const gaps: number[] = [];
    let last = 0;
    for (let i = 0; i < 40; i++) {
      while (!h.check(1, t).ok) t += 10;
      if (i > 0) gaps.push(t - last);
      last = t;
      h.answer(h.send(t), 429, {}, t + 1);
      t += 1;
    }
    // Each gap at least as long as the one before (to the 10 ms step), the last ones at the cap.
    for (let i = 1; i < gaps.length; i++) expect(gaps[i]).toBeGreaterThanOrEqual(gaps[i - 1]! - 10);
    expect(gaps.at(-1)).toBeGreaterThanOrEqual(LONGEST_PROBE_GAP_MS);
    expect(gaps.at(-1)).toBeLessThanOrEqual(LONGEST_PROBE_GAP_MS + 20);
  });
});

describe('a load shedder’s 5xx is pushback, a failing host’s is not', () => {
  it('a fast 503 while the host accepts others is pushback: the pace slows down', () => {
    const h = new Host(open);
    warm(h, 10, 10_000);
    const shed = h.settle(h.send(10_000), 503, {}, 10_005);
    expect(shed.pushback).toBe(true);
    expect(h.state.pace?.rate).toBeDefined();
    // Requests in flight at the cut were sent at the old rate: their 503s are pushback too.
    const early = h.commit(1, 10_000);
    expect(h.settle(early, 503, {}, 10_006).pushback).toBe(true);
  });

  it('a 503 when nothing got through since slowing down is the host failing', () => {
    const h = new Host(open);
    warm(h, 10, 10_000);
    h.settle(h.send(10_000), 503, {}, 10_005); // the cut
    let t = 10_005;
    while (!h.check(1, t).ok) t++;
    expect(h.settle(h.send(t), 503, {}, t + 1).pushback).toBe(false);
  });

  it('a 503 after something got through since the cut is pushback again', () => {
    const h = new Host(open);
    warm(h, 10, 10_000);
    h.settle(h.send(10_000), 503, {}, 10_005);
    let t = 10_005;
    while (!h.check(1, t).ok) t++;
    h.answer(h.send(t), 200, {}, t + 1);
    while (!h.check(1, t).ok) t++;
    expect(h.settle(h.send(t), 503, {}, t + 1).pushback).toBe(true);
  });

  it('a 503 from a host that never accepted anything, or a slow one, is a failure', () => {
    const h = new Host(open);
    expect(h.settle(h.send(0), 503, {}, 5).pushback).toBe(false);
    const g = new Host(open);
    warm(g, 10, 10_000);
    expect(g.settle(g.send(10_000), 503, {}, 13_000).pushback).toBe(false);
  });
});

/**
 * Issue 23 §3: a limiter that counts the requests it refuses (HAProxy's stick table with `deny`),
 * and says nothing. A burst of 20 is accepted, then everything is refused until the limiter's
 * count has drained.
 */
describe('a lockout (a limiter that counts its refusals)', () => {
  /** 20 accepted within the last second before `at`, then a refusal at `at`. */
  function burst(h: Host, at: number) {
    for (let i = 0; i < 20; i++) h.answer(h.send(at - 50 + i), 200, {}, at - 40 + i);
    return h.settle(h.send(at), 429, {}, at + 1);
  }

  /** Sends whenever the pace lets a request go in [from, to), answered by `answer(t)`. */
  function drive(h: Host, from: number, to: number, status: (t: number) => number) {
    const sent: number[] = [];
    for (let t = from; t < to; t += 5) {
      if (!h.check(1, t).ok) continue;
      sent.push(t);
      h.answer(h.send(t), status(t), {}, t + 2);
    }
    return sent;
  }

  it('sends a few requests in the second after the refusal, not 18', () => {
    const h = new Host(open);
    burst(h, 10_000);
    const sent = drive(h, 10_001, 11_001, () => 429);
    expect(sent.length).toBeLessThanOrEqual(4);
    expect(h.state.pace?.misses).toBe(sent.length);
  });

  it('reports the lockout with each answer (its retries wait for the probes)', () => {
    const h = new Host(open);
    expect(burst(h, 10_000).lockout).toBe(false);
    let t = 10_002;
    while (!h.check(1, t).ok) t++;
    expect(h.settle(h.send(t), 429, {}, t + 1).lockout).toBe(true);
    while (!h.check(1, t).ok) t++;
    expect(h.settle(h.send(t), 200, {}, t + 1).lockout).toBe(false);
  });

  it('after it, starts at the rate accepted over the whole stretch and grows to twice that at most', () => {
    const h = new Host(open);
    burst(h, 10_000);
    // Refused until 25 s, accepted from then on.
    drive(h, 10_001, 40_000, (t) => (t < 25_000 ? 429 : 200));
    // 21 accepted over the 16 s from the second before the first refusal to the first accepted
    // probe: about 1.3 a second, where the pace had regrown 2, 8, 16, 25 a second before.
    const rates: number[] = [];
    for (let t = 40_000; t < 70_000; t += 5) {
      if (!h.check(1, t).ok) continue;
      h.answer(h.send(t), 200, {}, t + 2);
      rates.push(h.state.pace?.rate ?? Number.NaN);
    }
    expect(Math.max(...rates)).toBeLessThanOrEqual(2 * (21 / 16) + 1e-9);
    expect(Math.min(...rates)).toBeGreaterThan(1);
  });

  it('ends with any acceptance, of a request sent before its last miss too', () => {
    const h = new Host(open);
    burst(h, 10_000);
    const early = h.commit(1, 10_002); // out while the probes are refused
    drive(h, 10_003, 12_000, () => 429);
    expect(h.state.pace?.misses).toBeGreaterThan(0);
    expect(h.settle(early, 200, {}, 12_001).lockout).toBe(false);
    expect(h.state.pace?.misses).toBeUndefined();
  });

  it('probes no faster than every LONGEST_PROBE_GAP_MS once the lockout is long', () => {
    const h = new Host(open);
    burst(h, 10_000);
    const sent = drive(h, 10_001, 600_000, () => 429);
    const gaps = sent.slice(1).map((t, i) => t - (sent[i] as number));
    expect(gaps.at(-1)).toBeGreaterThanOrEqual(LONGEST_PROBE_GAP_MS);
    expect(sent.filter((t) => t >= 300_000).length).toBeLessThanOrEqual(
      300_000 / LONGEST_PROBE_GAP_MS + 1,
    );
  });
});

describe('never past a rate that failed', () => {
  it('after a rate sent at the pace is refused, grows back to it and stops there', () => {
    const h = new Host(open);
    warm(h, 9, 10_000);
    h.answer(h.send(10_000), 429, {}, 10_000); // the first cut, to 8.1 a second
    // Accepted at the pace for a while, then one refused: the rate sent at the pace failed.
    let t = 10_000;
    const at = () => {
      while (!h.check(1, t).ok) t++;
      return t;
    };
    for (let i = 0; i < 20; i++) h.answer(h.send(at()), 200, {}, t + 1);
    const refusedAt = h.state.pace?.rate ?? 0;
    h.answer(h.send(at()), 429, {}, t + 1);
    // The rate that failed: the pace, or what was sent over the last second when less.
    const ceiling = h.state.pace?.ceiling ?? 0;
    expect(ceiling).toBeGreaterThan(1);
    expect(ceiling).toBeLessThanOrEqual(refusedAt + 1e-9);
    // A minute (less a second) of acceptances: the pace levels off at the rate that failed.
    const end = t + PACE_TTL_MS - 1000;
    while (t < end) h.answer(h.send(at()), 200, {}, t + 1);
    expect(h.state.pace?.rate).toBeLessThanOrEqual(ceiling + 1e-9);
    expect(h.state.pace?.rate).toBeGreaterThan(0.9 * ceiling);
  });
});

describe("a call's own refusals (a route refused for good beside routes the host serves)", () => {
  it('takes no rate from a call refused a second time while the host served others', () => {
    const h = new Host(open);
    warm(h, 5, 10_000);
    // The call's first refusal cuts the pace, as any refusal that explains nothing.
    const first = h.send(10_000);
    h.answer(first, 429, {}, 10_001);
    expect(h.state.pace?.rate).toBeCloseTo(ACCEPTED_SHARE * 5, 6);
    let t = 10_001;
    const accept = () => {
      while (!h.check(1, t).ok) t += 10;
      h.answer(h.send(t), 200, {}, t + 1);
      t += 1;
    };
    // Others accepted; its retry refused: once could be an overshoot, so the pace is cut.
    accept();
    while (!h.check(1, t).ok) t += 10;
    const second = h.send(t);
    const once = h.settle(second, 429, {}, t + 1, { at: 10_001, seq: first.seq, served: 0 });
    expect(once.served).toBe(true);
    const rate = h.state.pace?.rate;
    const cutAt = h.state.pace?.cutAt;
    expect(cutAt).toBe(t + 1);
    t += 1;
    // Others accepted again; refused again: its own. No cut, no miss.
    accept();
    while (!h.check(1, t).ok) t += 10;
    const third = h.send(t);
    const twice = h.settle(third, 429, {}, t + 1, {
      at: cutAt as number,
      seq: second.seq,
      served: 1,
    });
    expect(twice.served).toBe(true);
    expect(h.state.pace).toMatchObject({ rate: expect.any(Number), cutAt });
    expect(h.state.pace?.misses).toBeUndefined();
    expect(h.state.pace?.rate).toBeGreaterThanOrEqual(rate as number);
  });

  it('an acceptance answered late, of a request sent before the refusal, is no one served', () => {
    // A slow upstream behind a limiter that refuses at once (HAProxy on a loaded machine): the
    // burst's 200s come back after the 429s of requests sent later.
    const h = new Host(open);
    warm(h, 5, 10_000);
    const slow = [h.send(10_000), h.send(10_000), h.send(10_000)];
    const first = h.send(10_000);
    h.answer(first, 429, {}, 10_001);
    h.answer(slow[0]!, 200, {}, 10_300);
    let t = 10_300;
    while (!h.check(1, t).ok) t += 10;
    const second = h.send(t);
    const once = h.settle(second, 429, {}, t + 1, { at: 10_001, seq: first.seq, served: 0 });
    expect(once.served).toBe(false);
    const refusedAt = t + 1;
    h.answer(slow[1]!, 200, {}, t + 200);
    t += 200;
    while (!h.check(1, t).ok) t += 10;
    const third = h.send(t);
    const twice = h.settle(third, 429, {}, t + 1, { at: refusedAt, seq: second.seq, served: 0 });
    expect(twice.served).toBe(false);
    // Then a request sent after the refusal and accepted: that one is the host serving others.
    const thirdAt = t + 1;
    t += 1;
    while (!h.check(1, t).ok) t += 10;
    h.answer(h.send(t), 200, {}, t + 1);
    t += 1;
    while (!h.check(1, t).ok) t += 10;
    const fourth = h.send(t);
    const served = h.settle(fourth, 429, {}, t + 1, { at: thirdAt, seq: third.seq, served: 0 });
    expect(served.served).toBe(true);
  });

  it('still cuts for a call refused again when nothing was accepted since its last refusal', () => {
    const h = new Host(open);
    warm(h, 5, 10_000);
    const first = h.send(10_000);
    h.answer(first, 429, {}, 10_001);
    let t = 10_001;
    while (!h.check(1, t).ok) t += 10;
    const retry = h.send(t);
    const settled = h.settle(retry, 429, {}, t + 1, { at: 10_001, seq: first.seq, served: 1 });
    expect(settled.served).toBe(false);
    expect(h.state.pace?.misses).toBe(1);
  });
});

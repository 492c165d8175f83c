import { describe, expect, it } from 'vitest';
import {
  ACCEPTED_SHARE,
  cubic,
  DOWN_AFTER_MS,
  MIN_RATE,
  PACE_TTL_MS,
} from '../../../src/client/rules/pace.js';
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

  it('never cuts above the rate that was refused, whatever was accepted', () => {
    const h = new Host(open);
    // Ten slow requests sent long ago, accepted within the last second; one sent since, refused.
    const slow = Array.from({ length: 10 }, () => h.send(8000));
    for (const t of slow) h.answer(t, 200, {}, 9900);
    h.answer(h.send(9950), 429, {}, 9951);
    expect(h.state.pace?.rate).toBe(1); // sent at 1 a second, not 0.9 x 10
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

  it('never goes below MIN_RATE', () => {
    const h = new Host(open);
    let t = 0;
    for (let i = 0; i < 30; i++) {
      while (!h.check(1, t).ok) t += 100;
      h.answer(h.send(t), 429, {}, t + 1);
      t += 1;
    }
    expect(h.state.pace?.rate).toBe(MIN_RATE);
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

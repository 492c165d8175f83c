import { describe, expect, it } from 'vitest';
import { COME_BACK_NOW_MS } from '../../../src/client/rules/hold.js';
import type { LearnConfig } from '../../../src/client/rules/host-rules.js';
import { Host, ietf, open } from './harness.js';

describe('waits longer than maxHoldMs', () => {
  const capped: LearnConfig = { ...open, maxHoldMs: 60_000 };
  const year = 31_622_400_000;

  it('a hold is recorded for maxHoldMs at most, keeps the server wait, and lets one probe go after', () => {
    const h = new Host(capped);
    h.answer(h.send(0), 503, { 'retry-after': String(year / 1000) }, 0);
    expect(h.holdUntil).toBeLessThanOrEqual(60_000 + 1000);
    expect(h.check(1, 30_000)).toMatchObject({
      ok: false,
      reason: 'retry-after',
      serverWaitMs: year - 30_000,
    });
    const at = h.holdUntil;
    const probe = h.send(at);
    // While the probe is out, the hold is armed again.
    expect(h.check(1, at + 1)).toMatchObject({ ok: false, reason: 'retry-after' });
    expect(h.holdUntil).toBe(at + 60_000);
    h.answer(probe, 200, {}, at + 10);
    expect(h.check(1, at + 10).ok).toBe(true);
    expect(h.state.hold?.base).toBeUndefined();
  });

  it('a probe refused again holds again, for maxHoldMs at most', () => {
    const h = new Host(capped);
    h.answer(h.send(0), 429, { 'retry-after': '86400' }, 0);
    const probe = h.send(h.holdUntil);
    const at = h.holdUntil;
    h.answer(probe, 429, { 'retry-after': '86400' }, at);
    expect(h.holdUntil).toBeGreaterThan(at);
    expect(h.holdUntil).toBeLessThanOrEqual(at + 61_000);
  });

  it('an answer to a request sent before the hold does not end it', () => {
    const h = new Host(capped);
    const early = h.send(0);
    h.answer(h.send(0), 429, { 'retry-after': '86400' }, 1);
    h.answer(early, 200, {}, 2);
    expect(h.check(1, 2)).toMatchObject({ ok: false, reason: 'retry-after' });
  });

  it('a reset is recorded for maxHoldMs at most, then a probe goes', () => {
    const h = new Host(capped);
    h.answer(
      h.send(0),
      200,
      { 'ratelimit-policy': '"day";q=10;w=86400', ratelimit: `"day";r=0;t=${year / 1000}` },
      0,
    );
    expect(h.check(1, 1)).toMatchObject({
      ok: false,
      reason: 'learned-limit',
      waitMs: 59_999,
      serverWaitMs: year - 1,
    });
    expect(h.send(60_000).probed).toEqual(['day']);
  });
});

describe('holds after a pushback', () => {
  it('a 429 with Retry-After holds the host that long, plus at most 5 % jitter', () => {
    const h = new Host(open);
    h.answer(h.send(0), 429, { 'retry-after': '2' }, 100);
    expect(h.holdUntil).toBeGreaterThanOrEqual(2100);
    expect(h.holdUntil).toBeLessThanOrEqual(2200);
    expect(h.check(1, 1000)).toMatchObject({ ok: false, reason: 'retry-after' });
    expect(h.check(1, h.holdUntil).ok).toBe(true);
  });

  it('a 503 holds only when it says when to come back', () => {
    const h = new Host(open);
    h.answer(h.send(0), 503, {}, 0);
    expect(h.holdUntil).toBe(0);
    h.answer(h.send(0), 503, { 'retry-after': '3' }, 0);
    expect(h.holdUntil).toBeGreaterThanOrEqual(3000);
  });

  it('a 429 without Retry-After uses the reset of the spent policy, else a second for a spent policy without one', () => {
    const h = new Host(open);
    h.answer(h.send(0), 429, ietf(0, 4), 0);
    expect(h.holdUntil).toBeGreaterThanOrEqual(4000);
    const t = new Host(open);
    t.answer(t.send(0), 429, { 'x-ratelimit-limit': '10', 'x-ratelimit-remaining': '0' }, 0);
    expect(t.holdUntil).toBeGreaterThanOrEqual(1000);
    expect(t.holdUntil).toBeLessThanOrEqual(1050);
  });

  it('a 429 with no timing at all holds nothing: the pace slows down instead', () => {
    const h = new Host(open);
    expect(h.answer(h.send(0), 429, {}, 0)).toBeGreaterThan(0); // the pace's next opening
    expect(h.holdUntil).toBe(0);
    expect(h.check(1, 1)).toMatchObject({ ok: false, reason: 'pace' });
  });

  // koa-ratelimit sends `Retry-After: 0` in a window's last second, the exact reset beside it, and
  // 0 again while a window outlives the reset it announced: a retry at once meets the same wall.
  describe('a wait of 0 is no timing', () => {
    it('Retry-After: 0 beside a spent policy with a reset: the reset is used', () => {
      const h = new Host(open);
      h.answer(h.send(0), 429, { 'retry-after': '0', ...ietf(0, 1) }, 0);
      expect(h.holdUntil).toBeGreaterThanOrEqual(1000);
      expect(h.holdUntil).toBeLessThanOrEqual(1050);
    });

    it('Retry-After: 0 beside a spent policy whose reset is past: the fallback hold', () => {
      const h = new Host(open);
      const headers = {
        'retry-after': '0',
        'x-ratelimit-limit': '10',
        'x-ratelimit-remaining': '0',
        'x-ratelimit-reset': '0',
      };
      h.answer(h.send(0), 429, headers, 0);
      expect(h.holdUntil).toBeGreaterThanOrEqual(1000);
      expect(h.holdUntil).toBeLessThanOrEqual(1050);
    });

    // Issue 24, item 1: "come back now" forever switched off every protection (each retry backed
    // off on its own, the pace was not cut): it is paced like a refusal that gives no time.
    it.each([
      ['Retry-After: 0', { 'retry-after': '0' }],
      ['Retry-After: 0.001', { 'retry-after': '0.001' }],
      [
        `retry-after-ms under ${COME_BACK_NOW_MS}`,
        { 'retry-after-ms': String(COME_BACK_NOW_MS - 1) },
      ],
      ['a Retry-After date already past', { 'retry-after': 'Thu, 01 Jan 1970 00:00:00 GMT' }],
    ])('%s alone holds nothing, teaches no window, and slows the pace down', (_name, headers) => {
      const h = new Host(open);
      h.answer(h.send(5000), 429, headers, 5000);
      expect(h.holdUntil).toBe(0);
      expect(h.state.timed?.policy).toBeUndefined();
      expect(h.state.pace?.rate).toBeDefined();
      expect(h.check(1, 5001)).toMatchObject({ ok: false, reason: 'pace' });
    });

    it(`a wait of ${COME_BACK_NOW_MS} ms is timing: the host is held for it`, () => {
      const h = new Host(open);
      h.answer(h.send(0), 429, { 'retry-after-ms': String(COME_BACK_NOW_MS) }, 0);
      expect(h.holdUntil).toBeGreaterThanOrEqual(COME_BACK_NOW_MS);
      expect(h.state.pace?.rate).toBeUndefined();
    });
  });

  it('is dropped once over, server end included', () => {
    const h = new Host(open);
    h.answer(h.send(0), 429, { 'retry-after': '1' }, 0);
    expect(h.state.hold).toBeDefined();
    h.send(2000);
    expect(h.state.hold).toBeUndefined();
  });
});

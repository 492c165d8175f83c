import { describe, expect, it } from 'vitest';
import { REFUSING_CALLS, REFUSING_COUNT, REFUSING_MS } from '../../../src/client/rules/refusal.js';
import { Host, open } from './harness.js';

/** Refusals from `from` until `until`, each sent when the rules let it go (checked every 500 ms). */
function refuseUntil(h: Host, from: number, until: number) {
  let t = from;
  while (t < until) {
    if (h.check(1, t).ok) h.answer(h.send(t), 429, {}, t + 1);
    t += 500;
  }
  return t;
}

describe('a host that refuses everything', () => {
  it(`after ${REFUSING_COUNT} refusals over ${REFUSING_MS} ms: one probe at a time, the others refused at once`, () => {
    const h = new Host(open);
    let t = 0;
    // Refused every second (Retry-After: 1), five times over ten seconds.
    for (let i = 0; i < REFUSING_COUNT; i++) {
      h.answer(h.send(t), 429, { 'retry-after': '1' }, t);
      t += REFUSING_MS / (REFUSING_COUNT - 1);
    }
    t = Math.max(t, h.holdUntil + 1);
    // No request out: this one goes, as the probe (pace and hold permitting).
    while (!h.check(1, t).ok) t += 10;
    const probe = h.send(t);
    // While it is out, everyone else is told at once that the host refuses.
    expect(h.check(1, t)).toMatchObject({
      ok: false,
      reason: 'refusing',
      serverWaitMs: Number.POSITIVE_INFINITY,
    });
    // Its acceptance ends it.
    h.answer(probe, 200, {}, t + 1);
    expect(h.state.refusal).toBeUndefined();
  });

  it('is not refusing before the time is up, however many refusals', () => {
    const h = new Host(open);
    const out = h.send(0);
    for (let i = 0; i < 20; i++) h.answer(h.commit(1, i), 429, {}, i + 1);
    expect(h.state.refusal?.count).toBe(20);
    expect(h.check(1, 100)).not.toMatchObject({ reason: 'refusing' });
    h.answer(out, 200, {}, 200);
    expect(h.state.refusal).toBeUndefined();
  });

  // A route the host refuses for good beside routes it serves: one call's first attempt, then
  // only its retries, were the whole run, and the calls waiting behind them, never tried, were
  // ended as if the host refused everything.
  it(`needs the first attempts of ${REFUSING_CALLS} calls, not one call's retries alone`, () => {
    const h = new Host(open);
    h.answer(h.send(0), 429, {}, 1);
    let t = 500;
    for (let i = 0; i < 3 * REFUSING_COUNT; i++, t += REFUSING_MS / REFUSING_COUNT) {
      const retry = h.commit(1, t);
      retry.first = false;
      h.answer(retry, 429, {}, t + 1);
    }
    expect(h.state.refusal).toMatchObject({ count: 1 + 3 * REFUSING_COUNT, calls: 1 });
    const out = h.commit(1, t);
    expect(h.check(1, t + 1)).not.toMatchObject({ reason: 'refusing' });
    // Another call's first attempt refused too: now the host refuses everything.
    h.answer(out, 429, {}, t + 2);
    h.commit(1, t + 3);
    expect(h.check(1, t + 4)).toMatchObject({ ok: false, reason: 'refusing' });
  });

  // Issue 23 §3: at 11 s the rule ended every queued call against HAProxy's stick table, whose
  // lockout (it counts the refusals) lasts longer than its 10 s period. The caller allows a server
  // to hold it for maxRetryAfterMs; the host is taken as refusing after that long.
  it('takes as long as the caller allows a server wait (maxRetryAfterMs) before giving up', () => {
    const h = new Host({ ...open, maxHoldMs: 60_000 });
    const t = refuseUntil(h, 0, 20_000);
    expect(h.state.refusal?.count).toBeGreaterThanOrEqual(REFUSING_COUNT);
    // A request out: a host taken as refusing would tell anyone else at once.
    const out = h.commit(1, t);
    expect(h.check(1, t + 1)).not.toMatchObject({ reason: 'refusing' });
    h.answer(out, 429, {}, t + 2);
    refuseUntil(h, t + 500, 61_000);
    h.commit(1, 61_000); // a request out: anyone else is told at once
    expect(h.check(1, 61_001)).toMatchObject({ ok: false, reason: 'refusing' });
  });
});

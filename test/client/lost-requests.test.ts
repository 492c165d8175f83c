/**
 * A process that dies with requests out leaves them counted in the state it shared. Those counts
 * must not hold the other processes forever: past `flightTtlMs` (60 s, or the attempt timeout
 * plus a second) they are taken as lost. Two clients share one store here, as two processes
 * share Redis; the first one's fetch never answers, as a dead process's never would.
 */
import { describe, expect, it } from 'vitest';
import { MemoryStateStore, wrapFetch } from '../../src/index.js';
import { FakeClock, respond, scriptedFetch } from './helpers.js';

const URL_ = 'https://api.example.com/x';

describe('requests lost with a dead process', () => {
  it('a probe that never comes back holds the others for a minute, not forever', async () => {
    const clock = new FakeClock();
    const store = new MemoryStateStore({ clock });
    const live = scriptedFetch(clock, () =>
      respond(200, { 'ratelimit-policy': '"s";q=1;w=1', ratelimit: '"s";r=0;t=1' }),
    );
    const dead = scriptedFetch(clock, () => new Promise<Response>(() => {}));
    const alive = wrapFetch(live, { clock, store, coldStart: false });
    const dying = wrapFetch(dead, { clock, store, coldStart: false });

    await alive(URL_); // quota spent until the reset
    await clock.advance(1500);
    void dying(URL_); // the probe after the reset: it never returns
    await clock.advance(10);
    expect(dead.calls).toHaveLength(1);

    const held: string[] = [];
    alive.on('held', (e) => held.push(e.reason));
    const next = alive(URL_);
    await clock.advance(30_000);
    // Still waiting for the probe's answer that may tell how much came back.
    expect(live.calls).toHaveLength(1);
    expect(held).toEqual(['probe']);
    const waited = await clock.until(next, 120_000, 250);
    expect((await next).status).toBe(200);
    expect(live.calls).toHaveLength(2);
    // About a minute from the probe (its second's end at most), polled every 250 ms.
    expect(30_000 + waited).toBeGreaterThanOrEqual(59_000);
    expect(30_000 + waited).toBeLessThanOrEqual(62_000);
  });

  it('with an attempt timeout, a lost request counts for that long and a second more', async () => {
    const clock = new FakeClock();
    const store = new MemoryStateStore({ clock });
    const slots = {
      'ratelimit-policy': '"slots";q=1;qu="concurrent-requests"',
      // Reported while the request holds the one slot.
      ratelimit: '"slots";r=0',
    };
    const live = scriptedFetch(clock, () => respond(200, slots));
    const dead = scriptedFetch(clock, () => new Promise<Response>(() => {}));
    const options = { clock, store, coldStart: false as const, attemptTimeoutMs: 5000 };
    const alive = wrapFetch(live, options);
    // The dying process has no attempt timeout of its own any more: it is gone.
    const dying = wrapFetch(dead, { ...options, attemptTimeoutMs: Number.POSITIVE_INFINITY });

    await alive(URL_); // one concurrent slot, free
    void dying(URL_); // takes it and never gives it back
    await clock.advance(10);
    const next = alive(URL_);
    const waited = await clock.until(next, 120_000, 250);
    expect((await next).status).toBe(200);
    expect(waited).toBeGreaterThanOrEqual(5000);
    expect(waited).toBeLessThanOrEqual(7000);
  });
});

/**
 * A process that dies with requests out leaves them counted in the state it shared. Those counts
 * must not hold the other processes forever: past their own time (the attempt timeout they were
 * sent with plus a second, or 60 s without one) they are taken as lost. Two clients share one store here, as two processes
 * share Redis; the first one's fetch never answers, as a dead process's never would.
 */
import { describe, expect, it } from 'vitest';
import { MemoryStateStore, wrapFetch } from '../../src/index.js';
import type { Clock } from '../../src/shared/clock.js';
import { FakeClock, respond, scriptedFetch } from './helpers.js';

const URL_ = 'https://api.example.com/x';
/** One concurrent slot, reported while the request holds it. */
const SLOTS = {
  'ratelimit-policy': '"slots";q=1;qu="concurrent-requests"',
  ratelimit: '"slots";r=0',
};

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
    const live = scriptedFetch(clock, () => respond(200, SLOTS));
    const dead = scriptedFetch(clock, () => new Promise<Response>(() => {}));
    const alive = wrapFetch(live, { clock, store, coldStart: false });
    // The dying process sent with a 5 s attempt timeout, then died: its timers never fire.
    const dying = wrapFetch(dead, { clock: frozen(clock), store, coldStart: false });

    await (await alive(URL_)).text(); // one concurrent slot, free once its body is read
    void dying(URL_, { attemptTimeoutMs: 5000 }); // takes it and never gives it back
    await clock.advance(10);
    const next = alive(URL_);
    const waited = await clock.until(next, 120_000, 250);
    expect((await next).status).toBe(200);
    // Its own time (5 s + 1 s, rounded up to the second), not the other process's.
    expect(waited).toBeGreaterThanOrEqual(5990);
    expect(waited).toBeLessThanOrEqual(7250);
  });

  it('a live request keeps its slot for as long as its own attempt timeout allows', async () => {
    const clock = new FakeClock();
    const store = new MemoryStateStore({ clock });
    let inFlight = 0;
    let most = 0;
    // A server with one concurrent slot; the slow call takes 90 s to answer.
    const server = scriptedFetch(clock, async (call) => {
      inFlight++;
      most = Math.max(most, inFlight);
      if (call.url.endsWith('/slow')) await clock.sleep(90_000);
      inFlight--;
      return respond(200, SLOTS);
    });
    const quick = wrapFetch(server, { clock, store, coldStart: false, attemptTimeoutMs: 2000 });
    const patient = wrapFetch(server, { clock, store, coldStart: false });
    await (await quick(URL_)).text(); // its slot comes back once its body is read
    const slow = patient(`${URL_}/slow`, { attemptTimeoutMs: 120_000 });
    await clock.advance(10);
    const next = quick(URL_, { timeoutMs: 200_000 });
    await clock.until(Promise.all([slow, next]), 200_000, 250);
    expect((await slow).status).toBe(200);
    expect((await next).status).toBe(200);
    // The quick process waited for the slow call's slot: never two at once.
    expect(most).toBe(1);
    const [, slowSent, nextSent] = server.calls.map((c) => c.at);
    expect((nextSent ?? 0) - (slowSent ?? 0)).toBeGreaterThanOrEqual(90_000);
  });
});

/** `clock` for a process that died: time goes on, its timers never fire. */
function frozen(clock: FakeClock): Clock {
  return {
    now: () => clock.now(),
    random: clock.random,
    sleep: () => new Promise<void>(() => {}),
  };
}

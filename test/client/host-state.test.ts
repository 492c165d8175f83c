import { describe, expect, it } from 'vitest';
import {
  admitTransaction,
  type HostState,
  type HostStateConfig,
  retryTransaction,
  settleTransaction,
} from '../../src/client/host-state.js';
import { MemoryStateStore } from '../../src/client/store.js';
import { FakeClock } from './helpers.js';

const config: HostStateConfig = {
  limits: { initialWindow: undefined, jitter: { ratio: 0, maxMs: 0 }, fallbackHoldMs: 1000 },
  bucket: { rate: 1, burst: 2 },
  budget: { ratio: 0.1, minPerSecond: 0, windowMs: 10_000 },
};

describe('host state transactions', () => {
  it('takes nothing from the bucket when the learned limits hold the request', () => {
    const store = new MemoryStateStore({ clock: new FakeClock(0) });
    const admit = (now: number) =>
      store.update<HostState, ReturnType<ReturnType<typeof admitTransaction>>[1]>(
        'h',
        admitTransaction(config, 1, true, now),
        60_000,
      );
    store.update<HostState, number>(
      'h',
      settleTransaction(config, {
        seq: 0,
        probed: [],
        cost: 0,
        status: 429,
        info: { retryAfterMs: 5000, policies: [], source: 'retry-after' },
        now: 0,
        random: 0,
      }),
      60_000,
    );
    expect(admit(0)).toMatchObject({ ok: false, reason: 'retry-after' });
    const state = store.update<HostState, HostState | undefined>('h', (s) => [s, s], 60_000);
    expect(state?.bucket?.tokens).toBe(2);
    // After the hold, a probe goes (taking a token), and its answer opens the host.
    const probe = admit(5000);
    expect(probe).toMatchObject({ ok: true });
    store.update<HostState, number>(
      'h',
      settleTransaction(config, {
        seq: probe.ok ? probe.seq : 0,
        probed: probe.ok ? probe.probed : [],
        cost: 1,
        status: 200,
        info: { policies: [{ name: 's', limit: 10, remaining: 9, resetMs: 1000 }], source: 'ietf' },
        now: 5000,
        random: 0,
      }),
      60_000,
    );
    expect(admit(5000)).toMatchObject({ ok: true });
    expect(admit(5000)).toEqual({ ok: false, waitMs: 1000, reason: 'client-rate' });
  });

  it('deposits first attempts only, and withdraws retries', () => {
    const store = new MemoryStateStore({ clock: new FakeClock(0) });
    const big = { ...config, bucket: undefined };
    for (let i = 0; i < 20; i++) store.update('h', admitTransaction(big, 1, true, 0), 60_000);
    for (let i = 0; i < 20; i++) store.update('h', admitTransaction(big, 1, false, 0), 60_000);
    expect(store.update('h', retryTransaction(big, 0), 60_000)).toBe(true);
    expect(store.update('h', retryTransaction(big, 0), 60_000)).toBe(true);
    expect(store.update('h', retryTransaction(big, 0), 60_000)).toBe(false);
  });

  it('always allows retries when the budget is off', () => {
    const store = new MemoryStateStore({ clock: new FakeClock(0) });
    const off = { ...config, budget: undefined };
    for (let i = 0; i < 100; i++)
      expect(store.update('h', retryTransaction(off, 0), 1000)).toBe(true);
  });
});

describe('host state transactions on a share of the limits', () => {
  const open: HostStateConfig = {
    limits: undefined,
    bucket: { rate: 10, burst: 8 },
    budget: { ratio: 0, minPerSecond: 2, windowMs: 10_000 },
  };

  it('scale the client bucket (rate and burst) and the retry budget floor', () => {
    const admit = admitTransaction(open, 1, true, 0);
    let state: HostState | undefined;
    const outcomes = [];
    for (let i = 0; i < 3; i++) {
      const [next, result] = admit(state, 0.25);
      state = next;
      outcomes.push(result);
    }
    // A quarter of a burst of 8 is 2; a quarter of 10/s refills one every 400 ms.
    expect(outcomes.map((o) => o.ok)).toEqual([true, true, false]);
    expect(outcomes[2]).toEqual({ ok: false, waitMs: 400, reason: 'client-rate' });
    // A quarter of 2 retries per second over 10 s is 5.
    const retry = retryTransaction(open, 0);
    const retries = [];
    for (let i = 0; i < 6; i++) {
      const [next, allowed] = retry(state, 0.25);
      state = next;
      retries.push(allowed);
    }
    expect(retries).toEqual([true, true, true, true, true, false]);
  });

  it('never shrink the burst below the request’s cost', () => {
    const [, result] = admitTransaction(open, 5, true, 0)(undefined, 0.1);
    expect(result).toMatchObject({ ok: true });
  });
});

describe('host state transactions replayed (a run made on a local copy, applied to the shared state)', () => {
  const open: HostStateConfig = {
    limits: { initialWindow: undefined, jitter: { ratio: 0, maxMs: 0 }, fallbackHoldMs: 1000 },
    bucket: { rate: 10, burst: 2 },
    budget: { ratio: 0, minPerSecond: 0, windowMs: 10_000 },
  };

  it('count an admitted request even where it would not be admitted now, with the same ticket', () => {
    const admit = admitTransaction(open, 1, true, 0);
    let state: HostState | undefined;
    for (let i = 0; i < 2; i++) state = admit(state)[0];
    // The shared bucket is empty: deciding again would refuse. Replayed, the request counts.
    const local = { ok: true as const, seq: 9, probed: ['s'] };
    const [next, result] = admit(state, 1, { result: local });
    expect(result).toBe(local);
    expect(next?.bucket?.tokens).toBe(-1);
    expect(next?.limits).toMatchObject({ inflight: 3, requests: 3 });
  });

  it('change nothing for a request refused locally (it was never sent)', () => {
    const admit = admitTransaction(open, 1, true, 0);
    const [state] = admit(undefined);
    const before = structuredClone(state);
    const refused = { ok: false as const, waitMs: 100, reason: 'client-rate' as const };
    const [next, result] = admit(state, 1, { result: refused });
    expect(result).toBe(refused);
    expect(next).toEqual(before);
  });

  it('record a retry that was taken, even past an empty budget', () => {
    const retry = retryTransaction(open, 0);
    const [state, allowed] = retry(undefined);
    expect(allowed).toBe(false);
    const [next, replayed] = retry(state, 1, { result: true });
    expect(replayed).toBe(true);
    expect(next?.budget?.retries.reduce((a, b) => a + b, 0)).toBe(1);
  });
});

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

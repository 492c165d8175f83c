import { describe, expect, it } from 'vitest';
import { MemoryStateStore } from '../../../src/client/host/store.js';
import type { Ticket } from '../../../src/client/rules/contract.js';
import {
  type AdmitResult,
  bindRules,
  type HostRulesConfig,
  type HostState,
  type Settled,
} from '../../../src/client/rules/host-rules.js';
import {
  admitTransaction,
  readTransaction,
  settleTransaction,
} from '../../../src/client/rules/transactions.js';
import { FakeClock } from '../helpers.js';

const config: HostRulesConfig = {
  learn: {
    initialWindow: undefined,
    jitter: { ratio: 0, maxMs: 0 },
    fallbackHoldMs: 1000,
    flightTtlMs: 60_000,
  },
  bucket: { rate: 1, burst: 2 },
  budget: { ratio: 0.1, minPerSecond: 0, windowMs: 10_000 },
};

const attempt = (now: number, first = true, cost = 1) =>
  ({ kind: 'attempt', cost, first, now }) as const;
const retry = (now: number) => ({ kind: 'retry', cost: 1, first: false, now }) as const;

describe('host rules, through a store', () => {
  it('takes nothing from the bucket when the learned limits hold the request', () => {
    const store = new MemoryStateStore({ clock: new FakeClock(0) });
    const rules = bindRules(config);
    const admit = (now: number) =>
      store.update<HostState, AdmitResult>('h', admitTransaction(rules, attempt(now)), 60_000);
    const ticket0: Ticket = { kind: 'attempt', seq: 0, at: 0, cost: 0, first: true };
    store.update<HostState, Settled>(
      'h',
      settleTransaction(rules, {
        ticket: ticket0,
        status: 429,
        info: { retryAfterMs: 5000, policies: [], source: 'retry-after' },
        pushback: true,
        now: 0,
        random: 0,
      }),
      60_000,
    );
    expect(admit(0)).toMatchObject({ ok: false, reason: 'retry-after' });
    const state = store.update('h', readTransaction, 60_000);
    expect(state?.bucket?.tokens).toBe(2);
    // After the hold, a probe goes (taking a token), and its answer opens the host.
    const probe = admit(5000);
    expect(probe).toMatchObject({ ok: true });
    store.update<HostState, Settled>(
      'h',
      settleTransaction(rules, {
        ticket: probe.ok ? probe.ticket : ticket0,
        status: 200,
        info: { policies: [{ name: 's', limit: 10, remaining: 9, resetMs: 1000 }], source: 'ietf' },
        pushback: false,
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
    const rules = bindRules({ ...config, bucket: undefined });
    for (let i = 0; i < 20; i++) store.update('h', admitTransaction(rules, attempt(0)), 60_000);
    for (let i = 0; i < 20; i++) {
      store.update('h', admitTransaction(rules, attempt(0, false)), 60_000);
    }
    const take = () => store.update('h', admitTransaction(rules, retry(0)), 60_000).ok;
    expect(take()).toBe(true);
    expect(take()).toBe(true);
    expect(take()).toBe(false);
  });

  it('always allows retries when the budget is off', () => {
    const store = new MemoryStateStore({ clock: new FakeClock(0) });
    const rules = bindRules({ ...config, budget: undefined });
    for (let i = 0; i < 100; i++) {
      expect(store.update('h', admitTransaction(rules, retry(0)), 1000).ok).toBe(true);
    }
  });
});

describe('host rules on a share of the limits', () => {
  const open: HostRulesConfig = {
    learn: undefined,
    bucket: { rate: 10, burst: 8 },
    budget: { ratio: 0, minPerSecond: 2, windowMs: 10_000 },
  };

  it('scale the client bucket (rate and burst) and the retry budget floor', () => {
    const rules = bindRules(open);
    const admit = admitTransaction(rules, attempt(0));
    let state: HostState | undefined;
    const outcomes = [];
    for (let i = 0; i < 3; i++) {
      const [next, result] = admit.run(state, 0.25);
      state = next;
      outcomes.push(result);
    }
    // A quarter of a burst of 8 is 2; a quarter of 10/s refills one every 400 ms.
    expect(outcomes.map((o) => o.ok)).toEqual([true, true, false]);
    expect(outcomes[2]).toEqual({ ok: false, waitMs: 400, reason: 'client-rate' });
    // A quarter of 2 retries per second over 10 s is 5.
    const take = admitTransaction(rules, retry(0));
    const retries = [];
    for (let i = 0; i < 6; i++) {
      const [next, result] = take.run(state, 0.25);
      state = next;
      retries.push(result.ok);
    }
    expect(retries).toEqual([true, true, true, true, true, false]);
  });

  it('never shrink the burst below the request’s cost', () => {
    const [, result] = admitTransaction(bindRules(open), attempt(0, true, 5)).run(undefined, 0.1);
    expect(result).toMatchObject({ ok: true });
  });
});

describe('host rules replayed (a run made on a local copy, applied to the shared state)', () => {
  const open: HostRulesConfig = {
    learn: { ...(config.learn as NonNullable<HostRulesConfig['learn']>) },
    bucket: { rate: 10, burst: 2 },
    budget: { ratio: 0, minPerSecond: 0, windowMs: 10_000 },
  };

  it('count an admitted request even where it would not be admitted now, with the same ticket', () => {
    const admit = admitTransaction(bindRules(open), attempt(0));
    let state: HostState | undefined;
    for (let i = 0; i < 2; i++) state = admit.run(state)[0];
    // The shared bucket is empty: deciding again would refuse. Replayed, the request counts.
    const local: AdmitResult = {
      ok: true,
      ticket: { kind: 'attempt', seq: 9, at: 0, cost: 1, first: true, probed: ['s'] },
    };
    expect(admit.run(structuredClone(state))[1]).toMatchObject({ ok: false });
    const next = admit.replay?.(state, local);
    expect(next?.bucket?.tokens).toBe(-1);
    expect(next?.flights).toMatchObject({ units: 3, requests: 3 });
  });

  it('change nothing for a request refused locally (it was never sent)', () => {
    const admit = admitTransaction(bindRules(open), attempt(0));
    const [state] = admit.run(undefined);
    const before = structuredClone(state);
    const refused: AdmitResult = { ok: false, waitMs: 100, reason: 'client-rate' };
    const next = admit.replay?.(state, refused);
    expect(next).toEqual(before);
  });

  it('record a retry that was taken, even past an empty budget', () => {
    const take = admitTransaction(bindRules(open), retry(0));
    const [state, allowed] = take.run(undefined);
    expect(allowed.ok).toBe(false);
    const taken: AdmitResult = {
      ok: true,
      ticket: { kind: 'retry', seq: 0, at: 0, cost: 1, first: false },
    };
    const next = take.replay?.(state, taken);
    expect(next?.budget?.retries.reduce((a, b) => a + b, 0)).toBe(1);
  });
});

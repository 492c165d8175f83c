/**
 * A rule added from outside the source, through the rule contract (`RuleModule`, `contract.ts`)
 * and a rule list (the registry's and one more), with no other edit: "pause a host during the
 * maintenance window it announced". It holds calls, the `held` event gives its reason, a wait past
 * `maxRetryAfterMs` is refused with `RateLimitError` because the rule declares its wait the
 * server's, and a retry after a pushback waits for it (`retryAt`). On fake time.
 */
import { describe, expect, it } from 'vitest';
import { Engine, parseTarget } from '../../../src/client/entries/engine.js';
import type { LimitedClientOptions } from '../../../src/client/options/types.js';
import type { RuleModule, Ticket, WaitReason } from '../../../src/client/rules/contract.js';
import { GO } from '../../../src/client/rules/contract.js';
import {
  bindRules,
  commit,
  newHostState,
  prune,
  settle,
  walk,
} from '../../../src/client/rules/host-rules.js';
import { RULES } from '../../../src/client/rules/registry.js';
import { isRateLimitError } from '../../../src/shared/errors.js';
import { FakeClock, respond, scriptedFetch } from '../helpers.js';

/** The window the host announced, epoch milliseconds: from `from`, until `until`. */
interface Window {
  from: number;
  until: number;
}

/** The new rule: no request goes during the window. Its state: the window (plain JSON). */
function maintenance(window: Window): RuleModule<Window, Window> {
  return {
    key: 'maintenance',
    kinds: ['attempt'],
    title: 'maintenance window',
    reasons: [{ reason: 'maintenance', serverTimed: true }],
    configure: () => window,
    fresh: (config) => ({ ...config }),
    check(state, { now }) {
      if (now < state.from || now >= state.until) return GO;
      // A reason of its own: not one of the union the package documents.
      return { ok: false, waitMs: state.until - now, reason: 'maintenance' as WaitReason };
    },
    retryAt: (_view, state) => state?.until ?? 0,
    expiresAt: (state) => (Number.isFinite(state.until) ? state.until : Number.POSITIVE_INFINITY),
  };
}

const URL_ = 'https://api.example.com/items';

function setup(window: Window, options: LimitedClientOptions = {}, status = () => 200) {
  const clock = new FakeClock(0);
  const sent: number[] = [];
  const fetch = scriptedFetch(clock, () => {
    sent.push(clock.now());
    return respond(status(), {}, 'ok');
  });
  const engine = new Engine({ clock, fetch, ...options }, undefined, [
    ...RULES,
    maintenance(window),
  ]);
  const held: { reason: string; waitMs: number | undefined }[] = [];
  engine.events.on('held', (e) => held.push({ reason: e.reason, waitMs: e.waitMs }));
  const get = () => engine.dispatch(parseTarget(URL_), undefined, undefined) as Promise<Response>;
  return { clock, engine, sent, held, get };
}

describe('a rule defined outside the source (maintenance window)', () => {
  it('holds calls until the window ends, and reports its reason once per call', async () => {
    // No cold-start ramp: the window is the only wait.
    const { clock, sent, held, get } = setup({ from: 0, until: 30_000 }, { coldStart: false });
    const calls = Promise.all([get(), get(), get()]);
    await clock.until(calls, 120_000, 100);
    const responses = await calls;
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(sent).toHaveLength(3);
    expect(Math.min(...sent)).toBeGreaterThanOrEqual(30_000);
    // The queue asks for the head of the line only: it is held, once, for the whole window.
    expect(held).toEqual([{ reason: 'maintenance', waitMs: 30_000 }]);
  });

  it('lets calls through outside the window, and holds none', async () => {
    const { clock, sent, held, get } = setup({ from: 60_000, until: 90_000 });
    const call = get();
    await clock.until(call, 10_000, 10);
    const response = await call;
    expect(response.status).toBe(200);
    expect(sent).toEqual([0]);
    expect(held).toEqual([]);
  });

  it('refuses a wait past maxRetryAfterMs with RateLimitError: its wait is the server’s', async () => {
    const { clock, sent, get } = setup(
      { from: 0, until: 6 * 3_600_000 },
      { maxRetryAfterMs: 60_000 },
    );
    const call = get().then(
      () => undefined,
      (e: unknown) => e,
    );
    await clock.until(call, 10_000, 10);
    const error = await call;
    expect(isRateLimitError(error)).toBe(true);
    expect((error as { serverWaitMs?: number }).serverWaitMs).toBe(6 * 3_600_000);
    expect(sent).toEqual([]);
  });

  it('a retry after a pushback waits for its window (retryAt), with no other source edit', () => {
    const window = { from: 0, until: 20_000 };
    const inputs = {
      learn: {
        flightTtlMs: 60_000,
        jitter: { ratio: 0, maxMs: 0 },
        fallbackHoldMs: 1000,
        initialWindow: undefined,
      },
      bucket: undefined,
      budget: undefined,
    };
    const answer = (ticket: Ticket) => ({
      ticket,
      status: 429,
      pushback: true,
      now: 10,
      random: 0,
    });
    const retryAt = (modules: typeof RULES) => {
      const rules = bindRules(inputs, modules);
      const state = newHostState();
      // Committed at 0 without a check (the loop's steps, called one by one), answered at 10
      // with a 429 that gives no time.
      const w = walk(rules, state, { kind: 'attempt', cost: 1, first: true, now: 0 });
      prune(w);
      const ticket = commit(w);
      return settle(rules, state, answer(ticket)).holdUntil;
    };
    expect(retryAt([...RULES, maintenance(window)])).toBe(20_000);
    // The registry's rules alone: a 429 without timing holds nothing, the pace opens soon.
    expect(retryAt(RULES)).toBeLessThan(20_000);
    const bound = bindRules(inputs, [...RULES, maintenance(window)]);
    expect(bound.serverWaits.has('maintenance')).toBe(true);
    expect(bound.heldBits.get('maintenance')).toBeGreaterThan(0);
  });
});

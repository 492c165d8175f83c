/**
 * The retry budget: retries to a host may be at most `ratio` of its recent requests, plus a small
 * floor of `minPerSecond` so that a quiet client can still retry an occasional failure.
 *
 * This is Finagle's `RetryBudget` (deposits per request, withdrawals per retry, over a time window,
 * with a reserve of retries per second) rather than gRPC's token count or Envoy's share of
 * *active* requests: a window of recent traffic bounds amplification over time, which is what
 * matters during an outage, and it needs no notion of concurrency. With the defaults (10 %, 1 per
 * second, 10 s), a full outage costs at most 1.1 attempts per request, plus one per second.
 *
 * A first attempt deposits; a retry asks (`kind: 'retry'`) and withdraws one, or is refused
 * (reason `budget`). On a share of the shared limits the floor scales with the share; the ratio
 * does not (it applies to the requests this state sees).
 *
 * @module
 */
import { GO, type RuleModule } from './contract.js';
import { advance, count, newCounts, SLOTS, type SlidingCounts, total } from './sliding-counts.js';

/** Configuration of the budget. */
export interface BudgetConfig {
  /** Retries allowed per request sent, over the window. @default 0.1 */
  ratio: number;
  /** Retries allowed per second whatever the traffic (the floor). @default 1 */
  minPerSecond: number;
  /** Length of the window, in milliseconds. @default 10_000 */
  windowMs: number;
}

const SERIES = ['requests', 'retries'] as const;

/** Requests (first attempts) and retries over the window. */
export type BudgetState = SlidingCounts<(typeof SERIES)[number]>;

/** Retries the budget would allow at `now`, without taking any. May be fractional. */
export function availableRetries(state: BudgetState, config: BudgetConfig, now: number): number {
  advance(state, SERIES, config.windowMs, now);
  const allowed =
    config.ratio * total(state, 'requests') + (config.minPerSecond * config.windowMs) / 1000;
  return Math.max(0, allowed - total(state, 'retries'));
}

/** See the module comment. */
export const budget = {
  key: 'budget',
  title: 'retry budget',
  reasons: [],
  configure: (host) => host.budget,
  kinds: ['attempt', 'retry'],
  fresh: (config, now) => newCounts(SERIES, config.windowMs, now),
  scale: (config, share) => ({ ...config, minPerSecond: config.minPerSecond * share }),
  check(state, request, config) {
    if (request.kind !== 'retry' || availableRetries(state, config, request.now) >= 1) return GO;
    return { ok: false, waitMs: undefined, reason: 'budget' };
  },
  commit(current, request, _ticket, config) {
    const state = current ?? newCounts(SERIES, config.windowMs, request.now);
    if (request.kind === 'retry') count(state, SERIES, 'retries', config.windowMs, request.now);
    else if (request.first) count(state, SERIES, 'requests', config.windowMs, request.now);
    return state;
  },
  // Once every slot counted has left the window, the counts are all zero.
  expiresAt: (state, config) => (state.slot + 1) * (config.windowMs / SLOTS) + config.windowMs,
} satisfies RuleModule<BudgetState, BudgetConfig>;

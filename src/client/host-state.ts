/**
 * One host's shared state and the three transactions the pipeline runs on it through the
 * {@link StateStore}: admit a request, settle an attempt, take a retry. Each is a pure function of
 * the state and its arguments (time and chance passed in), so any store can run it.
 *
 * @module
 */

import {
  checkLimits,
  commitLimits,
  type HoldReason,
  type LimitsAnswer,
  type LimitsConfig,
  type LimitsState,
  type LimitsTicket,
  newLimits,
  pruneLimits,
  recordLimits,
  settleLimits,
} from './policies/learned-limits.js';
import {
  type BudgetConfig,
  type BudgetState,
  depositRequest,
  newBudget,
  recordRetry,
  withdrawRetry,
} from './policies/retry-budget.js';
import {
  type BucketConfig,
  type BucketState,
  newBucket,
  spendTokens,
  takeTokens,
} from './policies/token-bucket.js';
import type { Transaction } from './store.js';

/** Everything shared about one host. */
export interface HostState {
  /** Learned limits; absent when learning is off. */
  limits?: LimitsState;
  /** The client-side bucket; absent when no rate is set. */
  bucket?: BucketState;
  /** The retry budget; absent when the budget is off. */
  budget?: BudgetState;
}

/** Which policies a host runs, with their parameters. */
export interface HostStateConfig {
  limits: LimitsConfig | undefined;
  bucket: BucketConfig | undefined;
  budget: BudgetConfig | undefined;
}

/** Why admission said "not yet". */
export type WaitReason = HoldReason | 'client-rate';

/** The answer of {@link admitTransaction}. */
export type AdmitResult =
  | ({ ok: true } & LimitsTicket)
  | {
      ok: false;
      waitMs: number | undefined;
      reason: WaitReason;
      policy?: string;
      /** The server's own wait, before the client's jitter, when it differs from `waitMs`. */
      serverWaitMs?: number;
    };

const NO_TICKET: LimitsTicket = Object.freeze({ seq: 0, probed: [] }) as LimitsTicket;

/**
 * `config` for a run on `share` of the shared limits (see `Transaction`): the client bucket's rate
 * and burst (the burst never below `cost`, so the request still fits) and the retry budget's floor
 * scale with it. The budget's ratio does not (it applies to the requests this state sees), nor do
 * learned limits (the server's answers keep teaching them).
 */
function shareOf(config: HostStateConfig, share: number, cost: number): HostStateConfig {
  if (share === 1) return config;
  const { bucket, budget } = config;
  return {
    limits: config.limits,
    bucket: bucket && {
      rate: bucket.rate * share,
      burst: Math.max(cost, bucket.burst * share),
    },
    budget: budget && { ...budget, minPerSecond: budget.minPerSecond * share },
  };
}

function init(state: HostState | undefined, config: HostStateConfig, now: number): HostState {
  const s = state ?? {};
  if (config.limits && !s.limits) s.limits = newLimits(config.limits);
  if (config.bucket && !s.bucket) s.bucket = newBucket(config.bucket, now);
  if (config.budget && !s.budget) s.budget = newBudget(config.budget, now);
  return s;
}

/**
 * Admits one attempt of `cost` units if the learned limits and the client bucket both allow it,
 * and then records it (limits debited, tokens taken, and for a first attempt, a deposit in the
 * retry budget). When either says no, nothing is taken. On a share of the limits (see
 * `Transaction`), the bucket and the budget are scaled down. Requests in flight whose time is up
 * are taken as lost first (see `pruneLimits`).
 *
 * @param flightTtlMs how long this attempt may stay unanswered before it is taken as lost, in
 *   milliseconds (its attempt timeout plus a second); default `limits.flightTtlMs`.
 */
export function admitTransaction(
  shared: HostStateConfig,
  cost: number,
  firstAttempt: boolean,
  now: number,
  flightTtlMs?: number,
): Transaction<HostState, AdmitResult> {
  return (current, share = 1, replay) => {
    const config = shareOf(shared, share, cost);
    const state = init(current, config, now);
    if (state.limits) pruneLimits(state.limits, now);
    if (replay) {
      // The request was admitted (or not) elsewhere and the caller acted on it: record just that.
      if (replay.result.ok) {
        if (state.bucket && config.bucket) spendTokens(state.bucket, cost, config.bucket, now);
        if (state.limits) recordLimits(state.limits, cost, replay.result, now);
        if (firstAttempt && state.budget && config.budget)
          depositRequest(state.budget, config.budget, now);
      }
      return [state, replay.result];
    }
    if (state.limits) {
      const verdict = checkLimits(state.limits, cost, now);
      if (!verdict.ok) return [state, verdict];
    }
    if (state.bucket && config.bucket) {
      const waitMs = takeTokens(state.bucket, cost, config.bucket, now);
      if (waitMs > 0) return [state, { ok: false, waitMs, reason: 'client-rate' }];
    }
    const ticket = state.limits
      ? commitLimits(state.limits, cost, now, config.limits, flightTtlMs)
      : NO_TICKET;
    if (firstAttempt && state.budget && config.budget)
      depositRequest(state.budget, config.budget, now);
    return [
      state,
      { ok: true, seq: ticket.seq, probed: ticket.probed, at: ticket.at, expires: ticket.expires },
    ];
  };
}

/**
 * Takes an attempt's outcome into the learned limits. Returns the host's hold as it stands after
 * it (epoch milliseconds, 0 for none): what a retry after a pushback will wait for.
 */
export function settleTransaction(
  config: HostStateConfig,
  answer: LimitsAnswer,
): Transaction<HostState, number> {
  return (current) => {
    const state = init(current, config, answer.now);
    if (state.limits && config.limits) settleLimits(state.limits, answer, config.limits);
    return [state, state.limits?.holdUntil ?? 0];
  };
}

/** Takes one retry from the budget; `true` when there was one (always, when the budget is off). */
export function retryTransaction(
  shared: HostStateConfig,
  now: number,
): Transaction<HostState, boolean> {
  return (current, share = 1, replay) => {
    const config = shareOf(shared, share, 1);
    const state = init(current, config, now);
    if (!state.budget || !config.budget) return [state, true];
    if (replay) {
      if (replay.result) recordRetry(state.budget, config.budget, now);
      return [state, replay.result];
    }
    return [state, withdrawRetry(state.budget, config.budget, now)];
  };
}

/** Reads the state without changing it (for `stats()`). */
export function readTransaction(): Transaction<HostState, HostState | undefined> {
  return (current) => [current, current];
}

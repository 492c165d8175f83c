/**
 * The client's own token bucket: the caller's cap on how fast it sends to a host, whatever the
 * server says. `rate` units per second refill a bucket of `burst` units; each request spends its
 * cost. Refilled lazily (no timer), capped at `burst`; a clock that moved backwards refills
 * nothing. A request replayed from another copy of the state spends its cost whatever the bucket
 * holds: the bucket may go below zero, a debt the refill pays back before anything else goes.
 *
 * On a share of the shared limits (a store on a local copy), rate and burst scale with the share,
 * the burst never below the request's cost (so that it still fits).
 *
 * @module
 */
import { GO, type RuleModule } from './contract.js';

/** The bucket. */
export interface BucketState {
  /** Units in the bucket at `at` (negative: a debt). */
  tokens: number;
  /** Epoch milliseconds of the last refill. */
  at: number;
}

/** Configuration of the bucket. */
export interface BucketConfig {
  /** Refill rate, in units per second (> 0). */
  rate: number;
  /** Capacity, in units (at least the largest cost a request may have). */
  burst: number;
}

/** The units in the bucket at `now`: refilled since `at`, capped at `burst`. */
function tokensAt(state: BucketState, now: number, config: BucketConfig): number {
  const elapsed = Math.max(0, now - state.at);
  return Math.min(config.burst, state.tokens + (elapsed * config.rate) / 1000);
}

/** See the module comment. */
export const bucket = {
  key: 'bucket',
  title: 'client bucket',
  reasons: [{ reason: 'client-rate', serverTimed: false }],
  configure: (host) => host.bucket,
  kinds: ['attempt'],
  fresh: (config, now) => ({ tokens: config.burst, at: now }),
  scale: (config, share, cost) => ({
    rate: config.rate * share,
    burst: Math.max(cost, config.burst * share),
  }),
  check(state, { cost, now }, config) {
    const tokens = tokensAt(state, now, config);
    if (tokens >= cost) return GO;
    // A cost above the burst can never be paid.
    const waitMs =
      cost > config.burst
        ? Number.POSITIVE_INFINITY
        : Math.ceil(((cost - tokens) * 1000) / config.rate);
    return { ok: false, waitMs, reason: 'client-rate' };
  },
  commit(current, { cost, now }, _ticket, config) {
    const state = current ?? { tokens: config.burst, at: now };
    state.tokens = tokensAt(state, now, config) - cost;
    state.at = Math.max(state.at, now);
    return state;
  },
  expiresAt: (state, config) => state.at + ((config.burst - state.tokens) * 1000) / config.rate,
} satisfies RuleModule<BucketState, BucketConfig>;

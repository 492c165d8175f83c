/**
 * The client-side token bucket: the caller's own cap on how fast it sends to a host, independent of
 * what the server says. `rate` units per second refill a bucket of `burst` units; each request
 * spends its cost. The state is two numbers, plain JSON, so a shared store can hold it.
 *
 * @module
 */

/** Serialisable bucket state. */
export interface BucketState {
  /** Units in the bucket at `at`. */
  tokens: number;
  /** Epoch milliseconds of the last refill. */
  at: number;
}

/** Bucket parameters. */
export interface BucketConfig {
  /** Refill rate, in units per second (> 0). */
  rate: number;
  /** Capacity, in units (≥ the largest cost a request may have). */
  burst: number;
}

/** A new bucket, full. */
export function newBucket(config: BucketConfig, now: number): BucketState {
  return { tokens: config.burst, at: now };
}

/**
 * Takes `cost` units if the bucket holds them. Refills lazily (no timer), capped at `burst`; a
 * clock that moved backwards refills nothing.
 *
 * @returns 0 when the units were taken; otherwise the milliseconds until they will be there (the
 *   state is refilled but nothing is taken). A cost above `burst` can never be paid: `Infinity`.
 */
export function takeTokens(
  state: BucketState,
  cost: number,
  config: BucketConfig,
  now: number,
): number {
  const elapsed = Math.max(0, now - state.at);
  state.tokens = Math.min(config.burst, state.tokens + (elapsed * config.rate) / 1000);
  state.at = Math.max(state.at, now);
  if (state.tokens >= cost) {
    state.tokens -= cost;
    return 0;
  }
  if (cost > config.burst) return Number.POSITIVE_INFINITY;
  return Math.ceil(((cost - state.tokens) * 1000) / config.rate);
}

/**
 * Records that `cost` units were spent at `now`, whatever the bucket holds: a spend that already
 * happened (on a local copy of a shared bucket, while the shared one was out of reach). The bucket
 * may go below zero, a debt the refill pays back before anything else goes.
 */
export function spendTokens(
  state: BucketState,
  cost: number,
  config: BucketConfig,
  now: number,
): void {
  const elapsed = Math.max(0, now - state.at);
  state.tokens = Math.min(config.burst, state.tokens + (elapsed * config.rate) / 1000) - cost;
  state.at = Math.max(state.at, now);
}

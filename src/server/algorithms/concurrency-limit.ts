/**
 * Concurrency limit: a cap on requests in flight, released when each one ends.
 *
 * @module
 */
import { z } from 'zod';
import { durationMs, parseOptions, positiveInteger } from '../options.js';
import type { TakeOptions } from '../types.js';
import { type LimiterOptions, limiterOptionsShape, RateLimiter } from './limiter.js';
import type { AlgorithmLogic } from './logic.js';

/** Parameters of a {@link ConcurrencyLimit}. */
export interface ConcurrencyLimitConfig {
  /** Units in flight at once. */
  limit: number;
  /**
   * The retry hint given to rejected requests, in milliseconds. Slots free up when responses end,
   * which no clock can predict, so this is a guess for the client, not a promise.
   * @default 1000
   */
  retryAfterMs: number;
}

/** A key's state. */
export interface ConcurrencyLimitState {
  /** Units in flight. */
  inFlight: number;
}

/** The zod shape of {@link ConcurrencyLimitConfig}; the mock server's config reuses it. */
export const concurrencyLimitShape = {
  limit: positiveInteger,
  retryAfterMs: durationMs.optional(),
};

/**
 * The arithmetic. Time plays no part: a slot is taken by a take and given back by a refund (the
 * release). A key with slots in flight never expires; one with none is deleted.
 *
 * This is what the memory store runs: in one process a release cannot time out or get lost while
 * the process lives (and the state dies with it). The Redis store keeps each take as a lease that
 * expires on its own instead (`src/redis/lua/buckets.ts`), with the same decisions: across
 * processes a holder can die, and a call can time out.
 */
export const concurrencyLimit: AlgorithmLogic<ConcurrencyLimitState, ConcurrencyLimitConfig> = {
  algorithm: 'concurrency',
  limit: (config) => config.limit,
  rebase: (state) => state,
  available: (state, _at, { limit }) => Math.max(0, limit - (state?.inFlight ?? 0)),
  delayUntil(state, at, units, config) {
    return concurrencyLimit.available(state, at, config) >= units ? 0 : config.retryAfterMs;
  },
  consume: (state, _at, cost) => ({ state: { inFlight: (state?.inFlight ?? 0) + cost } }),
  refund(state, _at, cost) {
    const inFlight = state.inFlight - cost;
    return inFlight > 0 ? { inFlight } : undefined;
  },
  expiresAt: (state) => (state.inFlight > 0 ? Number.POSITIVE_INFINITY : Number.NEGATIVE_INFINITY),
};

/** Options of {@link ConcurrencyLimit}. */
export interface ConcurrencyLimitOptions
  extends Omit<ConcurrencyLimitConfig, 'retryAfterMs'>,
    Partial<Pick<ConcurrencyLimitConfig, 'retryAfterMs'>>,
    LimiterOptions {}

const schema = z.strictObject({ ...concurrencyLimitShape, ...limiterOptionsShape });

/** The default `retryAfterMs` of a concurrency limit, in milliseconds. */
export const CONCURRENCY_RETRY_AFTER_MS = 1000;

/**
 * Caps the units in flight per key: a take holds a slot until {@link ConcurrencyLimit.release}
 * (or the `refund` of {@link RateLimiter.acquire}) gives it back. The mock server releases the
 * slot when the response finishes or the client goes away, whichever comes first.
 *
 * Where a rate limit bounds how much work starts per second, this bounds how much is running:
 * the protection for slow work (Little's law: in flight = arrival rate x duration).
 *
 * - `retryAfterMs` is *not* exact: slots are freed by responses ending, not by time. Rejected
 *   requests get the configured hint (`retryAfterMs`, default 1000 ms), as does `resetMs` while
 *   any slot is taken.
 * - Time plays no part, so a backwards clock changes nothing. On a Redis store it does in one way:
 *   a slot whose release never reached Redis comes back after the store's `inFlightTtlMs`.
 *
 * @example
 * const renders = new ConcurrencyLimit({ limit: 8 });
 * const { allowed } = await renders.take('pdf');
 * if (allowed) {
 *   try { await render(); } finally { await renders.release('pdf'); }
 * }
 */
export class ConcurrencyLimit extends RateLimiter<ConcurrencyLimitState, ConcurrencyLimitConfig> {
  constructor(options: ConcurrencyLimitOptions) {
    const { limit, retryAfterMs, ...rest } = parseOptions(schema, options);
    super(
      concurrencyLimit,
      { limit, retryAfterMs: retryAfterMs ?? CONCURRENCY_RETRY_AFTER_MS },
      rest,
    );
  }

  /**
   * Gives back `cost` slots of `key` taken by an admitted `take`. Releasing more than was taken
   * leaves the key at zero in flight; it never creates extra slots. On a Redis store, which keeps
   * each take as a lease, a release that does not name its take ends the `cost` slots expiring
   * first; `acquire`'s `refund` ends exactly its own.
   * @example
   * await limiter.release('pdf');
   */
  async release(key: string, options: Omit<TakeOptions, 'now'> = {}): Promise<void> {
    const cost = options.cost ?? 1;
    if (!Number.isInteger(cost) || cost < 1 || cost > this.limit) {
      throw new RangeError(
        `${this.name}: cost must be an integer from 1 to the limit (${this.limit}), got ${cost}`,
      );
    }
    await this.store.refund(this.spec, key, { cost, now: this.clock.now() });
  }
}

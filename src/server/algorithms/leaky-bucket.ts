/**
 * Leaky bucket as a queue: requests wait their turn and leave at a fixed pace.
 *
 * @module
 */
import { z } from 'zod';
import { parseOptions, positiveInteger, positiveNumber } from '../options.js';
import { type Meter, meterAvailable, meterDelay, meterRebase, meterRefund } from './gcra.js';
import { type LimiterOptions, limiterOptionsShape, RateLimiter } from './limiter.js';
import type { AlgorithmLogic } from './logic.js';

/** Parameters of a {@link LeakyBucket}. */
export interface LeakyBucketConfig {
  /** Units drained per second, possibly fractional: one every `1000 / rate` ms. */
  rate: number;
  /**
   * Units the bucket holds: the request being served and those waiting behind it. A request that
   * does not fit is rejected.
   */
  capacity: number;
}

/** A key's state. */
export interface LeakyBucketState {
  /** When the bucket will be empty, epoch milliseconds: the queue's tail. */
  tat: number;
}

/** The zod shape of {@link LeakyBucketConfig}; the mock server's config reuses it. */
export const leakyBucketShape = { rate: positiveNumber, capacity: positiveInteger };

function meterOf(config: LeakyBucketConfig): Meter {
  return { limit: config.capacity, intervalMs: 1000 / config.rate };
}

/**
 * The arithmetic: GCRA's meter (see `gcra.ts`) with `capacity` units, where an admitted request
 * also learns how long it waits: until the units ahead of it have drained.
 *
 * Backwards clock: as GCRA, the queue is never shown longer than full. Refund (a request that
 * another limit rejected, or that left the queue): gives its units back only when it is still the
 * tail of the queue. Otherwise requests behind it already hold later turns, and freeing its turn
 * would let a newcomer be served in the same slot as one of them, faster than `rate`; the turn
 * then simply stays used.
 */
export const leakyBucket: AlgorithmLogic<LeakyBucketState, LeakyBucketConfig> = {
  algorithm: 'leaky-bucket',
  limit: (config) => config.capacity,
  rebase(state, at, config) {
    const tat = meterRebase(state.tat, at, meterOf(config));
    return tat === state.tat ? state : { tat };
  },
  available: (state, at, config) => meterAvailable(state?.tat, at, meterOf(config)),
  delayUntil: (state, at, units, config) => meterDelay(state?.tat, at, units, meterOf(config)),
  consume(state, at, cost, config) {
    const start = Math.max(state?.tat ?? at, at);
    const tat = start + cost * meterOf(config).intervalMs;
    return { state: { tat }, receipt: start, delayMs: Math.ceil(start - at) };
  },
  refund(state, at, cost, receipt, config) {
    const m = meterOf(config);
    // Still the tail: its own units are the last ones, `receipt + cost * interval`.
    if (receipt === undefined || state.tat !== receipt + cost * m.intervalMs) return state;
    const tat = meterRefund(state.tat, cost, receipt, m);
    return tat <= at ? undefined : { tat };
  },
  expiresAt: (state) => state.tat,
};

/** Options of {@link LeakyBucket}. */
export interface LeakyBucketOptions extends LeakyBucketConfig, LimiterOptions {}

const schema = z.strictObject({ ...leakyBucketShape, ...limiterOptionsShape });

/**
 * A bounded queue drained at `rate` units per second. An admitted request gets `delayMs`: how long
 * it waits for its turn (the mock server holds the response that long), so admitted traffic
 * leaves perfectly paced. A request that does not fit in the `capacity` is rejected at once.
 *
 * With `rate: 1, capacity: 3`, three requests at t=0 are admitted with delays 0, 1000 and 2000 ms;
 * a fourth is rejected with `retryAfterMs: 1000`, when the first has drained.
 *
 * - `retryAfterMs` is exact: the time until the queue has room for the cost.
 * - `resetMs` is the time until the next unit drains.
 * - `remaining` is the room left in the queue.
 *
 * @example
 * const queue = new LeakyBucket({ rate: 5, capacity: 10 });
 * const result = await queue.take('upstream');
 * if (result.allowed) await sleep(result.delayMs ?? 0);
 */
export class LeakyBucket extends RateLimiter<LeakyBucketState, LeakyBucketConfig> {
  constructor(options: LeakyBucketOptions) {
    const { rate, capacity, ...rest } = parseOptions(schema, options);
    super(leakyBucket, { rate, capacity }, rest);
  }
}

/**
 * Token bucket: a balance of tokens, refilled lazily at a constant rate, capped at the capacity.
 *
 * @module
 */
import { z } from 'zod';
import { parseOptions, positiveInteger, positiveNumber } from '../options.js';
import { type LimiterOptions, limiterOptionsShape, RateLimiter } from './limiter.js';
import { type AlgorithmLogic, settle } from './logic.js';

/** Parameters of a {@link TokenBucket}. */
export interface TokenBucketConfig {
  /** Tokens the bucket holds when full: the largest burst. */
  capacity: number;
  /** Tokens added per second, possibly fractional (`0.5` is one every two seconds). */
  refillPerSecond: number;
}

/**
 * A key's state, chosen so that all the arithmetic on tokens stays in whole numbers: the balance at
 * `now` is `min(capacity, tokens + (now - since) * refillPerSecond / 1000)`.
 */
export interface TokenBucketState {
  /**
   * The balance at `since`, minus every unit taken after it: an integer, possibly negative while
   * the refill since `since` covers it.
   */
  tokens: number;
  /**
   * When the bucket was last full (the refill counts from there), epoch milliseconds. It moves only
   * when a take finds the bucket full, or when the clock goes back.
   */
  since: number;
}

/** The zod shape of {@link TokenBucketConfig}; the mock server's config reuses it. */
export const tokenBucketShape = { capacity: positiveInteger, refillPerSecond: positiveNumber };

type State = TokenBucketState;
type Config = TokenBucketConfig;

/** The balance at `at`: refilled since `since`, never above the capacity. */
function tokensAt(state: State | undefined, at: number, config: Config): number {
  if (state === undefined) return config.capacity;
  const refilled = state.tokens + ((at - state.since) * config.refillPerSecond) / 1000;
  return Math.min(config.capacity, refilled);
}

/**
 * The arithmetic. A take subtracts its cost from `tokens` and leaves `since` alone, unless the
 * bucket is full, when the refill restarts from now; so `tokens` only ever moves by whole units
 * and a refund (adding the cost back) restores the state bit for bit.
 *
 * Backwards clock: a time before `since`, or one at which the balance would be negative (a forward
 * clock never shows that: every take leaves at least nothing), restarts the refill from the new
 * time with what the bucket held then, but never less than nothing. That is no more than it held
 * at its latest moment, so nothing is created, and it is full again within
 * `capacity / refillPerSecond` seconds.
 */
export const tokenBucket: AlgorithmLogic<State, Config> = {
  algorithm: 'token-bucket',
  limit: (config) => config.capacity,
  rebase(state, at, config) {
    if (at < state.since) return { tokens: Math.max(0, state.tokens), since: at };
    return tokensAt(state, at, config) < 0 ? { tokens: 0, since: at } : state;
  },
  available(state, at, config) {
    return Math.max(0, Math.floor(tokensAt(state, at, config)));
  },
  delayUntil(state, at, units, config) {
    const missing = units - tokensAt(state, at, config);
    if (missing <= 0) return 0;
    const upper = (config.capacity * 1000) / config.refillPerSecond + 1;
    return settle(
      (missing * 1000) / config.refillPerSecond,
      upper,
      (d) => tokenBucket.available(state, at + d, config) >= units,
    );
  },
  consume(state, at, cost, config) {
    if (tokensAt(state, at, config) >= config.capacity || state === undefined) {
      return { state: { tokens: config.capacity - cost, since: at } };
    }
    return { state: { tokens: state.tokens - cost, since: state.since } };
  },
  refund(state, _at, cost, _receipt, { capacity }) {
    const tokens = state.tokens + cost;
    return tokens >= capacity ? undefined : { tokens, since: state.since };
  },
  expiresAt(state, { capacity, refillPerSecond }) {
    // Full again (one millisecond of margin against rounding): a fresh key is the same thing.
    return state.since + ((capacity - state.tokens) * 1000) / refillPerSecond + 1;
  },
};

/** Options of {@link TokenBucket}. */
export interface TokenBucketOptions extends TokenBucketConfig, LimiterOptions {}

const schema = z.strictObject({ ...tokenBucketShape, ...limiterOptionsShape });

/**
 * A bucket of `capacity` tokens refilled at `refillPerSecond`; a request of cost `n` spends `n`
 * tokens or is rejected. Allows bursts up to the capacity after a quiet spell, and
 * `refillPerSecond` in the long run: over any interval of `d` ms, at most
 * `capacity + refillPerSecond * d / 1000` units. Two numbers per key, refilled lazily when the key
 * is used (no timers).
 *
 * - `retryAfterMs` is exact: the time until the balance covers the cost.
 * - `resetMs` is the time until the next whole token.
 * - A backwards clock refills nothing; refilling resumes from the new time.
 *
 * @example
 * const bucket = new TokenBucket({ capacity: 5, refillPerSecond: 2 });
 * for (let i = 0; i < 6; i++) await bucket.take('k', { now: 0 });
 * // the sixth: { allowed: false, remaining: 0, retryAfterMs: 500, ... }
 */
export class TokenBucket extends RateLimiter<State, Config> {
  constructor(options: TokenBucketOptions) {
    const { capacity, refillPerSecond, ...rest } = parseOptions(schema, options);
    super(tokenBucket, { capacity, refillPerSecond }, rest);
  }
}

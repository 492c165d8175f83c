/**
 * The shapes every algorithm shares: what a `take` returns and what it accepts.
 *
 * @module
 */

/**
 * One decision for one key. Every number is a non-negative integer; times are milliseconds from
 * the moment of the decision.
 *
 * @example
 * // A token bucket of 5 tokens refilling at 2 per second, drained at t=0:
 * // { allowed: false, limit: 5, remaining: 0, resetMs: 500, retryAfterMs: 500 }
 */
export interface TakeResult {
  /** Whether the request is admitted. A rejected request consumes nothing. */
  allowed: boolean;
  /** The most units the key can ever hold at once (limit, capacity, burst + 1, queue size). */
  limit: number;
  /**
   * Units that could still be taken at this moment: after this take when it was admitted, before
   * it when it was rejected. Always at most `limit`.
   */
  remaining: number;
  /**
   * Milliseconds until more quota becomes available than `remaining` (absent other traffic); 0 when
   * `remaining` already equals `limit`. This is the `t` of the current IETF draft ("until
   * additional quota is made available"), not necessarily the moment the quota is full again.
   */
  resetMs: number;
  /**
   * 0 when admitted. When rejected: milliseconds until a take of the same cost would be admitted,
   * absent other traffic. Exact to the millisecond for every algorithm but
   * {@link ConcurrencyLimit}, whose slots are freed by responses ending, not by time: there it is
   * the limiter's configured hint.
   */
  retryAfterMs: number;
  /**
   * {@link LeakyBucket} only: how long an admitted request waits in the queue for its turn before it
   * is served. Absent for the other algorithms.
   */
  delayMs?: number;
}

/** Options of a `take`, `peek` or `acquire` call. */
export interface TakeOptions {
  /**
   * Units this request spends: an integer from 1 to the limiter's `limit` (a `/search` may cost
   * 3 where a `/health` costs 1).
   * @default 1
   */
  cost?: number;
  /**
   * The moment of the decision in epoch milliseconds. Pass it to drive an algorithm on fake time;
   * it may move backwards (see each algorithm for what that does).
   * @default clock.now()
   */
  now?: number;
}

/** The algorithm names, as used in the mock server's configuration and by stores. */
export type AlgorithmName =
  | 'fixed-window'
  | 'sliding-log'
  | 'sliding-window-counter'
  | 'token-bucket'
  | 'gcra'
  | 'leaky-bucket'
  | 'concurrency';

/**
 * The contract every algorithm implements, and the one generic decision built on it.
 *
 * An algorithm is pure arithmetic over one key's state: no I/O, no clock, no HTTP. Each file in this
 * folder exports one {@link AlgorithmLogic} object; {@link decide} turns it into a decision
 * `(state, now, cost) -> (state', result)`. A store runs that decision atomically per key: the
 * memory store calls it directly, a Redis store runs the same arithmetic as one Lua script per
 * algorithm. Keeping the arithmetic this small is what makes that mirror possible.
 *
 * Conventions shared by every algorithm:
 * - `undefined` state means a key never seen (or evicted): full quota.
 * - `available(state, at)` is an integer from 0 to the limit and never decreases as `at` grows
 *   (absent takes). Every decision, retry delay and reset delay is derived from it, so they cannot
 *   disagree with each other.
 * - A rejected decision never changes the state except through {@link AlgorithmLogic.rebase}.
 *
 * @module
 */
import type { AlgorithmName, TakeResult } from '../types.js';

/** What {@link AlgorithmLogic.consume} returns. */
export interface Consumed<S> {
  /** The state after the take. */
  state: S;
  /**
   * What {@link AlgorithmLogic.refund} needs to undo this take (a window start, an entry time, a
   * queue position), as one number so that any store can keep it. Absent when not needed.
   */
  receipt?: number;
  /** Leaky bucket: milliseconds the admitted request waits for its turn. */
  delayMs?: number;
}

/**
 * The pure arithmetic of one algorithm. `C` is its normalised configuration (plain numbers, safe to
 * serialise); `S` is the state of one key (plain numbers or arrays of numbers).
 */
export interface AlgorithmLogic<S, C> {
  /** The algorithm's name; a store that runs its own code (a Lua script) dispatches on it. */
  readonly algorithm: AlgorithmName;
  /** The most units a key can hold (the `limit` of every {@link TakeResult}). */
  limit(config: C): number;
  /**
   * Adjusts a state for a clock that moved backwards (`at` earlier than the state implies), and
   * returns the state itself otherwise. The adjusted state must not offer more units at `at` than
   * the old one offered at its latest time (no tokens created), and must be fully available again
   * within the algorithm's horizon of `at` (no lockout longer than a window).
   */
  rebase(state: S, at: number, config: C): S;
  /** Units a take could spend at `at`: an integer from 0 to the limit, non-decreasing in `at`. */
  available(state: S | undefined, at: number, config: C): number;
  /**
   * The smallest whole number of milliseconds `d` such that `available(state, at + d) >= units`,
   * for `units` from 1 to the limit. Algorithms whose quota is not returned by time
   * (concurrency) return their configured hint instead.
   */
  delayUntil(state: S | undefined, at: number, units: number, config: C): number;
  /** Spends `cost` units at `at`; only called when `available(state, at) >= cost`. */
  consume(state: S | undefined, at: number, cost: number, config: C): Consumed<S>;
  /**
   * Gives back `cost` units spent by a take at `at` that returned `receipt`. Returns `undefined`
   * when the result is equivalent to a fresh key. Undoes exactly what the take did when nothing was
   * taken after it; otherwise gives back only what it can without admitting more than the
   * algorithm promises (documented per algorithm).
   */
  refund(state: S, at: number, cost: number, receipt: number | undefined, config: C): S | undefined;
  /**
   * Epoch milliseconds from which the state is equivalent to a fresh key, so a store may delete it
   * (and a Redis store may set it as the key's expiry). `Infinity` for never.
   */
  expiresAt(state: S, config: C): number;
}

/** The outcome of {@link decide}: the state to store, the result, and the refund receipt. */
export interface Decision<S> {
  /** The state to store. The very same object as the input when nothing changed. */
  state: S | undefined;
  /** The public result. */
  result: TakeResult;
  /** Pass to {@link AlgorithmLogic.refund} to undo an admitted take. */
  receipt?: number;
}

/**
 * Decides one take of `cost` units at `now`. Pure: returns the new state instead of storing it.
 * A store calls this inside whatever makes its read-modify-write atomic.
 */
export function decide<S, C>(
  logic: AlgorithmLogic<S, C>,
  config: C,
  stored: S | undefined,
  now: number,
  cost: number,
): Decision<S> {
  const state = stored === undefined ? undefined : logic.rebase(stored, now, config);
  const available = logic.available(state, now, config);
  if (available < cost) return { state, result: describe(logic, config, state, now, cost) };
  const consumed = logic.consume(state, now, cost, config);
  const remaining = logic.available(consumed.state, now, config);
  const result: TakeResult = {
    allowed: true,
    limit: logic.limit(config),
    remaining,
    resetMs: resetDelay(logic, config, consumed.state, now, remaining),
    retryAfterMs: 0,
  };
  if (consumed.delayMs !== undefined) result.delayMs = consumed.delayMs;
  return { state: consumed.state, result, receipt: consumed.receipt };
}

/**
 * Describes the key at `now` without taking anything: whether a take of `cost` would be admitted,
 * the units available (not minus `cost`), the reset delay, and the retry delay for `cost`. For a
 * take that would be rejected this is exactly the result that take returns.
 */
export function inspect<S, C>(
  logic: AlgorithmLogic<S, C>,
  config: C,
  stored: S | undefined,
  now: number,
  cost: number,
): TakeResult {
  const state = stored === undefined ? undefined : logic.rebase(stored, now, config);
  return describe(logic, config, state, now, cost);
}

/**
 * The result for `state` (already rebased to `now`) and a take of `cost`: what {@link inspect}
 * returns, and with `cost` 0 what {@link decide} returns for the state after an admitted take
 * (less `delayMs`). A store that decides elsewhere (the Redis store's Lua) and hands back the state
 * it decided on gets its results from here, exactly.
 */
export function describe<S, C>(
  logic: AlgorithmLogic<S, C>,
  config: C,
  state: S | undefined,
  now: number,
  cost: number,
): TakeResult {
  const available = logic.available(state, now, config);
  const limit = logic.limit(config);
  const resetMs = resetDelay(logic, config, state, now, available);
  let retryAfterMs = 0;
  if (available < cost) {
    // A take of one unit more than is left waits for the reset: resetDelay() made this very
    // delayUntil() call (the most common rejection: nothing left, a cost of 1), not made twice.
    retryAfterMs =
      cost === available + 1 && available < limit
        ? resetMs
        : logic.delayUntil(state, now, cost, config);
  }
  return { allowed: available >= cost, limit, remaining: available, resetMs, retryAfterMs };
}

function resetDelay<S, C>(
  logic: AlgorithmLogic<S, C>,
  config: C,
  state: S | undefined,
  now: number,
  remaining: number,
): number {
  return remaining >= logic.limit(config) ? 0 : logic.delayUntil(state, now, remaining + 1, config);
}

const NUDGES = 4;

/**
 * Turns a closed-form estimate of a delay into the exact answer: the smallest whole `d >= 0` for
 * which `ok(d)` holds, where `ok` is monotone (false, then true forever) and true at `upper`.
 *
 * The estimate comes from the algorithm's formula; `ok` re-evaluates the very predicate the
 * decision uses. Floating-point rounding can put the formula a millisecond off the predicate;
 * checking against the predicate itself makes "a request exactly `d` later is admitted, one a
 * millisecond earlier is not" hold by construction. A few steps fix a near miss; a binary search
 * bounds the cost of a far one.
 */
export function settle(estimate: number, upper: number, ok: (d: number) => boolean): number {
  const top = Math.max(0, Math.ceil(upper));
  let d = Number.isFinite(estimate) ? Math.min(top, Math.max(0, Math.ceil(estimate))) : top;
  if (ok(d)) {
    for (let i = 0; i < NUDGES; i++) {
      if (d === 0 || !ok(d - 1)) return d;
      d -= 1;
    }
    return search(0, d, ok);
  }
  for (let i = 0; i < NUDGES; i++) {
    d += 1;
    if (ok(d)) return d;
  }
  return search(d + 1, Math.max(d + 1, top), ok);
}

/** Smallest `d` in [`low`, `high`] with `ok(d)`; `high` when there is none below it. */
function search(low: number, high: number, ok: (d: number) => boolean): number {
  let lo = low;
  let hi = high;
  while (lo < hi) {
    const mid = lo + Math.floor((hi - lo) / 2);
    if (ok(mid)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** Start of the window of length `windowMs` containing `at`, aligned to multiples since the epoch. */
export function windowStart(at: number, windowMs: number): number {
  return Math.floor(at / windowMs) * windowMs;
}

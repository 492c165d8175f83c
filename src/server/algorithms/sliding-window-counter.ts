/**
 * Sliding window counter: the current window's count plus the previous window's, weighted by how
 * much of it the trailing window still covers.
 *
 * @module
 */
import { z } from 'zod';
import { durationMs, parseOptions, positiveInteger } from '../options.js';
import { type LimiterOptions, limiterOptionsShape, RateLimiter } from './limiter.js';
import { type AlgorithmLogic, settle, windowStart } from './logic.js';

/** Parameters of a {@link SlidingWindowCounter}. */
export interface SlidingWindowCounterConfig {
  /** Units admitted per window (exactly, per aligned window; approximately, per trailing one). */
  limit: number;
  /** Length of a window in milliseconds. Windows start at multiples of it since the epoch. */
  windowMs: number;
}

/** A key's state: two counters. */
export interface SlidingWindowCounterState {
  /** Start of the current window, epoch milliseconds. */
  start: number;
  /** Units admitted in the current window. */
  current: number;
  /** Units admitted in the window before it. */
  previous: number;
}

/** The zod shape of {@link SlidingWindowCounterConfig}; the mock server's config reuses it. */
export const slidingWindowCounterShape = { limit: positiveInteger, windowMs: durationMs };

type State = SlidingWindowCounterState;

/** The counters as seen from `at`: rolled forward into the window of `at`. */
function view(state: State | undefined, at: number, windowMs: number): State {
  const start = windowStart(at, windowMs);
  if (state === undefined) return { start, current: 0, previous: 0 };
  if (start === state.start) return state;
  if (start === state.start + windowMs) return { start, current: 0, previous: state.current };
  return { start, current: 0, previous: 0 };
}

/**
 * The milliseconds of the previous window still inside the trailing window at `at`: the trailing
 * window is the `windowMs` whole milliseconds that end with the current one, `(at - windowMs, at]`,
 * so at a window's first millisecond it holds all of the previous window but its first
 * millisecond. Counting that millisecond too (`windowMs - elapsed`) refused a client paced at
 * exactly the declared rate whenever a request fell on a window's first millisecond after a full
 * window (issue 23: 72 refusals at 200/s with a burst of 1).
 */
function share(v: State, at: number, windowMs: number): number {
  return Math.max(0, windowMs - (at - v.start) - 1);
}

/**
 * The previous window's count scaled by the share of it still inside the trailing window, rounded
 * down to whole units: `floor(previous * share / windowMs)`. At whole milliseconds the product is
 * an exact integer, so the rounding is exact too.
 */
function weighted(v: State, at: number, windowMs: number): number {
  return Math.floor((v.previous * share(v, at, windowMs)) / windowMs);
}

/**
 * Smallest offset `e` into a window at which `floor(count * (windowMs - e - 1) / windowMs) <= room`,
 * from the closed form `e > windowMs - 1 - (room + 1) * windowMs / count`.
 */
function offsetWhereWeightFits(count: number, room: number, windowMs: number): number {
  if (count <= room) return 0;
  return Math.max(0, Math.floor(windowMs - 1 - ((room + 1) * windowMs) / count) + 1);
}

/**
 * The arithmetic. Admits a request of `cost` when
 * `floor(previous * weight) + current + cost <= limit`, the weight `(windowMs - elapsed - 1) /
 * windowMs` (see `share`): the previous window counts in whole units, so a weighted 4.5 of a limit
 * of 5 leaves room for one more (as in the seed's worked example). Requests that arrive at least
 * `windowMs / limit` apart are never refused (issue 23, section 2): the `k`-th of a window comes
 * at least `k * windowMs / limit` into it, where the previous window, at most `limit`, weighs
 * strictly less than `limit - k`.
 *
 * Backwards clock: a request dated before the current window moves both counters into the window
 * of the new time, as its current count (capped at the limit). That count is at least what the
 * key used before, so nothing is forgiven, and it clears within two windows, as the key would have
 * without the jump.
 */
export const slidingWindowCounter: AlgorithmLogic<State, SlidingWindowCounterConfig> = {
  algorithm: 'sliding-window-counter',
  limit: (config) => config.limit,
  rebase(state, at, { limit, windowMs }) {
    if (at >= state.start) return state;
    const current = Math.min(limit, state.current + state.previous);
    return { start: windowStart(at, windowMs), current, previous: 0 };
  },
  available(state, at, { limit, windowMs }) {
    if (state === undefined) return limit;
    const v = view(state, at, windowMs);
    return Math.max(0, limit - weighted(v, at, windowMs) - v.current);
  },
  delayUntil(state, at, units, config) {
    const { limit, windowMs } = config;
    const v = view(state, at, windowMs);
    const room = limit - units - v.current;
    const estimate =
      room >= 0 && offsetWhereWeightFits(v.previous, room, windowMs) < windowMs
        ? v.start + offsetWhereWeightFits(v.previous, room, windowMs) - at
        : // The current count must first become the previous one, in the next window.
          v.start + windowMs + offsetWhereWeightFits(v.current, limit - units, windowMs) - at;
    return settle(
      estimate,
      v.start + 2 * windowMs - at,
      (d) => slidingWindowCounter.available(state, at + d, config) >= units,
    );
  },
  consume(state, at, cost, { windowMs }) {
    const v = view(state, at, windowMs);
    return {
      state: { start: v.start, current: v.current + cost, previous: v.previous },
      receipt: v.start,
    };
  },
  refund(state, _at, cost, receipt, { windowMs }) {
    let { current, previous } = state;
    if (state.start === receipt) current = Math.max(0, current - cost);
    else if (state.start === (receipt as number) + windowMs)
      previous = Math.max(0, previous - cost);
    else return state;
    return current === 0 && previous === 0 ? undefined : { start: state.start, current, previous };
  },
  expiresAt(state, { windowMs }) {
    if (state.current > 0) return state.start + 2 * windowMs;
    return state.previous > 0 ? state.start + windowMs : Number.NEGATIVE_INFINITY;
  },
};

/** Options of {@link SlidingWindowCounter}. */
export interface SlidingWindowCounterOptions extends SlidingWindowCounterConfig, LimiterOptions {}

const schema = z.strictObject({ ...slidingWindowCounterShape, ...limiterOptionsShape });

/**
 * Approximates a sliding window with two counters per key: the current window's count, plus the
 * previous window's count weighted by the share of it the trailing window still covers (the
 * trailing window being the `windowMs` whole milliseconds that end with the current one: all of
 * the previous window but its first millisecond at the boundary, about half of it halfway
 * through). Constant memory per key, and no 2x burst at the boundary: the previous window's
 * requests keep counting as they fade out.
 *
 * What it promises exactly: at most `limit` units per aligned window (the current count is part of
 * the estimate), and no refusal for requests of one unit at least `windowMs / limit` apart (a
 * client paced at the declared rate). Per trailing window it is an estimate that assumes the previous window's requests
 * were spread evenly; when they were bunched at its end, a trailing window can see more than
 * `limit`: in the worst case (both windows spent at their very ends) twice the limit, as with a
 * fixed window, though only for traffic shaped exactly so.
 *
 * - `retryAfterMs` is exact: the estimate only falls as time passes, and the delay is checked
 *   against it.
 * - `resetMs` is the time until the estimate next drops by a whole unit.
 * - Windows are aligned to multiples of `windowMs` since the epoch.
 *
 * @example
 * const limiter = new SlidingWindowCounter({ limit: 600, windowMs: 60_000 });
 * const { allowed, remaining } = await limiter.take(apiKey);
 */
export class SlidingWindowCounter extends RateLimiter<State, SlidingWindowCounterConfig> {
  constructor(options: SlidingWindowCounterOptions) {
    const { limit, windowMs, ...rest } = parseOptions(schema, options);
    super(slidingWindowCounter, { limit, windowMs }, rest);
  }
}

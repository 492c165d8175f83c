/**
 * Sliding log: the time of every admitted request, counted over the trailing window.
 *
 * @module
 */
import { z } from 'zod';
import { durationMs, parseOptions, positiveInteger } from '../options.js';
import { type LimiterOptions, limiterOptionsShape, RateLimiter } from './limiter.js';
import type { AlgorithmLogic } from './logic.js';

/** Parameters of a {@link SlidingLog}. */
export interface SlidingLogConfig {
  /** Units admitted in any window of `windowMs`. */
  limit: number;
  /** Length of the trailing window in milliseconds. */
  windowMs: number;
}

/**
 * A key's state: admitted requests as a flat list of `[time, cost]` pairs, oldest first. Requests
 * of the same millisecond share one pair, so a key holds at most `min(limit, windowMs)` pairs.
 */
export interface SlidingLogState {
  /** `[t0, cost0, t1, cost1, ...]`, times in epoch milliseconds, ascending. */
  entries: readonly number[];
}

/** The zod shape of {@link SlidingLogConfig}; the mock server's config reuses it. */
export const slidingLogShape = { limit: positiveInteger, windowMs: durationMs };

/** Index of the first pair still inside the window ending at `at` (time > at - windowMs). */
function firstLive(entries: readonly number[], at: number, windowMs: number): number {
  let i = 0;
  while (i < entries.length && (entries[i] as number) <= at - windowMs) i += 2;
  return i;
}

function used(entries: readonly number[], from: number): number {
  let sum = 0;
  for (let i = from + 1; i < entries.length; i += 2) sum += entries[i] as number;
  return sum;
}

/**
 * The arithmetic. Backwards clock: the whole log is shifted so that its newest entry sits at the
 * new time; every entry then expires at most `windowMs` after it, and none expires earlier relative
 * to the others. Refund: removes the take's own entry, found by its time.
 */
export const slidingLog: AlgorithmLogic<SlidingLogState, SlidingLogConfig> = {
  algorithm: 'sliding-log',
  limit: (config) => config.limit,
  rebase(state, at) {
    const newest = state.entries[state.entries.length - 2];
    if (newest === undefined || at >= newest) return state;
    const shift = at - newest;
    return { entries: state.entries.map((value, i) => (i % 2 === 0 ? value + shift : value)) };
  },
  available(state, at, { limit, windowMs }) {
    if (state === undefined) return limit;
    return Math.max(0, limit - used(state.entries, firstLive(state.entries, at, windowMs)));
  },
  delayUntil(state, at, units, config) {
    const { limit, windowMs } = config;
    if (state === undefined) return 0;
    const { entries } = state;
    const from = firstLive(entries, at, windowMs);
    let free = limit - used(entries, from);
    if (free >= units) return 0;
    // Entries leave oldest first, each exactly `windowMs` after it was admitted.
    for (let i = from; i < entries.length; i += 2) {
      free += entries[i + 1] as number;
      if (free >= units) return (entries[i] as number) + windowMs - at;
    }
    return windowMs;
  },
  consume(state, at, cost, { windowMs }) {
    const old = state?.entries ?? [];
    const entries = old.slice(firstLive(old, at, windowMs));
    const last = entries.length - 1;
    if (entries[last - 1] === at) entries[last] = (entries[last] as number) + cost;
    else entries.push(at, cost);
    return { state: { entries }, receipt: at };
  },
  refund(state, _at, cost, receipt) {
    const entries = [...state.entries];
    for (let i = entries.length - 2; i >= 0; i -= 2) {
      if (entries[i] !== receipt) continue;
      const left = (entries[i + 1] as number) - cost;
      if (left > 0) entries[i + 1] = left;
      else entries.splice(i, 2);
      return entries.length > 0 ? { entries } : undefined;
    }
    return state;
  },
  expiresAt(state, { windowMs }) {
    const newest = state.entries[state.entries.length - 2];
    return newest === undefined ? Number.NEGATIVE_INFINITY : newest + windowMs;
  },
};

/** Options of {@link SlidingLog}. */
export interface SlidingLogOptions extends SlidingLogConfig, LimiterOptions {}

const schema = z.strictObject({ ...slidingLogShape, ...limiterOptionsShape });

/**
 * Admits at most `limit` units in any window of `windowMs` milliseconds, whatever its start:
 * exact, with no boundary burst. It pays for that with memory: one entry per distinct millisecond
 * in which requests were admitted, up to `limit` entries per key, and time proportional to them
 * per decision. Suited to low limits on expensive operations (logins, password resets, reports).
 *
 * - `retryAfterMs` is exact: when enough of the oldest entries have left the window.
 * - `resetMs` is the time until the oldest entry leaves.
 * - A backwards clock shifts the log with it: nothing is forgotten, nothing lingers past
 *   `windowMs`.
 *
 * @example
 * const logins = new SlidingLog({ limit: 5, windowMs: 15 * 60_000 });
 * const { allowed } = await logins.take(`login:${username}`);
 */
export class SlidingLog extends RateLimiter<SlidingLogState, SlidingLogConfig> {
  constructor(options: SlidingLogOptions) {
    const { limit, windowMs, ...rest } = parseOptions(schema, options);
    super(slidingLog, { limit, windowMs }, rest);
  }
}

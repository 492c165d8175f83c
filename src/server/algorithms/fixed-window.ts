/**
 * Fixed window: one counter per key and window.
 *
 * @module
 */
import { z } from 'zod';
import { durationMs, parseOptions, positiveInteger } from '../options.js';
import { type LimiterOptions, limiterOptionsShape, RateLimiter } from './limiter.js';
import { type AlgorithmLogic, windowStart } from './logic.js';

/** Parameters of a {@link FixedWindow}. */
export interface FixedWindowConfig {
  /** Units admitted per window. */
  limit: number;
  /** Length of a window in milliseconds. Windows start at multiples of it since the epoch. */
  windowMs: number;
}

/** A key's state: the window its count belongs to, and the count. */
export interface FixedWindowState {
  /** Start of the counted window, epoch milliseconds. */
  start: number;
  /** Units admitted in that window. */
  count: number;
}

/** The zod shape of {@link FixedWindowConfig}; the mock server's config reuses it. */
export const fixedWindowShape = { limit: positiveInteger, windowMs: durationMs };

function counted(state: FixedWindowState | undefined, at: number, windowMs: number): number {
  return state !== undefined && state.start === windowStart(at, windowMs) ? state.count : 0;
}

/**
 * The arithmetic. Backwards clock: a request dated before the counted window moves the count into
 * the window of the new time, so nothing is forgiven and the count clears at the end of that
 * window, at most `windowMs` away. Refund: only within the window of the take.
 */
export const fixedWindow: AlgorithmLogic<FixedWindowState, FixedWindowConfig> = {
  algorithm: 'fixed-window',
  limit: (config) => config.limit,
  rebase(state, at, { windowMs }) {
    return at < state.start ? { start: windowStart(at, windowMs), count: state.count } : state;
  },
  available(state, at, { limit, windowMs }) {
    return Math.max(0, limit - counted(state, at, windowMs));
  },
  delayUntil(state, at, units, config) {
    if (fixedWindow.available(state, at, config) >= units) return 0;
    // Only the end of the window gives anything back, and then it gives everything.
    return windowStart(at, config.windowMs) + config.windowMs - at;
  },
  consume(state, at, cost, { windowMs }) {
    const start = windowStart(at, windowMs);
    return { state: { start, count: counted(state, at, windowMs) + cost }, receipt: start };
  },
  refund(state, _at, cost, receipt) {
    if (state.start !== receipt) return state;
    const count = state.count - cost;
    return count > 0 ? { start: state.start, count } : undefined;
  },
  expiresAt: (state, { windowMs }) => state.start + windowMs,
};

/** Options of {@link FixedWindow}. */
export interface FixedWindowOptions extends FixedWindowConfig, LimiterOptions {}

const schema = z.strictObject({ ...fixedWindowShape, ...limiterOptionsShape });

/**
 * Admits up to `limit` units per window of `windowMs`, windows aligned to multiples of `windowMs`
 * since the epoch (so every key and every process agrees where they start).
 *
 * Cheap (two numbers per key) and exact per window, but a client can spend a whole window's quota
 * at its end and another at the start of the next: up to twice the limit within a few
 * milliseconds. Use it for quotas that really are per calendar window.
 *
 * - `retryAfterMs` is exact: the time to the end of the window.
 * - `resetMs` is the time to the end of the window (0 for an unused key).
 * - A clock that moves back into an earlier window keeps the count (no quota is created) and
 *   clears it at the end of that window, never more than `windowMs` later.
 *
 * @example
 * const limiter = new FixedWindow({ limit: 100, windowMs: 60_000 });
 * const result = await limiter.take('203.0.113.7');
 * if (!result.allowed) console.log(`retry in ${result.retryAfterMs} ms`);
 */
export class FixedWindow extends RateLimiter<FixedWindowState, FixedWindowConfig> {
  constructor(options: FixedWindowOptions) {
    const { limit, windowMs, ...rest } = parseOptions(schema, options);
    super(fixedWindow, { limit, windowMs }, rest);
  }
}

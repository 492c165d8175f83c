/**
 * GCRA, the generic cell rate algorithm: one timestamp per key, the theoretical arrival time.
 *
 * @module
 */
import { z } from 'zod';
import { nonNegativeInteger, parseOptions, positiveNumber } from '../options.js';
import { type LimiterOptions, limiterOptionsShape, RateLimiter } from './limiter.js';
import { type AlgorithmLogic, settle } from './logic.js';

/** Parameters of a {@link Gcra}. */
export interface GcraConfig {
  /** Requests per second in the long run, possibly fractional. One every `1000 / rate` ms. */
  rate: number;
  /**
   * Requests tolerated beyond the steady pace. A key at rest admits `burst + 1` at once (the
   * convention of redis-cell and throttled, and of the seed's worked example); `0` enforces the
   * pace strictly.
   */
  burst: number;
}

/** A key's state. */
export interface GcraState {
  /**
   * The theoretical arrival time, epoch milliseconds: when the key would be at rest had every
   * admitted request arrived exactly on pace. Its distance ahead of now is the key's debt.
   */
  tat: number;
}

/** The zod shape of {@link GcraConfig}; the mock server's config reuses it. */
export const gcraShape = { rate: positiveNumber, burst: nonNegativeInteger };

/**
 * Arithmetic shared by {@link gcra} and the leaky bucket, which meters its queue the same way.
 * `limit` units fit; each takes `intervalMs` to drain.
 */
export interface Meter {
  limit: number;
  intervalMs: number;
}

/** Milliseconds of work still owed at `at` (0 for a key at rest). */
function debt(tat: number | undefined, at: number): number {
  return tat === undefined ? 0 : Math.max(0, tat - at);
}

/** Units free at `at`: the limit minus the units still draining, counted whole. */
export function meterAvailable(tat: number | undefined, at: number, meter: Meter): number {
  return Math.max(0, meter.limit - Math.ceil(debt(tat, at) / meter.intervalMs));
}

/** Smallest whole `d` with `meterAvailable(tat, at + d) >= units`. */
export function meterDelay(tat: number | undefined, at: number, units: number, m: Meter): number {
  if (meterAvailable(tat, at, m) >= units) return 0;
  // Room for `units` once the debt is down to (limit - units) intervals.
  const estimate = debt(tat, at) - (m.limit - units) * m.intervalMs;
  return settle(estimate, debt(tat, at) + 1, (d) => meterAvailable(tat, at + d, m) >= units);
}

/** A clock that went backwards shows a debt above the most a key can owe; cap it there. */
export function meterRebase(tat: number, at: number, m: Meter): number {
  const most = m.limit * m.intervalMs;
  return tat - at > most ? at + most : tat;
}

/**
 * The `tat` after giving back `cost` units of a take that started at `start` (its receipt): exactly
 * `start` when that take is still the last one (`start + cost * interval` is the very value it
 * wrote), else the debt minus the cost.
 */
export function meterRefund(
  tat: number,
  cost: number,
  start: number | undefined,
  m: Meter,
): number {
  const taken = cost * m.intervalMs;
  return start !== undefined && tat === start + taken ? start : tat - taken;
}

function meterOf(config: GcraConfig): Meter {
  return { limit: config.burst + 1, intervalMs: 1000 / config.rate };
}

/**
 * The arithmetic. A request of cost `n` is admitted when `max(tat, now) + n * interval - now`
 * stays within `(burst + 1) * interval`, and then moves `tat` there.
 *
 * Backwards clock: a debt larger than any key can owe (`(burst + 1) * interval`) can only come
 * from a clock that moved back; it is capped there, so the key is treated as fully spent (nothing
 * created) and recovers within one full burst's time. Refund: the debt shrinks by the cost (restoring
the exact `tat` from before the take when no take came after it).
 */
export const gcra: AlgorithmLogic<GcraState, GcraConfig> = {
  algorithm: 'gcra',
  limit: (config) => config.burst + 1,
  rebase(state, at, config) {
    const tat = meterRebase(state.tat, at, meterOf(config));
    return tat === state.tat ? state : { tat };
  },
  available: (state, at, config) => meterAvailable(state?.tat, at, meterOf(config)),
  delayUntil: (state, at, units, config) => meterDelay(state?.tat, at, units, meterOf(config)),
  consume(state, at, cost, config) {
    const start = Math.max(state?.tat ?? at, at);
    return { state: { tat: start + cost * meterOf(config).intervalMs }, receipt: start };
  },
  refund(state, at, cost, receipt, config) {
    const tat = meterRefund(state.tat, cost, receipt, meterOf(config));
    return tat <= at ? undefined : { tat };
  },
  expiresAt: (state) => state.tat,
};

/** Options of {@link Gcra}. */
export interface GcraOptions extends GcraConfig, LimiterOptions {}

const schema = z.strictObject({ ...gcraShape, ...limiterOptionsShape });

/**
 * The generic cell rate algorithm: `rate` requests per second with a tolerance of `burst` extra
 * requests, kept as one timestamp per key. Equivalent to a token bucket of `burst + 1` tokens
 * refilled at `rate`, stored as "when the key will be at rest" instead of a balance.
 *
 * - `limit` is `burst + 1`: a key at rest admits that many at once (with `rate: 10, burst: 5`, six
 *   requests at t=0 pass, the seventh waits 100 ms).
 * - `retryAfterMs` is exact: the time until the debt leaves room for the cost.
 * - `resetMs` is the time until the next unit frees.
 * - A backwards clock never shows a key more than fully spent, so it recovers within
 *   `(burst + 1) / rate` seconds.
 *
 * @example
 * const limiter = new Gcra({ rate: 10, burst: 5 });
 * const { allowed, retryAfterMs } = await limiter.take(tenantId);
 */
export class Gcra extends RateLimiter<GcraState, GcraConfig> {
  constructor(options: GcraOptions) {
    const { rate, burst, ...rest } = parseOptions(schema, options);
    super(gcra, { rate, burst }, rest);
  }
}

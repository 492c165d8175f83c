/**
 * A token policy whose reset says when it is full again (OpenAI's, Anthropic's) and that declares
 * no window: `limit * reset / missing` is the time to fill it from empty. A token bucket gives the
 * same figure on every answer; a fixed window's or a sliding log's jumps as its reset and its
 * missing units move apart. So the policy is taken as refilling continuously, at that rate, only
 * once two successive answers agree (`refill.ts` then paces it, never past the reset): the parser
 * says nothing about it, the answers do.
 *
 * A reset sent as a moment in whole seconds (Anthropic's RFC 3339 timestamps) is truncated, up to
 * a second early, so the window it implies is a range: `limit * reset / missing` at least,
 * `limit * (reset + 1 s) / missing` at most. Two answers agree when their ranges meet, and the
 * policy is paced at the least upper bound (taken as exact, a minute's bucket was read as 58.75 s
 * and paced 2 % early). Only the header family makes a reset such a range, never its value: a
 * duration (OpenAI's `6m0s`, `1s`) is exact even where it falls on a whole second, and read as a
 * range a few units missing made one wide enough to agree with anything. And a range wider than
 * {@link MAX_RANGE} of its window (a reset under 4 s) is not compared at all.
 *
 * @module
 */
import type { RateLimitSource } from '../../headers/types.js';
import { onWholeSecond } from './late-reset.js';

/** What this rule keeps per policy (fields of `LearnedPolicy`; plain JSON). */
export interface FillWindowFields {
  limit?: number;
  windowMs?: number;
  unit?: string;
  refill?: 'gradual' | 'at-once';
  /** The window the last answer implied, in milliseconds (`limit * reset / missing`). */
  fillMs?: number;
  /**
   * The most the last answer's window can be, in milliseconds, where its reset was a moment in
   * whole seconds (`limit * (reset + 1 s) / missing`); absent for an exact reset.
   */
  fillMaxMs?: number;
}

/** How early a reset sent as a moment in whole seconds may be (truncated), in milliseconds. */
const WHOLE_SECOND_MS = 1000;

/**
 * Header families whose reset is a moment (not a delay) that servers send in whole seconds,
 * truncated: Anthropic's RFC 3339 `anthropic-ratelimit-*-reset`. (OpenAI's are durations.)
 */
const MOMENT_SOURCES: ReadonlySet<RateLimitSource> = new Set(['anthropic']);

/** Relative drift two answers' windows may show and still be one bucket's: each reset's rounding
 * (1 % at most, {@link MIN_RESET_MS}) and the bucket's own arithmetic. */
const DRIFT = 0.03;

/** The shortest reset compared, in milliseconds: its rounding to the millisecond is 1 % at most. */
const MIN_RESET_MS = 100;

/**
 * The widest range a whole-second reset may give and still be compared, relative to its least
 * window (a reset of 4 s at least): a wider one meets nearly any other, and its upper bound paces
 * too slowly to be worth it.
 */
const MAX_RANGE = 0.25;

/**
 * Whether a reset of `resetMs` from `now`, read from the header family `source`, was a moment in
 * whole seconds: truncated, so up to a second early. (Against the server's `Date` rather than
 * `now`, where the two disagree, the delay itself is whole seconds: `parse.ts`.)
 */
export function truncatedReset(
  source: RateLimitSource | undefined,
  now: number,
  resetMs: number | undefined,
): boolean {
  if (source === undefined || resetMs === undefined || !MOMENT_SOURCES.has(source)) return false;
  return onWholeSecond(now + resetMs) || onWholeSecond(resetMs);
}

/**
 * Reads one fresh report of a policy with no window (none declared, none found yet): where
 * its window agrees with the previous answer's, sets `windowMs` and `refill: 'gradual'` (a
 * refusal while paced later makes it a window: `refill.ts`). `truncated`: the reset was a moment
 * in whole seconds ({@link truncatedReset}).
 */
export function learnFillWindow(
  p: FillWindowFields,
  reported: { remaining?: number; resetMs?: number },
  truncated = false,
): void {
  const { limit } = p;
  // A declared window, or one found already, or a refill already learned: nothing to infer.
  if (p.unit !== 'tokens' || p.windowMs !== undefined || p.refill || !limit) return;
  const { remaining = limit, resetMs = 0 } = reported;
  const missing = limit - remaining;
  const prev = p.fillMs;
  const prevMax = p.fillMaxMs;
  delete p.fillMs;
  delete p.fillMaxMs;
  // Full, or a reset too short for its millisecond to be within 1 % (or, truncated, its second
  // within a quarter): the next answer starts again.
  if (missing <= 0 || resetMs < MIN_RESET_MS) return;
  if (truncated && WHOLE_SECOND_MS > MAX_RANGE * resetMs) return;
  const w = (limit * resetMs) / missing;
  const wMax = truncated ? (limit * (resetMs + WHOLE_SECOND_MS)) / missing : undefined;
  p.fillMs = w;
  if (wMax !== undefined) p.fillMaxMs = wMax;
  if (prev === undefined) return;
  if (wMax === undefined && prevMax === undefined) {
    if (Math.abs(w - prev) > DRIFT * Math.max(w, prev)) return;
    p.windowMs = Math.round(w);
  } else {
    // Ranges (an exact window is one of no width): they meet, within the drift, or they do not.
    const hi = Math.min(wMax ?? w, prevMax ?? prev);
    const lo = Math.max(w, prev);
    if (lo - hi > DRIFT * Math.max(lo, hi)) return;
    // The least upper bound: any shorter window paces the bucket early.
    p.windowMs = Math.ceil(Math.max(hi, lo));
  }
  p.refill = 'gradual';
}

/**
 * Whether the policy was found a token bucket here, its window inferred from its answers: its
 * reset says when it is full again, so each report is the bucket's whole state (`refill.ts`).
 */
export function bucketByAnswers(p: Pick<FillWindowFields, 'refill' | 'fillMs'>): boolean {
  return p.refill === 'gradual' && p.fillMs !== undefined;
}

/**
 * A token policy whose reset says when it is full again (OpenAI's) and that declares no window:
 * `limit * reset / missing` is the time to fill it from empty. A token bucket gives the same
 * figure on every answer; a fixed window's or a sliding log's jumps as its reset and its missing
 * units move apart. So the policy is taken as refilling continuously, at that rate, only once two
 * successive answers agree (`refill.ts` then paces it, never past the reset): the parser says
 * nothing about it, the answers do.
 *
 * A reset in whole seconds (Anthropic's RFC 3339 timestamps) is truncated, up to a second early:
 * the window it implies is only a lower bound, `limit * (reset + 1 s) / missing` the upper. Two
 * answers agree when their ranges meet, and the pace takes the least upper bound, never faster
 * than the bucket (taken as exact, a minute's bucket read as 58.75 s was paced 2 % early).
 *
 * @module
 */
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
   * The most the last answer's window can be, in milliseconds, where its reset was in whole
   * seconds (`limit * (reset + 1 s) / missing`); absent for a reset to the millisecond.
   */
  fillMaxMs?: number;
}

/** How early a reset in whole seconds may be: truncated, up to a second, in milliseconds. */
const WHOLE_SECOND_MS = 1000;

/** Relative drift two answers' windows may show and still be one bucket's: each reset's rounding
 * (1 % at most, {@link MIN_RESET_MS}) and the bucket's own arithmetic. */
const DRIFT = 0.03;

/** The shortest reset compared, in milliseconds: its rounding to the millisecond is 1 % at most. */
const MIN_RESET_MS = 100;

/**
 * Reads one fresh report of a policy with no window (none declared, none found yet): where
 * its window agrees with the previous answer's, sets `windowMs` and `refill: 'gradual'` (a
 * refusal while paced later makes it a window: `refill.ts`).
 */
export function learnFillWindow(
  p: FillWindowFields,
  reported: { remaining?: number; resetMs?: number },
  now: number,
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
  // Full, or a reset too short for its millisecond to be within 1 %: the next answer starts again.
  if (missing <= 0 || resetMs < MIN_RESET_MS) return;
  const w = (limit * resetMs) / missing;
  p.fillMs = w;
  // A reset in whole seconds may be a second early: its window is a range, `w` to `wMax`.
  const wMax =
    onWholeSecond(now + resetMs) || onWholeSecond(resetMs)
      ? (limit * (resetMs + WHOLE_SECOND_MS)) / missing
      : undefined;
  if (wMax !== undefined) p.fillMaxMs = wMax;
  if (prev === undefined) return;
  if (wMax === undefined && prevMax === undefined) {
    if (Math.abs(w - prev) > DRIFT * Math.max(w, prev)) return;
    p.windowMs = Math.round(w);
  } else {
    const hi = Math.min(wMax ?? w, prevMax ?? prev);
    const lo = Math.max(w, prev);
    if (lo - hi > DRIFT * Math.max(lo, hi)) return;
    // The least upper bound: any shorter window paces the bucket early.
    p.windowMs = Math.ceil(Math.max(hi, lo));
  }
  p.refill = 'gradual';
}

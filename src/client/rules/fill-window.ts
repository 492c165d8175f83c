/**
 * A token policy whose reset says when it is full again (OpenAI's) and that declares no window:
 * `limit * reset / missing` is the time to fill it from empty. A token bucket gives the same
 * figure on every answer; a fixed window's or a sliding log's jumps as its reset and its missing
 * units move apart. So the policy is taken as refilling continuously, at that rate, only once two
 * successive answers agree (`refill.ts` then paces it, never past the reset): the parser says
 * nothing about it, the answers do.
 *
 * @module
 */

/** What this rule keeps per policy (fields of `LearnedPolicy`; plain JSON). */
export interface FillWindowFields {
  limit?: number;
  windowMs?: number;
  unit?: string;
  refill?: 'gradual' | 'at-once';
  /** The window the last answer implied, in milliseconds (`limit * reset / missing`). */
  fillMs?: number;
}

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
): void {
  const { limit } = p;
  // A declared window, or one found already, or a refill already learned: nothing to infer.
  if (p.unit !== 'tokens' || p.windowMs !== undefined || p.refill || !limit) return;
  const { remaining = limit, resetMs = 0 } = reported;
  const missing = limit - remaining;
  const prev = p.fillMs;
  delete p.fillMs;
  // Full, or a reset too short for its millisecond to be within 1 %: the next answer starts again.
  if (missing <= 0 || resetMs < MIN_RESET_MS) return;
  const w = (limit * resetMs) / missing;
  p.fillMs = w;
  if (prev === undefined || Math.abs(w - prev) > DRIFT * Math.max(w, prev)) return;
  p.windowMs = Math.round(w);
  p.refill = 'gradual';
}

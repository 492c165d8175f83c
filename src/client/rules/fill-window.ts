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
  fillWindowMs?: number;
  /** The units missing at that answer (`limit - remaining`), to bound its rounding. */
  fillMissing?: number;
}

/** Relative drift two answers' windows may show and still be one bucket's (its own arithmetic). */
const DRIFT = 0.01;

/**
 * Reads one fresh report of a policy that declares no window (`reported.windowMs` absent): where
 * its window agrees with the previous answer's, sets `windowMs` and, unless learned otherwise,
 * `refill: 'gradual'`. A reset is exact to the millisecond, so each window is `limit / missing` ms
 * uncertain; beyond that, 1 %.
 */
export function learnFillWindow(
  p: FillWindowFields,
  reported: { windowMs?: number; remaining?: number; resetMs?: number },
): void {
  const { limit } = p;
  const { remaining, resetMs } = reported;
  if (p.unit !== 'tokens' || reported.windowMs !== undefined || limit === undefined) return;
  if (remaining === undefined || resetMs === undefined) return;
  const missing = limit - remaining;
  if (missing <= 0 || resetMs <= 0 || !(limit > 0)) {
    // Full: nothing to compare; the next short answer starts again.
    delete p.fillWindowMs;
    delete p.fillMissing;
    return;
  }
  const w = (limit * resetMs) / missing;
  const prev = p.fillWindowMs;
  const prevMissing = p.fillMissing;
  p.fillWindowMs = w;
  p.fillMissing = missing;
  if (prev === undefined || prevMissing === undefined) return;
  const slack = limit / missing + limit / prevMissing + DRIFT * Math.max(w, prev);
  if (Math.abs(w - prev) > slack) return;
  p.windowMs = Math.round(w);
  // A refusal while paced has made it a window (`refill.ts`): that stays learned.
  if (p.refill === undefined) p.refill = 'gradual';
}

/**
 * A reset announced late, learned from the answers: the part of the declared quota (`quota.ts`)
 * for a policy that gives its limit and reset but no window (`X-RateLimit-*`), so no rate.
 *
 * Many fixed windows start at their first request and announce their end rounded up to the next
 * whole second, or past it: Flask-Limiter sends `int(end) + 1`, up to a second late. A client
 * that waits for that reset and probes right after a whole second starts the next window there,
 * whose end is announced nearly a second late again: 1.5 times the least time for a window of 2 s.
 *
 * What the answers tell: a window whose first request was sent at `s` and whose announced reset
 * is `R` ends before `R`, and it started no earlier than `s`, so it lasts less than `R - s`. The
 * least such bound over the windows seen (`windowBoundMs`) is a window's longest length, and the
 * current window ends before its first answer plus that. Where a window's end is not tied to its
 * first request (windows aligned to the clock, buckets), the same bound can be too short, and
 * nothing in the fields tells which kind a server runs. So the bound is tried once, where it saves
 * at least a twentieth of a window: one probe at it. It comes back with a whole window (the
 * server's reset runs late, `lateReset`: the bound is used from then on), or refused or partial
 * (`lateReset: false`: the announced reset is waited for, as before). The price where it fails:
 * one refusal per policy, once. The bound tightens only as windows start late in a second, so the
 * length is also bounded below (a window ends no earlier than a second before its announced
 * reset), and the whole seconds just under the upper bound, when the lower one allows them, are
 * tried first, as most such limits are written (`10 per 2 seconds`): a refusal there goes back to
 * the bound (two refusals at most, where both fail).
 *
 * @module
 */

/** What this keeps per policy (fields of `LearnedPolicy`; plain JSON). */
export interface LateResetFields {
  /** Quota per window. */
  limit?: number;
  /** The server's announced reset, epoch milliseconds. */
  resetAt?: number;
  /** The longest a window can last, by the windows seen (see the module comment), ms. */
  windowBoundMs?: number;
  /** When the current window's first request was answered, epoch milliseconds. */
  windowFirstAt?: number;
  /** Whether the announced reset runs late: tried once; `undefined` until tried. */
  lateReset?: boolean;
  /** A reset was seen to the millisecond, not in whole seconds: it is the truth. */
  exactReset?: true;
  /** Whole windows seen start (each with its reset in whole seconds). */
  windows?: number;
  /** The shortest a window can last, by the windows seen, ms. */
  windowFloorMs?: number;
  /** `false` once a window took longer than the whole seconds its bounds suggested. */
  wholeSeconds?: false;
}

/** One fresh report of a policy, as {@link learnLateReset} reads it. */
export interface LateResetReport {
  /** The estimate of units left just before the report. */
  before: number | undefined;
  /** The remaining the server reported. */
  remaining: number;
  /** The answered request's own units in this policy. */
  need: number;
  /** Whether the request was accepted. */
  accepted: boolean;
  /** Whether the request was this policy's probe. */
  probe: boolean;
  /** When the request was sent, epoch milliseconds. */
  sentAt: number;
  /** When the answer came, epoch milliseconds. */
  now: number;
  /** The reset the server reported, milliseconds from `now`. */
  resetMs: number | undefined;
}

/**
 * Learns from a fresh report of a policy without a rate. Call it before the report's reset is
 * recorded: `p.resetAt` is still the one announced before.
 */
export function learnLateReset(p: LateResetFields, report: LateResetReport): void {
  const { limit } = p;
  if (limit === undefined) return;
  const whole = report.accepted && report.remaining + report.need >= limit;
  if (report.probe && p.resetAt !== undefined && report.sentAt < p.resetAt) {
    // A probe sent before the announced reset, at the whole seconds the bounds suggest or at
    // the upper bound: a whole window confirms that the reset runs late; anything else drops
    // what it tried (the whole seconds first, then the bound).
    const atWholeSeconds = report.sentAt < (p.windowFirstAt ?? 0) + (p.windowBoundMs ?? 0);
    if (whole) p.lateReset = true;
    else if (atWholeSeconds && p.wholeSeconds !== false) p.wholeSeconds = false;
    else p.lateReset = false;
  }
  const { resetMs, now } = report;
  if (resetMs === undefined || p.exactReset) return;
  // Only resets in whole seconds (Unix seconds, or delays in seconds) run late by rounding: one
  // to the millisecond (OpenAI's `750ms`) is the truth, and so are all of that policy's.
  if (!(onWholeSecond(now + resetMs) || onWholeSecond(resetMs))) {
    p.exactReset = true;
    delete p.windowBoundMs;
    return;
  }
  if (whole && (report.before === undefined || report.before <= 0)) {
    p.windowFirstAt = now;
    const bound = now + resetMs - report.sentAt;
    p.windowBoundMs = Math.min(p.windowBoundMs ?? bound, bound);
    // It ends at or after the second before the announced reset: it lasts at least this long.
    p.windowFloorMs = Math.max(p.windowFloorMs ?? 0, resetMs - 1000);
    p.windows = (p.windows ?? 0) + 1;
  }
}

/** Whether `ms` is a whole number of seconds, to the millisecond a parser's rounding may add. */
export function onWholeSecond(ms: number): boolean {
  return Math.abs(ms - Math.round(ms / 1000) * 1000) <= 1;
}

/**
 * When a spent policy's window has ended by what its answers tell, if that is well before its
 * announced reset and not ruled out; `undefined` otherwise (the announced reset holds).
 */
export function lateResetAt(p: LateResetFields): number | undefined {
  const { windowBoundMs, windowFirstAt, resetAt } = p;
  if (
    p.lateReset === false ||
    p.exactReset ||
    windowBoundMs === undefined ||
    windowFirstAt === undefined
  ) {
    return undefined;
  }
  // Two windows in whole seconds first: one may be a to-the-millisecond reset that fell on one.
  // And a bound of a second or more: rounding to whole seconds is what makes a reset late, and a
  // shorter bound comes from a bucket's next unit or a window seen from its middle.
  if (resetAt === undefined || (p.windows ?? 0) < 2 || windowBoundMs < 1000) return undefined;
  // A window's length is between its floor and its bound; windows are most often whole seconds
  // long ('10 per 2 seconds'), so the whole seconds just under the bound, if the floor allows
  // them, are taken for it (a refusal takes that back, and the bound is tried). A reset announced
  // exactly makes the bound itself whole seconds: nothing to gain there.
  const whole = Math.floor(windowBoundMs / 1000) * 1000;
  const length =
    p.wholeSeconds !== false && whole > 0 && whole >= (p.windowFloorMs ?? 0)
      ? whole
      : windowBoundMs;
  const end = windowFirstAt + length;
  // Worth a try only where it saves a twentieth of a window.
  return resetAt - end >= Math.max(50, windowBoundMs / 20) ? end : undefined;
}

/**
 * How a declared policy's units come back, learned from its answers: the part of the declared
 * quota (`quota.ts`) that decides when a spent policy may be sent to again.
 *
 * The header fields give a policy's quota `q` per window `w` (whole seconds) and, per answer, the
 * units left `r` and the seconds `t` until more come back, rounded up. A server that declares its
 * true rate (the mock server does: docs/mock-server.md) tells the rate `q / w` exactly, but `t` is
 * too coarse for a period shorter than a second: waiting for it, a bucket of 6 refilled at 10 a
 * second gets 6 a second, a window of 10 per 500 ms gets 10 a second. What the fields do not say is
 * how units come back:
 *
 * - **at once**, at a window's end (fixed window, sliding log): sending before then is refused;
 * - **gradually**, one unit each `w / q` (token bucket, GCRA, leaky bucket, and a sliding-window
 *   counter once its window turned): waiting for the whole `t` wastes them.
 *
 * So the client learns the policy's capacity, `peak` (the most units seen available at once), and
 * while it does not know, assumes at once, which is never early: a spent policy has all of `peak`
 * back at most `peak / rate` after the answer that found it spent (a window of `peak` per that
 * period has turned; a bucket has refilled `peak`), or at the announced reset, whichever comes
 * first (`refillAt`); there one probe goes, and its answer lets the rest go. (A reset seen to give
 * back only some units, a sliding log's oldest entries, is not waited for again: `partialReset`.)
 * Gradual refill is learned, never assumed (`refill: 'gradual'`):
 *
 * - an answer shows units back beyond what was left minus what was sent since, but fewer than a
 *   window's turn would give (the remaining, plus what is in flight and the request's own units,
 *   below `peak`);
 * - a probe sent when the at-once model said the policy is full finds it short of `peak`;
 * - a policy that holds less than its quota at once (`peak < q`: a bucket whose burst is less
 *   than a window's quota, or a window shorter than `w`) refills within its window, at once or
 *   gradually; after its first full refill, the last unit of it is held back a unit's time and a
 *   half (`trialAt`): a bucket shows the unit that came back meanwhile, a window does not (then
 *   `refill: 'at-once'`, and no more trials). That costs a window that time, once.
 *
 * A gradual policy, spent, is paced: one unit each `w / q`, from the answer that found it spent
 * (`paceAt`), several in flight if the answers take longer than that. A paced request refused
 * means the units do not come back at that rate after all (a sliding-window counter gives back
 * what its previous window held, and a request delayed into the next window leaves it one short):
 * from then on it is refilled as a window (`refill: 'at-once'`), each refill probed first.
 * The server's word still bounds the model: a reset of two seconds or more says nothing comes back
 * in the first `t - 1` of them, and a model that disagrees is not used (`notBefore`).
 *
 * Without a rate (no `w`, as in `X-RateLimit-*`), none of this applies: a spent policy waits for its
 * reset, or for what its windows tell when its reset runs late (`late-reset.ts`), and sends one
 * probe (`quota.ts`). Measured against the mock server, for every algorithm: docs/how-it-works.md,
 * docs/benchmarks.md.
 *
 * @module
 */
import { bucketByAnswers } from './fill-window.js';

/** What the refill model keeps per policy (fields of `LearnedPolicy`; plain JSON). */
export interface RefillFields {
  /** Quota per window (IETF `q`). */
  limit?: number;
  /** Window length, in milliseconds. */
  windowMs?: number;
  /** Unit of the quota. */
  unit?: string;
  /** The client's estimate of units left. */
  remaining?: number;
  /** The server's announced reset, epoch milliseconds. */
  resetAt?: number;
  /** The most units seen available at once: a report's remaining plus its request's own units. */
  peak?: number;
  /** How units come back, once learned (see the module comment); `undefined`: not yet known. */
  refill?: 'gradual' | 'at-once';
  /** Where the window was inferred from the answers: the last one's (`fill-window.ts`). */
  fillMs?: number;
  /** Not known to be gradual, spent: when all of `peak` is surely back, epoch milliseconds. */
  refillAt?: number;
  /** Gradual, spent: when the next unit is back, epoch milliseconds. */
  paceAt?: number;
  /** The last reset was 2 s or more away: nothing comes back before this, epoch milliseconds. */
  notBefore?: number;
  /** The last unit of the first full refill waits until this, epoch milliseconds. */
  trialAt?: number;
  /** Known to refill at once, its announced reset gave back only some units (a sliding log). */
  partialReset?: true;
  /** When `remaining` was last reported, epoch milliseconds: a gradual one refills from there. */
  heardAt?: number;
}

/** The unit of a concurrency limit, which no time refills. */
const CONCURRENT = 'concurrent-requests';

/**
 * Whether a spent policy is paced, one unit each `w / q`. Not one that holds a single unit, though
 * at once and gradually are the same for it: a pace anchored on one answer, against a window of
 * one unit, is refused whenever a send's latency outgrows the round trip it started with (it was,
 * over loopback on a busy machine); counted from each answer, it pays a round trip per unit.
 */
function gradual(p: RefillFields): boolean {
  return p.refill === 'gradual';
}

/** Units per millisecond the policy declares (`q / w`), or `undefined` without a window. */
export function rateOf(p: RefillFields): number | undefined {
  const { limit, windowMs } = p;
  if (limit === undefined || windowMs === undefined || p.unit === CONCURRENT) return undefined;
  return limit > 0 && windowMs > 0 ? limit / windowMs : undefined;
}

/**
 * When a spent policy has `need` units back by the model (see the module comment); `undefined`
 * when the model has nothing to say (no rate, or nothing learned yet), and the announced reset
 * holds. At once: no later than the announced reset (the probe then tells the rest), unless that
 * reset was seen to give back only some units. Gradual: the
 * pace, which every paced request moves on (the announced reset of an earlier answer is spent by
 * then), or the announced reset where the server's reset rules the pace out.
 */
export function refilledAt(p: RefillFields, need: number): number | undefined {
  const rate = rateOf(p);
  if (rate === undefined) return undefined;
  const ruledOut = (t: number) => p.notBefore !== undefined && t <= p.notBefore;
  if (gradual(p)) {
    if (p.paceAt === undefined) {
      // Not spent by the server's word, short of `need` by the estimate: what is missing comes
      // back at the rate from the last report (a token bucket's, learned by `fill-window.ts`).
      if (p.heardAt === undefined) return undefined;
      // Never past the reset, when it is full again by the server's word.
      // (Not short after all: a moment past, which lets it go.)
      const back = p.heardAt + ((need - (p.remaining ?? 0)) / rate) * PACE_MARGIN;
      return Math.min(back, p.resetAt ?? back);
    }
    const paced = p.paceAt + (Math.max(1, need) - 1) / rate;
    return ruledOut(paced) ? (p.resetAt ?? paced) : paced;
  }
  if (p.refillAt === undefined || ruledOut(p.refillAt)) return undefined;
  // Once an announced reset was seen to give back only some units (a sliding log's oldest
  // entries, where a window's end gives all), only `refillAt` counts: taking those few would keep
  // the log's history spread, a reset's rounding lost on each part.
  if (p.partialReset || p.resetAt === undefined) return p.refillAt;
  return Math.min(p.refillAt, p.resetAt);
}

/**
 * Whether a spent policy lets requests go without the one-probe rule once {@link refilledAt} has
 * passed: a gradual one, by its pace, several in flight. One known to refill at once still sends
 * one probe first and the rest on its answer: sent whole, blind, a refill that a sliding-window
 * counter (taken for a window while its bursts fell at a window's end) gave back in part was
 * refused nine times in ten, where the probe costs a round trip.
 */
export function isPaced(p: RefillFields): boolean {
  return gradual(p) && p.paceAt !== undefined;
}

/**
 * Milliseconds the request of `need` units must wait for the trial (the last unit of the first
 * full refill holds a unit's time), or 0.
 */
export function trialWait(p: RefillFields, need: number, now: number): number {
  if (p.trialAt === undefined || now >= p.trialAt || p.remaining === undefined) return 0;
  return p.remaining - need < need ? p.trialAt - now : 0;
}

/**
 * A pace a thousandth slower than the declared rate: at exactly the rate, a request that lands on
 * the first millisecond of a sliding-window counter's window, with a full window before it, is
 * refused; drifting off that phase costs a thousandth.
 */
const PACE_MARGIN = 1.001;

/** After `need` units were spent at `at`: a gradual policy sent past its estimate moves its pace. */
export function paceSpent(p: RefillFields, need: number, at: number): void {
  const rate = rateOf(p);
  if (rate === undefined || !gradual(p) || (p.remaining ?? 0) >= 0) return;
  p.paceAt = Math.max(p.paceAt ?? at, at) + (need / rate) * PACE_MARGIN;
}

/** One fresh report of a policy, as {@link learnRefill} reads it. */
export interface RefillReport {
  /** The estimate of units left just before the report. */
  before: number | undefined;
  /** The remaining the server reported. */
  remaining: number;
  /** The answered request's own units in this policy. */
  need: number;
  /** Units of the policy still in flight. */
  inFlight: number;
  /** Whether the request was accepted (a 2xx or 3xx). */
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
 * Learns from a fresh report what the model needs: the capacity, how units come back, and when a
 * spent policy has them back. Call it after `p.remaining` holds the new estimate.
 */
export function learnRefill(p: RefillFields, report: RefillReport): void {
  const rate = rateOf(p);
  if (rate === undefined) return;
  const { before, remaining, need, inFlight, now } = report;
  p.heardAt = now;
  if (report.accepted) p.peak = Math.max(p.peak ?? 0, remaining + need);
  else if (p.refill === 'gradual') {
    // Refused while paced: its units do not come back at the declared rate after all (a
    // sliding-window counter gives back what its previous window held, which a late request
    // made one short): from now on it is refilled as a window, each refill probed first.
    p.refill = 'at-once';
    delete p.paceAt;
  }
  const peak = p.peak ?? 0;
  const wholeTurn = remaining + need + inFlight >= peak;
  const cameBack = before !== undefined && (p.remaining ?? 0) > before;
  if (report.accepted && p.refill === 'at-once' && report.probe && remaining + need < peak) {
    p.partialReset = true;
  }
  if (report.accepted && p.refill === undefined) {
    // Units back but not all of them (a window turns whole), or a probe when the at-once model
    // said full that finds less: units come back one by one. (Not once a window was found: a
    // sliding log gives its units back in the order it took them, which looks the same.)
    if ((cameBack && !wholeTurn) || (report.probe && remaining + need < peak)) {
      p.refill = 'gradual';
      delete p.trialAt;
    } else if (p.trialAt !== undefined && report.sentAt >= p.trialAt && (before ?? 0) < 1) {
      // The held unit came back with nothing refilled meanwhile: a window.
      p.refill = 'at-once';
      delete p.trialAt;
    } else if (report.probe && p.refill === undefined) {
      if (peak >= 3 && peak < (p.limit ?? 0)) {
        // A policy that holds less than its quota at once refills within its window, at once or
        // gradually: find out which, once (see the module comment).
        // A unit and a half: a bucket then shows one unit back even where rounding in its own
        // arithmetic puts the first a hair later than the rate says.
        p.trialAt = now + (1.5 * need) / rate;
      } else {
        // Full when the at-once model said so, and no trial can tell more: at once it is.
        p.refill = 'at-once';
      }
    }
  }
  const beyondPace = (p.remaining ?? 0) - Math.max(0, before ?? 0);
  if (gradual(p) && p.paceAt !== undefined && p.paceAt > now && beyondPace > 0) {
    // Units back while paced, beyond what the pace sent for (an estimate below 0 is the pace's
    // own): taken as the pace's next units, come early (a sliding-window counter's turn gives
    // back at once what its weight would give over time).
    p.paceAt += beyondPace / rate;
  }
  if (report.resetMs !== undefined && report.resetMs >= 2000)
    p.notBefore = now + report.resetMs - 1000;
  else delete p.notBefore;
  if (remaining > 0) {
    delete p.refillAt;
    // A bucket's report with units left and nothing owed (the estimate covers what is in flight)
    // is all there is to know: the pace restarts from it. Kept, a pace that had restarted from a
    // send after a wait for the server's reset took the refill of that wait for its own next units
    // come early (above), and held the next call a window past the bucket's own full-again.
    if (bucketByAnswers(p) && (p.remaining ?? 0) >= 0) delete p.paceAt;
    return;
  }
  // From the answer, not from when the request was sent: the server decided when it arrived,
  // which only the answer bounds (an answer that waited its turn in a leaky bucket's queue pays
  // the wait again here, the price of never being early).
  p.refillAt = now + Math.max(peak, need, 1) / rate;
  // Gradual: the next unit is a unit's time after this answer, unless the pace is already ahead.
  if (gradual(p) && (p.paceAt === undefined || p.paceAt < now)) p.paceAt = now + 1 / rate;
}

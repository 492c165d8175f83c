/**
 * The adaptive pace: how fast to send to a host whose refusals its headers do not explain. A
 * server that says nothing about its limits (nginx `limit_req`, a gateway, HAProxy's stick table),
 * or that enforces one it does not declare (GitHub's secondary limits), reveals its rate only by
 * refusing. So the client measures the rate it sends at and the rate the host accepts, and at a
 * refusal it cannot explain, it cuts its own rate to {@link ACCEPTED_SHARE} of the rate the host
 * accepted over the last second (never faster than it sent) and grows back along a cubic curve:
 * slowly near the rate that was refused, faster away from it. This is AWS SDK v3's adaptive retry
 * mode (CUBIC, from TCP) over the client's own token bucket, with the cut taken from what the host
 * accepted, as Google's SRE book's client-side adaptive throttling counts accepts: a limiter
 * accepts its rate exactly while it refuses the excess, so the pace lands just under it (nginx
 * `limit_req` at 10 a second: 1.02x to 1.13x of the minimum time over five runs, where a cut to 0.7
 * of the rate sent took 1.13x to 1.19x).
 *
 * - **Only after a refusal.** Until the first one, nothing is paced: a host that never refuses is
 *   never slowed down. After a minute without one, pacing stops.
 * - **One cut per overshoot.** A refusal of a request sent before the last cut says nothing new:
 *   the requests in flight when the rate was cut were sent at the old rate. After a cut the bucket
 *   starts empty, so the next request waits a full interval.
 * - **Never past a rate that failed.** Once a rate sent at the pace has been refused (the
 *   `ceiling`), the pace grows back toward it and stops there. Only after a refusal that came
 *   before pacing (a burst, which says nothing of a rate) does it grow beyond the curve's peak, to
 *   find the rate.
 * - **A lockout.** A limiter that counts the requests it refuses (HAProxy's `http_req_rate` with
 *   `deny`) keeps refusing a client that goes on sending, however slowly: each refusal extends it.
 *   A refusal of a request sent at the pace with nothing accepted since the last cut is a *miss*:
 *   the gap before the next request doubles at the first ({@link FIRST_MISS_FACTOR}), then grows
 *   by {@link MISS_FACTOR} per miss, from {@link SHORTEST_PROBE_GAP_MS} up to
 *   {@link LONGEST_PROBE_GAP_MS}: each refused probe is a reason to probe less often, and the
 *   host gets one request per gap however many calls wait (their retries spend neither the retry
 *   budget nor the calls' retries: `call-run.ts`). The first acceptance ends the lockout: the pace
 *   starts again at the rate the host accepted over the stretch that ended in it, lockout
 *   included, and grows toward twice that (never past the ceiling): more slowly than it fell.
 *   Measured against HAProxy: docs/benchmarks.md (the wild section).
 * - **Nor a call's own.** A call refused a second time while the host accepted others since its
 *   previous refusal ({@link ownRefusal}) is refused for itself (a route refused for good beside
 *   routes the host serves): no cut, no miss, and it retries on its own backoff. A call refused
 *   twice in a row on a host that accepted nothing yet sets no ceiling (one call tried).
 * - **Explained or timed refusals are not its business.** A pushback whose headers show a spent
 *   policy is the declared quota's (it holds until the reset); one with `Retry-After` is the
 *   hold's and the timed quota's (`timed.ts`: released by the window's count, not all at once).
 *   "Come back now" (`Retry-After: 0`, or a wait under `COME_BACK_NOW_MS`) gives no time: it is
 *   paced like any refusal that explains nothing.
 * - **Growth is capped** at twice the rate actually sent, so a client that sends little does not
 *   build up a rate it never tried.
 * - **Not through an outage.** A host that fails the requests sent after a cut and accepts none
 *   for {@link DOWN_AFTER_MS} is down, not shedding: pacing stops, and the breaker and the retry
 *   budget take over (a pace kept through an outage queues the calls, and releases them at its
 *   rate once the host is back: 1.5 s to recover in the outage benchmark with the breaker off).
 *
 * Its state also tells a load shedder from an outage (see `host-rules.ts`): when the host last
 * accepted a request, and when the pace was last cut.
 *
 * @module
 */
import { type Answer, GO, type RuleModule, type View } from './contract.js';
import { timedWait } from './hold.js';
import { advance, count, newCounts, type SlidingCounts, total } from './sliding-counts.js';

/** Measurement and pace of a host. */
export interface PaceState {
  /**
   * Over the last second, in ten slots: requests admitted (the rate the client sends at), and
   * answers accepted (the rate the host lets through).
   */
  sent: SlidingCounts<'sent' | 'ok'>;
  /** Requests per second while pacing; absent while not. */
  rate?: number;
  /**
   * Where the cubic curve levels off, requests per second: the rate refused at the last cut, or
   * twice the rate the pace started again at after a lockout.
   */
  peak?: number;
  /** The rate the pace was cut to, requests per second (where the cubic curve starts). */
  floor?: number;
  /**
   * The last rate refused while pacing, requests per second. While there is one, the pace never
   * grows past `peak`, which is at most this. Absent when the refusal came before pacing (a burst
   * says nothing of a rate): the curve then grows beyond its peak, to find the rate.
   */
  ceiling?: number;
  /** When the rate was last cut, epoch milliseconds. */
  cutAt?: number;
  /** The `seq` of the refused request's ticket that made the last cut or miss. */
  cutSeq?: number;
  /** When the host last accepted a request (answered without pushing back), epoch milliseconds. */
  okAt?: number;
  /** Tokens of the pacing bucket at `at` (epoch milliseconds). */
  tokens?: number;
  at?: number;
  /**
   * Refusals in a row of requests sent at the pace since the host last accepted one: the host
   * keeps refusing however slowly the client goes (a lockout). Absent when none.
   */
  misses?: number;
  /**
   * When the current stretch began, epoch milliseconds: the second before pacing started, or the
   * end of the last lockout. What the host accepted over it sets the pace after a lockout.
   */
  stretchAt?: number;
  /** Requests the host accepted since `stretchAt`. */
  stretchOk?: number;
  /** When the curve started to grow: the last cut, or the end of a lockout (epoch milliseconds). */
  growAt?: number;
}

/** At a refusal the pace is cut to this share of the rate the host accepted over the last second. */
export const ACCEPTED_SHARE = 0.9;
/** The cubic curve's scale: how fast the rate grows back (AWS's value). */
export const CUBIC_SCALE = 0.4;
/** The lowest pace, in requests per second. */
export const MIN_RATE = 0.5;
/** Pacing stops after this long without a refusal, in milliseconds. */
export const PACE_TTL_MS = 60_000;
/**
 * A host that accepted nothing for this long after a cut, in milliseconds, while failing requests
 * sent since, is down rather than shedding: pacing stops.
 */
export const DOWN_AFTER_MS = 1000;
/** At the first miss of a lockout, the gap before the next request is this many intervals. */
export const FIRST_MISS_FACTOR = 2;
/**
 * At each further miss, the gap before the next request grows by this factor. Each refused probe
 * of a counting limiter extends its lockout a little and a gap grown too far overshoots its end:
 * 1.25 keeps both small (measured against HAProxy, with 1.5 and 2 overshooting by seconds).
 */
export const MISS_FACTOR = 1.25;
/** The shortest gap between two probes of a lockout after its first miss, in milliseconds. */
export const SHORTEST_PROBE_GAP_MS = 500;
/** The longest gap between two probes of a lockout, in milliseconds. */
export const LONGEST_PROBE_GAP_MS = 30_000;
/** The window of the sending-rate measurement, in milliseconds. */
const MEASURE_MS = 1000;
const SERIES = ['sent', 'ok'] as const;

/** The rate sent at over the last second, in requests per second. */
export function sendingRate(state: PaceState, now: number): number {
  advance(state.sent, SERIES, MEASURE_MS, now);
  return (total(state.sent, 'sent') * 1000) / MEASURE_MS;
}

/** The rate the host accepted over the last second, in requests per second. */
function acceptedRate(state: PaceState, now: number): number {
  advance(state.sent, SERIES, MEASURE_MS, now);
  return (total(state.sent, 'ok') * 1000) / MEASURE_MS;
}

/**
 * The pace `t` milliseconds after a cut from `peak` to `floor` (requests per second): the cubic
 * curve that starts at `floor`, levels off at `peak` after `K = cbrt((peak - floor) / C)` seconds,
 * and grows faster beyond.
 */
export function cubic(peak: number, floor: number, t: number): number {
  const k = Math.cbrt(Math.max(0, peak - floor) / CUBIC_SCALE);
  return CUBIC_SCALE * (t / 1000 - k) ** 3 + peak;
}

/** The pacing bucket's capacity: a tenth of a second's worth, at least one request. */
function capacity(rate: number): number {
  return Math.max(1, rate / 10);
}

function tokensAt(state: PaceState, rate: number, now: number): number {
  const elapsed = Math.max(0, now - (state.at ?? now));
  return Math.min(capacity(rate), (state.tokens ?? 0) + (elapsed * rate) / 1000);
}

/** When the pace lets the next request go, epoch milliseconds; 0 when it does now (or none). */
function nextAt(state: PaceState, now: number): number {
  const rate = state.rate;
  if (rate === undefined) return 0;
  const tokens = tokensAt(state, rate, now);
  return tokens >= 1 ? 0 : now + Math.ceil(((1 - tokens) * 1000) / rate);
}

/**
 * Cuts the pace at `now` after a refusal: to {@link ACCEPTED_SHARE} of what the host accepted over
 * the last second (a secondary limit of 2 a second, found with 10 requests in flight, is paced at
 * 1.8, not 7), and never above the rate that was refused (what was sent over the last second, or
 * the pace when less was sent). Nothing accepted in that second: {@link MIN_RATE}. The cubic curve
 * then runs from the new pace back to the refused rate.
 */
export function cut(state: PaceState, now: number): void {
  const sending = Math.max(1, sendingRate(state, now));
  const refused = Math.max(MIN_RATE, Math.min(state.rate ?? sending, sending));
  const rate = Math.max(MIN_RATE, Math.min(refused, ACCEPTED_SHARE * acceptedRate(state, now)));
  if (state.rate !== undefined) {
    state.ceiling = refused;
  } else {
    // Pacing starts: the stretch it measures begins with the second that was just measured.
    delete state.ceiling;
    state.stretchAt = now - MEASURE_MS;
    state.stretchOk = total(state.sent, 'ok');
  }
  state.peak = refused;
  restart(state, rate, now);
}

/**
 * A miss: a refusal of a request sent at the pace, with nothing accepted since the last cut. The
 * host refuses however slowly the client goes (a limiter that counts the requests it refuses keeps
 * a client that goes on sending locked out), so the gap before the next request is stretched (see
 * the module comment): each refused probe is a reason to probe less often. When no rate sent at
 * the pace had been refused before, this one is the ceiling, unless `alone`: the host has
 * accepted nothing yet and the refused request is a retry of the call whose refusal made the last
 * cut or miss (one call tried, a route the host may refuse for itself: no rate was refused).
 */
export function miss(state: PaceState, now: number, alone = false): void {
  const rate = state.rate ?? MIN_RATE;
  // The first paced rate refused, when no paced rate had been refused before.
  if (!alone) state.ceiling ??= rate;
  state.misses = (state.misses ?? 0) + 1;
  const interval = 1000 / rate;
  const gap =
    state.misses === 1
      ? interval * FIRST_MISS_FACTOR
      : Math.max(SHORTEST_PROBE_GAP_MS, interval * MISS_FACTOR);
  restart(state, 1000 / Math.min(LONGEST_PROBE_GAP_MS, gap), now);
}

/** Paces at `rate` from `now`, with an empty bucket: the next request waits a full interval. */
function restart(state: PaceState, rate: number, now: number): void {
  state.rate = rate;
  state.floor = rate;
  state.cutAt = now;
  state.growAt = now;
  state.tokens = 0;
  state.at = now;
}

/** Stops pacing; `forget`: the last cut too (else it keeps telling failures from pushback). */
function stopPacing(state: PaceState, forget: boolean): void {
  delete state.rate;
  delete state.peak;
  delete state.floor;
  delete state.ceiling;
  delete state.tokens;
  delete state.at;
  delete state.misses;
  delete state.ceiling;
  delete state.stretchAt;
  delete state.stretchOk;
  delete state.growAt;
  if (forget) {
    delete state.cutAt;
    delete state.cutSeq;
  }
}

/**
 * Whether a call's refusal is its own, not the host's rate: its second refusal while the host
 * accepted others since the one before (`servedNow`), or any after that. Once could be a rate
 * overshoot (after a lockout, the calls refused during it come back); twice is the call.
 * @param served the call's earlier refusals that came while the host served others.
 */
export function ownRefusal(served: number, servedNow: boolean): boolean {
  return served > 1 || (served > 0 && servedNow);
}

/** See the module comment. */
export const pace = {
  key: 'pace',
  title: 'adaptive pace',
  reasons: [{ reason: 'pace', serverTimed: false }],
  configure: (host) => host.learn && {},
  retryAt: (view) => view.paceAt,
  kinds: ['attempt'],
  fresh: (_config, now) => ({ sent: newCounts(SERIES, MEASURE_MS, now) }),
  prune(state, now, _config, view) {
    view.paceAt = nextAt(state, now);
    return state;
  },
  check(state, { now }) {
    const rate = state.rate;
    if (rate === undefined) return GO;
    const tokens = tokensAt(state, rate, now);
    if (tokens >= 1) return GO;
    return { ok: false, waitMs: Math.ceil(((1 - tokens) * 1000) / rate), reason: 'pace' };
  },
  commit(current, { now }, _ticket, _config, view) {
    const state = current ?? { sent: newCounts(SERIES, MEASURE_MS, now) };
    count(state.sent, SERIES, 'sent', MEASURE_MS, now);
    if (state.rate !== undefined && !view.replaying) {
      state.tokens = tokensAt(state, state.rate, now) - 1;
      state.at = Math.max(state.at ?? now, now);
    }
    return state;
  },
  settle(state, answer, _config, view) {
    const settled = settlePace(state, answer, view);
    if (settled !== undefined) {
      view.paceAt = nextAt(settled, answer.now);
      view.lockout = settled.misses !== undefined;
    }
    return settled;
  },
} satisfies RuleModule<PaceState, Record<string, never>>;

/**
 * The first acceptance after a lockout: the pace starts again at the rate the host accepted over
 * the stretch that ended in the lockout, lockout included (never below the probes' rate, never at
 * the ceiling), and grows along the cubic curve toward twice that, never past the ceiling.
 */
function recover(state: PaceState, now: number): void {
  const stretchMs = Math.max(MEASURE_MS, now - (state.stretchAt ?? now));
  const accepted = ((state.stretchOk ?? 0) * 1000) / stretchMs;
  const ceiling = state.ceiling ?? Number.POSITIVE_INFINITY;
  const rate = Math.max(state.rate ?? MIN_RATE, Math.min(ACCEPTED_SHARE * ceiling, accepted));
  delete state.misses;
  state.rate = rate;
  state.floor = rate;
  state.peak = Math.min(ceiling, 2 * rate);
  state.growAt = now;
  state.stretchAt = now;
  state.stretchOk = 0;
}

/** What the pace learns from an answer: a cut after a refusal, growth after an acceptance. */
function settlePace(state: PaceState | undefined, answer: Answer, view: View) {
  if (state === undefined || answer.status === undefined) return state;
  const { now, ticket } = answer;
  if (view.pushback) {
    // A refusal the headers explain (a spent policy) is the declared quota's to handle; one that
    // gives its time is the hold's and the timed quota's. "Come back now" gives no time.
    if (view.explained || timedWait(answer.info) !== undefined) return state;
    // A call's own refusal says nothing of a rate (see `ownRefusal`).
    const again = answer.again;
    view.served = again !== undefined && (state.okAt ?? -1) > again.at;
    if (again !== undefined && ownRefusal(again.served, view.served)) return state;
    // One cut per overshoot: what was in flight at the last cut was sent at the old rate.
    if (state.cutAt !== undefined && ticket.at <= state.cutAt) return state;
    if (state.rate !== undefined && (state.okAt ?? -1) <= (state.cutAt ?? -1)) {
      // Only one call tried yet, and refused twice in a row: it says nothing of a rate.
      const alone = state.okAt === undefined && again?.seq === state.cutSeq;
      miss(state, now, alone);
    } else cut(state, now);
    state.cutSeq = ticket.seq;
    return state;
  }
  // A 5xx that is no pushback is the host failing, not accepting. Failing for a second since the
  // cut with nothing accepted, even slowed down, it is down, not shedding: the pace stops (an
  // outage is the breaker's and the retry budget's; a pace kept through it would queue the calls
  // and release them at its rate once the host is back). Its cut stays, so that these failures
  // are not taken for a shedder's pushback; the next pushback starts pacing again.
  if (answer.status >= 500) {
    const { rate, cutAt, okAt } = state;
    if (rate !== undefined && cutAt !== undefined && ticket.at > cutAt) {
      if (now - cutAt >= DOWN_AFTER_MS && (okAt ?? -1) < cutAt) stopPacing(state, false);
    }
    return state;
  }
  state.okAt = Math.max(state.okAt ?? now, now);
  count(state.sent, SERIES, 'ok', MEASURE_MS, now);
  if (state.stretchOk !== undefined) state.stretchOk++;
  if (state.rate === undefined || state.cutAt === undefined || state.peak === undefined) {
    return state;
  }
  // The end of a lockout, whenever the accepted request was sent: the host accepts again.
  if (state.misses !== undefined) recover(state, now);
  if (now - state.cutAt >= PACE_TTL_MS) {
    // A minute without a refusal: pacing stops.
    stopPacing(state, true);
    return state;
  }
  const tokens = tokensAt(state, state.rate, now);
  const since = now - (state.growAt ?? state.cutAt);
  const grown = cubic(state.peak, state.floor ?? state.peak, since);
  // Never past a rate that failed: with a ceiling known, the curve stops at its peak.
  const top = state.ceiling === undefined ? grown : Math.min(grown, state.peak);
  const capped = Math.min(top, 2 * Math.max(sendingRate(state, now), 1));
  state.rate = Math.max(MIN_RATE, capped);
  state.tokens = Math.min(tokens, capacity(state.rate));
  state.at = Math.max(state.at ?? now, now);
  return state;
}

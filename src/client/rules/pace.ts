/**
 * The adaptive pace: how fast to send to a host whose refusals its headers do not explain. A
 * server that says nothing about its limits (nginx `limit_req`, a gateway, HAProxy's stick table),
 * or that enforces one it does not declare (GitHub's secondary limits), reveals its rate only by
 * refusing. So the client measures the rate it sends at and the rate the host accepts, and at a
 * refusal it cannot explain, it cuts its own rate to {@link ACCEPTED_SHARE} of the rate the host
 * accepted over the last second (of the rate it sent when less) and grows back along a cubic curve:
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
import {
  ACCEPTED_SHARE,
  capacity,
  cubic,
  cut,
  DOWN_AFTER_MS,
  MEASURE_MS,
  MIN_RATE,
  miss,
  nextAt,
  PACE_TTL_MS,
  type PaceState,
  SERIES,
  sendingRate,
  stopPacing,
  tokensAt,
} from './pace-curve.js';
import { count, newCounts } from './sliding-counts.js';

/**
 * Whether a call's refusal is its own, not the host's rate: its second refusal while the host
 * accepted others sent since the one before (`servedNow`), or any after that. Once could be a rate
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
    // A call's own refusal says nothing of a rate (see `ownRefusal`). Served: the host accepted
    // a request sent after the call's previous refusal came back. Not one answered since: under
    // load a 200 through a slow upstream comes back after 429s the limiter sent at once, and a
    // lockout's calls were taken for calls refused for good (retries-exhausted against HAProxy).
    const again = answer.again;
    view.served = again !== undefined && (state.okSentAt ?? -1) > again.at;
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
  state.okSentAt = Math.max(state.okSentAt ?? ticket.at, ticket.at);
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

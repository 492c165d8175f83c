/**
 * The adaptive pace's arithmetic (the rule and what it learns from answers: `pace.ts`): its state,
 * the rates it measures over the last second, the token bucket it paces with, the cubic curve it
 * grows back along, and its three moves: a cut after a refusal, a stretched gap after a miss, a
 * stop.
 *
 * @module
 */
import { advance, type SlidingCounts, total } from './sliding-counts.js';

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
  /**
   * When the latest request the host accepted was sent (its ticket's `at`), epoch milliseconds.
   * An acceptance answered late (a slow upstream) may be of a request sent before a refusal that
   * came back fast: only this says the host accepted a request after refusing another.
   */
  okSentAt?: number;
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
export const MEASURE_MS = 1000;
export const SERIES = ['sent', 'ok'] as const;

/** The rate sent at over the last second, in requests per second. */
export function sendingRate(state: PaceState, now: number): number {
  advance(state.sent, SERIES, MEASURE_MS, now);
  return (total(state.sent, 'sent') * 1000) / MEASURE_MS;
}

/** The rate the host accepted over the last second, in requests per second. */
export function acceptedRate(state: PaceState, now: number): number {
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
export function capacity(rate: number): number {
  return Math.max(1, rate / 10);
}

export function tokensAt(state: PaceState, rate: number, now: number): number {
  const elapsed = Math.max(0, now - (state.at ?? now));
  return Math.min(capacity(rate), (state.tokens ?? 0) + (elapsed * rate) / 1000);
}

/** When the pace lets the next request go, epoch milliseconds; 0 when it does now (or none). */
export function nextAt(state: PaceState, now: number): number {
  const rate = state.rate;
  if (rate === undefined) return 0;
  const tokens = tokensAt(state, rate, now);
  return tokens >= 1 ? 0 : now + Math.ceil(((1 - tokens) * 1000) / rate);
}

/**
 * Cuts the pace at `now` after a refusal: to {@link ACCEPTED_SHARE} of what the host accepted over
 * the last second (a secondary limit of 2 a second, found with 10 requests in flight, is paced at
 * 1.8, not 7), and to at most that share of the rate that was refused (what was sent over the last
 * second, or the pace when less was sent). Nothing accepted in that second: {@link MIN_RATE}. The
 * cubic curve then runs from the new pace back to the refused rate.
 */
export function cut(state: PaceState, now: number): void {
  const sending = Math.max(1, sendingRate(state, now));
  const refused = Math.max(MIN_RATE, Math.min(state.rate ?? sending, sending));
  // Under the rate refused too: after a burst, the last second's acceptances count the burst
  // (Stripe's bucket of 25 and its refill: over 30 a second), and a cut to the rate refused was
  // none (over HTTP a refusal every 240 ms, until the burst left the second).
  const accepted = Math.min(refused, acceptedRate(state, now));
  const rate = Math.max(MIN_RATE, ACCEPTED_SHARE * accepted);
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
export function restart(state: PaceState, rate: number, now: number): void {
  state.rate = rate;
  state.floor = rate;
  state.cutAt = now;
  state.growAt = now;
  state.tokens = 0;
  state.at = now;
}

/** Stops pacing; `forget`: the last cut too (else it keeps telling failures from pushback). */
export function stopPacing(state: PaceState, forget: boolean): void {
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

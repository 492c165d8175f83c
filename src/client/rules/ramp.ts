/**
 * The cold-start ramp. Until a host has answered once, at most `initialWindow` requests are in
 * flight. Then the window doubles every round trip (one more request in flight per answer that
 * is not a refusal: TCP's slow start), so a host that answers fast reaches full concurrency in a few round
 * trips (200 in flight after eight). Its first refusal ends the ramp: from then on the hold, the
 * timed quota and the adaptive pace (`pace.ts`) decide how fast to send, and the refusals the ramp
 * costs are those in flight at that moment, at most about twice what the host had just accepted.
 * The ramp also ends for good past {@link OPEN_WINDOW}.
 *
 * A host that declares its quota is ramped too, inside what it declares: a quota is a count per
 * window, not leave to send it all at once, and APIs enforce limits they do not declare beside the
 * ones they do (GitHub's secondary limits on writes and concurrency, a gateway's burst limit). Ten
 * writes fired together at such a host meet its undeclared limit two or three at a time instead of
 * all ten; a host that takes them all costs log2(n) round trips once, for n in flight.
 *
 * A request counts against the window until it is answered, or for {@link staleMs} at most: twice
 * the shortest answer time seen (at least 100 ms), or 1 s before any answer. So a slow request (a
 * long poll, a large upload) holds the others back for that long, not for its whole life, and a
 * count lost with a failed store update heals by itself. The shortest time rather than a smoothed
 * one: a long poll's answer time says nothing about the round trip, and would stretch the bound
 * to its own length.
 *
 * The requests that count are kept by when they were sent, in slots of {@link GRAIN_MS}: each
 * request costs O(1) whatever the number in flight (a slot counts all its requests, and frees when
 * the latest of them stops counting).
 *
 * @module
 */
import { GO, type Rule, type View } from './contract.js';

/** Requests sent in one slot that still count: `[slot, latest send time (epoch ms), requests]`. */
export type Young = [number, number, number];

/** The ramp of a host that is cold, or answers without policies. */
export interface RampState {
  /** Requests allowed in flight (its whole part counts). */
  window: number;
  /** The requests that still count against the window, by slot, oldest first. */
  young: Young[];
  /** How many requests `young` holds. */
  count: number;
  /** The shortest time an answer took, in milliseconds, once one came. */
  minRttMs?: number;
}

/** Configuration of the ramp. */
export interface RampConfig {
  /** Requests in flight before the host first answers. */
  initialWindow: number;
}

/** The ramp stops counting here: the window is open. */
export const OPEN_WINDOW = 1024;
/** How long an unanswered request counts against the window before any answer, in ms. */
export const COLD_STALE_MS = 1000;
/** The least time a request counts against the window once answers have come, in ms. */
export const MIN_STALE_MS = 100;
/** The width of a slot of requests, in milliseconds. */
export const GRAIN_MS = 10;

/**
 * How long a request counts against the window at most, in milliseconds: twice the shortest answer
 * time seen (at least {@link MIN_STALE_MS}), or {@link COLD_STALE_MS} before any answer.
 */
export function staleMs(state: RampState): number {
  return state.minRttMs === undefined ? COLD_STALE_MS : Math.max(MIN_STALE_MS, 2 * state.minRttMs);
}

/** Drops the slots whose requests no longer count at `now`. */
function expire(state: RampState, now: number): void {
  const until = now - staleMs(state);
  let due = 0;
  for (const [, latest, n] of state.young) {
    if (latest > until) break;
    state.count -= n;
    due++;
  }
  if (due > 0) state.young.splice(0, due);
}

/** See the module comment. */
export const ramp = {
  key: 'ramp',
  kinds: ['attempt'],
  // Only a host that has admitted nothing yet starts cold: an ended ramp does not come back.
  fresh: (config: RampConfig, _now: number, view: View): RampState | undefined =>
    view.seq === 0 ? { window: config.initialWindow, young: [], count: 0 } : undefined,
  prune(state, now) {
    expire(state, now);
    return state;
  },
  check(state, { now }) {
    if (state.count < Math.floor(state.window)) return GO;
    // The oldest slot that counts frees first.
    const oldest = state.young[0];
    const waitMs = oldest ? oldest[1] + staleMs(state) - now : 1;
    return { ok: false, waitMs: Math.max(1, waitMs), reason: 'cold-start' };
  },
  commit(state, { now }) {
    if (state === undefined) return undefined;
    expire(state, now);
    const slot = Math.floor(now / GRAIN_MS);
    const last = state.young.at(-1);
    if (last !== undefined && last[0] === slot) {
      last[1] = Math.max(last[1], now);
      last[2]++;
    } else {
      state.young.push([slot, now, 1]);
    }
    state.count++;
    return state;
  },
  settle(state, answer, _config, view) {
    if (state === undefined) return undefined;
    const { status, now, ticket } = answer;
    // The answered request stops counting, if it still does.
    const slot = Math.floor(ticket.at / GRAIN_MS);
    for (let i = state.young.length - 1; i >= 0; i--) {
      const entry = state.young[i] as Young;
      if (entry[0] > slot) continue;
      if (entry[0] === slot) {
        state.count--;
        if (--entry[2] === 0) state.young.splice(i, 1);
      }
      break;
    }
    if (status === undefined) return state;
    if (now >= ticket.at && (state.minRttMs === undefined || now - ticket.at < state.minRttMs)) {
      state.minRttMs = now - ticket.at;
    }
    // A refusal: the adaptive pace (and the hold, the timed quota) take over.
    if (view.pushback) return undefined;
    // One more per answer: the window doubles every round trip.
    state.window += 1;
    return state.window >= OPEN_WINDOW ? undefined : state;
  },
} satisfies Rule<RampState, RampConfig>;

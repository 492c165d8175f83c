/**
 * The cold-start ramp. Until a host has answered once, at most `initialWindow` requests are in
 * flight. A first answer that declares policies ends the ramp (the declared quota takes over). An
 * answer that declares nothing starts a gentle ramp: one more request in flight per round trip
 * (TCP's congestion avoidance), because such a server reveals its limit only by refusing, and
 * every request in flight when it does is refused too. The ramp ends for good past
 * {@link OPEN_WINDOW}, or at the first 429 of a blind host (the blind quota takes over).
 *
 * A request counts against the window until it is answered, or for {@link staleMs} at most: twice
 * the shortest answer time seen (at least 100 ms), or 1 s before any answer. So a slow request (a
 * long poll, a large upload) holds the others back for that long, not for its whole life, and a
 * count lost with a failed store update heals by itself. The shortest time rather than a smoothed
 * one: a long poll's answer time says nothing about the round trip, and would stretch the bound
 * to its own length.
 *
 * @module
 */
import { GO, type Rule, type View } from './contract.js';

/** The ramp of a host that is cold, or answers without policies. */
export interface RampState {
  /** Requests allowed in flight (its whole part counts). */
  window: number;
  /** When each request that still counts against the window was sent, epoch milliseconds. */
  young: number[];
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

/**
 * How long a request counts against the window at most, in milliseconds: twice the shortest answer
 * time seen (at least {@link MIN_STALE_MS}), or {@link COLD_STALE_MS} before any answer.
 */
export function staleMs(state: RampState): number {
  return state.minRttMs === undefined ? COLD_STALE_MS : Math.max(MIN_STALE_MS, 2 * state.minRttMs);
}

/** See the module comment. */
export const ramp = {
  key: 'ramp',
  kinds: ['attempt'],
  // Only a host that has admitted nothing yet starts cold: an ended ramp does not come back.
  fresh: (config: RampConfig, _now: number, view: View): RampState | undefined =>
    view.seq === 0 ? { window: config.initialWindow, young: [] } : undefined,
  check(state, { now }) {
    const limit = Math.floor(state.window);
    if (state.young.length < limit) return GO;
    // Requests sent `staleMs` ago or more no longer count; the oldest that does frees first.
    const until = now - staleMs(state);
    let counted = 0;
    let oldest = Number.POSITIVE_INFINITY;
    for (const at of state.young) {
      if (at <= until) continue;
      counted++;
      if (at < oldest) oldest = at;
    }
    if (counted < limit) return GO;
    return { ok: false, waitMs: Math.max(1, oldest - until), reason: 'cold-start' };
  },
  commit(state, { now }) {
    if (state === undefined) return undefined;
    // Drop the entries that no longer count, in place.
    const until = now - staleMs(state);
    const young = state.young;
    let kept = 0;
    for (const at of young) if (at > until) young[kept++] = at;
    young.length = kept;
    young.push(now);
    return state;
  },
  settle(state, answer, _config, view) {
    if (state === undefined) return undefined;
    const { status, now, ticket } = answer;
    const i = state.young.indexOf(ticket.at);
    if (i !== -1) state.young.splice(i, 1);
    if (status === undefined) return state;
    if (now >= ticket.at && (state.minRttMs === undefined || now - ticket.at < state.minRttMs)) {
      state.minRttMs = now - ticket.at;
    }
    // Policies declared: the declared quota takes over. A blind host's first 429: the blind quota.
    if (view.mode === 'declared' || (view.mode === 'blind' && status === 429)) return undefined;
    if (view.mode === 'blind' && !answer.pushback) {
      // A window's worth of answers adds one: +1 per round trip.
      state.window += 1 / Math.floor(state.window);
      if (state.window >= OPEN_WINDOW) return undefined;
    }
    return state;
  },
} satisfies Rule<RampState, RampConfig>;

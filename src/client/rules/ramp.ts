/**
 * The cold-start ramp: TCP's slow start, by rounds. Until a host has answered once, at most
 * `initialWindow` requests are in flight. From then on the ramp goes by rounds: a round sends at
 * most `window` requests, and once every one of them is answered, the next round's window grows by
 * the answers that were not refusals (all of them: the window doubles). So a host that answers fast
 * reaches full concurrency in a few round trips (200 in flight in the 9th: 1, 2, 4 ... 128, 200),
 * and each request costs O(1) (the rule keeps counts, not the requests).
 *
 * **Rounds, not answers.** A round's early answers do not open the window for more while the rest
 * of the round is still out: those may be refused, and a request sent on the strength of an early
 * "yes" would be refused with them. TCP's per-acknowledgement growth doubles the window per round
 * trip too, but sends two more on every early answer: ten writes at a limit of two a second that
 * nobody declared were refused three times in the ramp, and are refused once this way.
 *
 * **The first refusal ends the ramp**: from then on the hold, the timed quota and the adaptive
 * pace (`pace.ts`) decide how fast to send; the refusals the ramp costs are the rest of that
 * round, at most what the host had accepted before it. The ramp also ends for good once its window
 * reaches {@link OPEN_WINDOW} or the host's concurrency cap (`openWindow`): past that, the cap is
 * the limit, and rounds would only stall it.
 *
 * A host that declares its quota is ramped too, inside what it declares: a quota is a count per
 * window, not leave to send it all at once, and APIs enforce limits they do not declare beside the
 * ones they do (GitHub's secondary limits on writes and concurrency, a gateway's burst limit). A
 * host that takes everything costs log2(n) round trips once, for n in flight.
 *
 * A round ends when all its requests are answered, or {@link staleMs} after its latest one was
 * sent: twice the shortest answer time seen (at least 100 ms), or 1 s before any answer. So a slow
 * request (a long poll, a large upload) holds the others back for that long, not for its whole
 * life, and an answer lost with a failed store update heals by itself. The shortest time rather
 * than a smoothed one: a long poll's answer time says nothing about the round trip, and would
 * stretch the bound to its own length. An answer to a request of an earlier round (one that went
 * stale) counts for nothing.
 *
 * @module
 */
import { GO, type RuleModule, type View } from './contract.js';

/** The ramp of a host that is cold, or has not refused yet. */
export interface RampState {
  /** Requests the current round may send (its whole part counts). */
  window: number;
  /** Sequence number of the round's first request: an answer to an earlier one is a straggler. */
  seq0: number;
  /** Requests the round sent. */
  sent: number;
  /** Of those, answered (or given back unsent). */
  answered: number;
  /** Of those, answered without a refusal: what the next round's window grows by. */
  accepted: number;
  /** When the round's latest request went, epoch milliseconds. */
  lastAt: number;
  /** The shortest time an answer took, in milliseconds, once one came. */
  minRttMs?: number;
}

/** Configuration of the ramp. */
export interface RampConfig {
  /** Requests in flight before the host first answers. */
  initialWindow: number;
  /**
   * The window at which the ramp ends (the host's concurrency cap, at most {@link OPEN_WINDOW}).
   * @default OPEN_WINDOW
   */
  openWindow?: number;
}

/** The ramp ends here at the latest: the window is open. */
export const OPEN_WINDOW = 1024;
/** How long an unanswered round holds the next before any answer, in ms. */
export const COLD_STALE_MS = 1000;
/** The least time an unanswered round holds the next once answers have come, in ms. */
export const MIN_STALE_MS = 100;

/**
 * How long after its latest request a round that is not fully answered holds the next, in
 * milliseconds: twice the shortest answer time seen (at least {@link MIN_STALE_MS}), or
 * {@link COLD_STALE_MS} before any answer.
 */
export function staleMs(state: RampState): number {
  return state.minRttMs === undefined ? COLD_STALE_MS : Math.max(MIN_STALE_MS, 2 * state.minRttMs);
}

/** Ends the round: the next one starts after the last request sent, with its window grown. */
function nextRound(state: RampState, view: View): void {
  state.window += state.accepted;
  state.seq0 = view.seq + 1;
  state.sent = 0;
  state.answered = 0;
  state.accepted = 0;
}

/** The state after a round ended: the same, or none once the window is open. */
function ended(state: RampState, config: RampConfig): RampState | undefined {
  return state.window >= Math.min(OPEN_WINDOW, config.openWindow ?? OPEN_WINDOW)
    ? undefined
    : state;
}

/** See the module comment. */
export const ramp = {
  key: 'ramp',
  title: 'cold-start ramp',
  reasons: [{ reason: 'cold-start', serverTimed: false }],
  configure: (host) =>
    host.learn?.initialWindow === undefined
      ? undefined
      : { initialWindow: host.learn.initialWindow, openWindow: host.learn.openWindow },
  kinds: ['attempt'],
  // Only a host that has admitted nothing yet starts cold: an ended ramp does not come back.
  fresh: (config: RampConfig, _now: number, view: View): RampState | undefined =>
    view.seq === 0
      ? { window: config.initialWindow, seq0: 1, sent: 0, answered: 0, accepted: 0, lastAt: 0 }
      : undefined,
  prune(state, now, config, view) {
    // A round not fully answered a while after its latest request: the rest is taken as lost.
    if (state.sent > 0 && now >= state.lastAt + staleMs(state)) {
      nextRound(state, view);
      return ended(state, config);
    }
    return state;
  },
  check(state, { now }) {
    if (state.sent < Math.floor(state.window)) return GO;
    // The round is sent: it ends with its last answer, or when it goes stale.
    return {
      ok: false,
      waitMs: Math.max(1, state.lastAt + staleMs(state) - now),
      reason: 'cold-start',
    };
  },
  commit(state, { now }) {
    if (state === undefined) return undefined;
    state.sent++;
    state.lastAt = Math.max(state.lastAt, now);
    return state;
  },
  settle(state, answer, config, view) {
    if (state === undefined) return undefined;
    const { status, now, ticket } = answer;
    if (status !== undefined && now >= ticket.at) {
      if (state.minRttMs === undefined || now - ticket.at < state.minRttMs) {
        state.minRttMs = now - ticket.at;
      }
    }
    // A refusal: the hold, the timed quota and the adaptive pace take over.
    if (status !== undefined && view.pushback) return undefined;
    // A straggler of an earlier round, or a request this round does not know (another copy's).
    if (ticket.seq < state.seq0 || state.answered >= state.sent) return state;
    state.answered++;
    if (status !== undefined) state.accepted++;
    if (state.answered < state.sent) return state;
    nextRound(state, view);
    return ended(state, config);
  },
} satisfies RuleModule<RampState, RampConfig>;

/**
 * A host that refuses everything. Once a host has pushed back every attempt for
 * {@link REFUSING_MS} and at least {@link REFUSING_COUNT} times in a row, the first attempts of
 * {@link REFUSING_CALLS} calls among them, waiting in line for it is
 * pointless: a call that would have to wait (for a hold, the pace, or another request out) ends at
 * once (a first attempt with `RateLimitError`, a retry with its last response), and only a request
 * that may go now, with nothing else out, goes: the probe that finds out whether the host accepts
 * again. Its first accepted answer ends this. Without it, calls queued behind a host that answers
 * 429 forever would each wait for every retry of those before them: minutes, not seconds.
 *
 * Never for a host that accepted a request since the run began (the run ends there), nor on one
 * call's refusals alone: a route the host refuses for good, beside others it serves, made one call's
 * retries the whole run, and the calls waiting behind them, never tried, were ended.
 *
 * @module
 */
import { GO, type RuleModule } from './contract.js';

/** A run of refusals. */
export interface RefusalState {
  /** When the first of them came, epoch milliseconds. */
  since: number;
  /** How many in a row. */
  count: number;
  /** How many of them were first attempts (each a different call's). Absent: 1 (older states). */
  calls?: number;
}

/** Refusals in a row, at least, before a host is taken as refusing. */
export const REFUSING_COUNT = 5;
/** How long a run of refusals lasts, at least, before a host is taken as refusing, in ms. */
export const REFUSING_MS = 10_000;
/** Calls whose first attempt the run refused, at least, before a host is taken as refusing. */
export const REFUSING_CALLS = 2;

/** Configuration of the rule. */
export interface RefusalConfig {
  /**
   * How long a run of refusals lasts, at least, before the host is taken as refusing, in
   * milliseconds: the longest the caller waits for a server (`maxRetryAfterMs`).
   * @default REFUSING_MS
   */
  refusingMs?: number;
}

/** Whether a host with this run of refusals is taken as refusing at `now`. */
export function refusing(
  state: RefusalState | undefined,
  now: number,
  refusingMs = REFUSING_MS,
): boolean {
  return (
    state !== undefined &&
    state.count >= REFUSING_COUNT &&
    (state.calls ?? 1) >= REFUSING_CALLS &&
    now - state.since >= refusingMs
  );
}

/** See the module comment. */
export const refusal = {
  key: 'refusal',
  title: 'refusing host',
  reasons: [{ reason: 'refusing', serverTimed: true }],
  configure: (host) => host.learn && { refusingMs: host.learn.maxHoldMs },
  kinds: ['attempt'],
  fresh: () => undefined,
  check(state, { now }, config, view) {
    if (!refusing(state, now, config.refusingMs)) return GO;
    // The probe: nothing else out, and the hold and the pace let it go now.
    const readyAt = Math.max(view.holdUntil, view.paceAt);
    if (view.requests === 0 && readyAt <= now) return GO;
    // Anyone else would wait for a host that refuses everything: told at once instead.
    return {
      ok: false,
      waitMs: Math.max(readyAt - now, 1000),
      reason: 'refusing',
      serverWaitMs: Number.POSITIVE_INFINITY,
    };
  },
  settle(state, answer, _config, view) {
    if (answer.status === undefined) return state;
    if (!view.pushback) return undefined;
    const first = answer.ticket.first ? 1 : 0;
    if (state === undefined) return { since: answer.now, count: 1, calls: first };
    state.count++;
    if (first) state.calls = (state.calls ?? 1) + 1;
    return state;
  },
} satisfies RuleModule<RefusalState, RefusalConfig>;

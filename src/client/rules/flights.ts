/**
 * Requests in flight, and when each is taken as lost.
 *
 * A request counts as in flight (against what the server reported left, as the answer a probe
 * waits for, as a concurrency slot) until it is answered, or until its own time is up: its attempt
 * timeout plus a second, or `flightTtlMs` (60 s) without one, rounded up to a grain of a second or
 * a thirty-second of that time, so that whatever is in flight fits in a few dozen entries. A
 * process that dies with requests out (or a settle lost with a failed store update) cannot leave
 * a shared state waiting forever for answers that will not come: past that time its requests are
 * taken as lost. A live request without an attempt timeout that takes longer is taken as lost too:
 * the server counted its units long before, but a concurrency slot it holds comes back early (the
 * server's answer to the request that takes it corrects the estimate).
 *
 * Publishes `units` and `requests` in flight to the view, and on `prune` the units just taken as
 * lost (`lostUnits`); on `settle`, whether the answered request still counted (`counted`).
 *
 * @module
 */
import type { Rule } from './contract.js';

/** Requests in flight that are taken as lost at the same time: `[epoch ms, requests, units]`. */
export type Flight = [number, number, number];

/** What is in flight. */
export interface FlightsState {
  /** Units in flight (the sum over `list`). */
  units: number;
  /** Requests in flight (the sum over `list`). */
  requests: number;
  /** By when they are taken as lost, soonest first. */
  list: Flight[];
}

/** Configuration of the requests in flight. */
export interface FlightsConfig {
  /**
   * How long a request without a time of its own counts as in flight, in milliseconds.
   * @default {@link FLIGHT_TTL_MS}
   */
  flightTtlMs: number;
}

/** Default of `flightTtlMs`: a request unanswered for a minute is taken as lost. */
export const FLIGHT_TTL_MS = 60_000;

/**
 * When a request sent at `at` (epoch milliseconds) that may take `ttlMs` is taken as lost: `at +
 * ttlMs`, rounded up to a grain of a second or `ttlMs / 32`, whichever is longer.
 */
export function flightExpiry(at: number, ttlMs: number): number {
  const grain = Math.max(1000, Math.ceil(ttlMs / 32 / 1000) * 1000);
  return Math.ceil((at + ttlMs) / grain) * grain;
}

/** Counts a request in flight; one without a time of its own (an old ticket) is counted only. */
function add(state: FlightsState, units: number, expires: number | undefined): void {
  state.units += units;
  state.requests++;
  if (expires === undefined) return;
  const list = state.list;
  // Sorted by expiry; a request almost always belongs to the last entry or after it.
  let i = list.length;
  while (i > 0 && (list[i - 1] as Flight)[0] > expires) i--;
  const last = list[i - 1];
  if (last !== undefined && last[0] === expires) {
    last[1]++;
    last[2] += units;
  } else {
    list.splice(i, 0, [expires, 1, units]);
  }
}

/** Stops counting a request; `false` when it no longer counted (it was taken as lost). */
function remove(state: FlightsState, units: number, expires: number | undefined): boolean {
  const list = state.list;
  if (expires !== undefined) {
    let i = list.length - 1;
    while (i >= 0 && (list[i] as Flight)[0] > expires) i--;
    const flight = list[i];
    if (flight === undefined || flight[0] !== expires) return false;
    flight[1]--;
    flight[2] -= units;
    if (flight[1] <= 0) list.splice(i, 1);
  }
  state.units = Math.max(0, state.units - units);
  state.requests = Math.max(0, state.requests - 1);
  return true;
}

/** See the module comment. */
export const flights = {
  key: 'flights',
  kinds: ['attempt'],
  fresh: () => ({ units: 0, requests: 0, list: [] }),
  prune(state, now, _config, view) {
    const list = state.list;
    let lost = 0;
    if (list.length > 0 && (list[0] as Flight)[0] <= now) {
      let requests = 0;
      let due = 0;
      for (const [expires, n, units] of list) {
        if (expires > now) break;
        requests += n;
        lost += units;
        due++;
      }
      list.splice(0, due);
      state.requests = Math.max(0, state.requests - requests);
      state.units = Math.max(0, state.units - lost);
    }
    view.lostUnits = lost;
    view.units = state.units;
    view.requests = state.requests;
    return state;
  },
  commit(current, request, ticket, config, view) {
    const state = current ?? { units: 0, requests: 0, list: [] };
    if (!view.replaying) {
      ticket.expires = flightExpiry(request.now, request.ttlMs ?? config.flightTtlMs);
      add(state, request.cost, ticket.expires);
    } else if (ticket.expires === undefined || ticket.expires > request.now) {
      // A request issued elsewhere whose time is already up is taken as lost at once.
      add(state, request.cost, ticket.expires);
    }
    view.units = state.units;
    view.requests = state.requests;
    return state;
  },
  settle(current, answer, _config, view) {
    const state = current ?? { units: 0, requests: 0, list: [] };
    view.counted = remove(state, answer.ticket.cost, answer.ticket.expires);
    view.units = state.units;
    view.requests = state.requests;
    return state;
  },
  expiresAt: (state) => (state.requests === 0 ? 0 : Number.POSITIVE_INFINITY),
} satisfies Rule<FlightsState, FlightsConfig>;

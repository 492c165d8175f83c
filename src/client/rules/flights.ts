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
 * What is in flight is counted in requests, in units of the `requests` kind (a call's `cost`), and
 * in the other units calls named (`tokens`: see `cost.ts`). Publishes them to the view, and on
 * `prune` the units just taken as lost (`lostUnits`); on `settle`, whether the answered request
 * still counted (`counted`).
 *
 * An answer that declares a concurrency policy (`qu="concurrent-requests"`) does not end its
 * request: the server counts it until its response ends, so it stays in flight (a slot taken)
 * until its body ends (`keepsFlightOpen`; the pipeline then settles {@link bodyEnd}'s ticket, see
 * `src/client/call/open-bodies.ts`), or until its time is up. Its units are `open` meanwhile: counted
 * in `requests` (a concurrency policy waits for them, as a probe does) but not published as
 * `units`, since the server has counted them already (a report is not lowered by them again);
 * they are published as `open`. Each ticket carries what was in flight, open bodies included, when
 * it was sent (`n`): a concurrency report is as old as its request's admission (`quota.ts`).
 *
 * @module
 */
import type { RateLimitInfo } from '../../headers/types.js';
import type { UnitCosts } from '../call/cost.js';
import type { RuleModule, Ticket, View } from './contract.js';
import { CONCURRENT } from './learned-policy.js';

/** Other units, `[unit or policy name, units]`. */
type Units = [string, number][];
const NONE: Units = [];

/**
 * Requests in flight that are taken as lost at the same time:
 * `[epoch ms, requests, units, other units?]`.
 */
export type Flight = [number, number, number, Units?];

/** What is in flight. */
export interface FlightsState {
  /** Units in flight (the sum over `list`). */
  units: number;
  /** Requests in flight (the sum over `list`). */
  requests: number;
  /** Other units in flight (the sum over `list`), when a call named any. */
  other?: Units;
  /** By when they are taken as lost, soonest first. */
  list: Flight[];
  /**
   * Of `units`, those of requests answered whose bodies are still open (see the module comment);
   * at most `units`. Absent when none.
   */
  open?: number;
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

/** Adds `by` times `units` into `into` (a sum per unit); returns it, `undefined` when empty. */
function addUnits(
  into: Units | undefined,
  units: UnitCosts | undefined,
  by: number,
): Units | undefined {
  if (units === undefined) return into;
  let sum = into ?? [];
  for (const [unit, amount] of units) {
    const entry = sum.find((e) => e[0] === unit);
    if (entry) entry[1] = Math.max(0, entry[1] + by * amount);
    else if (by > 0) sum.push([unit, amount]);
  }
  // A unit no request in flight names any more is dropped: the list holds only what is out.
  if (by < 0) sum = sum.filter((e) => e[1] > 0);
  return sum.length > 0 ? sum : undefined;
}

/** Counts a request; one without a time of its own (an old ticket) is counted only. */
function add(state: FlightsState, units: number, other: UnitCosts | undefined, expires?: number) {
  state.units += units;
  state.requests++;
  state.other = addUnits(state.other, other, 1);
  if (expires === undefined) return;
  const list = state.list;
  // Sorted by expiry; a request almost always belongs to the last entry or after it.
  let i = list.length;
  while (i > 0 && (list[i - 1] as Flight)[0] > expires) i--;
  const last = list[i - 1];
  if (last !== undefined && last[0] === expires) {
    last[1]++;
    last[2] += units;
    if (other) last[3] = addUnits(last[3], other, 1);
  } else {
    list.splice(
      i,
      0,
      other ? [expires, 1, units, addUnits(undefined, other, 1)] : [expires, 1, units],
    );
  }
}

/** Stops counting a request; `false` when it no longer counted (it was taken as lost). */
function remove(
  state: FlightsState,
  units: number,
  other: UnitCosts | undefined,
  expires?: number,
) {
  const list = state.list;
  if (expires !== undefined) {
    let i = list.length - 1;
    while (i >= 0 && (list[i] as Flight)[0] > expires) i--;
    const flight = list[i];
    if (flight === undefined || flight[0] !== expires) return false;
    flight[1]--;
    flight[2] -= units;
    if (other) flight[3] = addUnits(flight[3], other, -1);
    if (flight[1] <= 0) list.splice(i, 1);
  }
  state.units = Math.max(0, state.units - units);
  state.requests = Math.max(0, state.requests - 1);
  state.other = addUnits(state.other, other, -1);
  return true;
}

/**
 * Whether an answer with these rate-limit fields leaves its request in flight until its body ends
 * (it declares a concurrency policy), rather than ending it at its headers.
 */
export function keepsFlightOpen(info: RateLimitInfo | undefined): boolean {
  if (info === undefined) return false;
  for (const p of info.policies) if (p.unit === CONCURRENT) return true;
  return false;
}

/**
 * The ticket a body's end is settled with, without a status: the request's cost and time in
 * flight, numbered 0 (which no state issues: that is how this rule tells it from an admission
 * given back, and how the cold-start ramp and the declared quota see it as no round's answer nor a
 * report), without the probes its answer already took back.
 */
export function bodyEnd(ticket: Ticket): Ticket {
  const { kind, at, cost, units, expires } = ticket;
  return { kind, seq: 0, at, cost, first: false, units, expires };
}

/** Publishes what is in flight; as `units`, those of requests not answered yet. */
function publish(state: FlightsState, view: View): FlightsState {
  view.open = state.open ?? 0;
  view.units = state.units - view.open;
  view.requests = state.requests;
  view.otherUnits = state.other ?? NONE;
  return state;
}

/** See the module comment. */
export const flights = {
  key: 'flights',
  title: 'requests in flight',
  reasons: [],
  configure: (host) => host.learn,
  kinds: ['attempt'],
  fresh: (): FlightsState => ({ units: 0, requests: 0, list: [] }),
  prune(state, now, _config, view) {
    const list = state.list;
    let lost = 0;
    if (list.length > 0 && (list[0] as Flight)[0] <= now) {
      let due = 0;
      for (const [expires, n, units, other] of list) {
        if (expires > now) break;
        state.requests = Math.max(0, state.requests - n);
        state.other = addUnits(state.other, other, -1);
        lost += units;
        due++;
      }
      list.splice(0, due);
      state.units = Math.max(0, state.units - lost);
      // Which of them were open is not kept: at most what is left (an estimate that errs low).
      if (state.open !== undefined) state.open = Math.min(state.open, state.units) || undefined;
    }
    view.lostUnits = lost;
    return publish(state, view);
  },
  commit(current, request, ticket, config, view) {
    const state = current ?? { units: 0, requests: 0, list: [] };
    if (!view.replaying) {
      ticket.expires = flightExpiry(request.now, request.ttlMs ?? config.flightTtlMs);
      add(state, request.cost, ticket.units, ticket.expires);
      // What the server will count of ours when it admits it (a replay keeps the ticket's own).
      ticket.n = state.units;
    } else if (ticket.expires === undefined || ticket.expires > request.now) {
      // A request issued elsewhere whose time is already up is taken as lost at once.
      add(state, request.cost, ticket.units, ticket.expires);
    }
    return publish(state, view);
  },
  settle(current, answer, _config, view) {
    const state = current ?? { units: 0, requests: 0, list: [] };
    const { cost, units, expires, seq } = answer.ticket;
    if (answer.status !== undefined && keepsFlightOpen(answer.info)) {
      // Still holding its slot on the server: not counted back yet, and open only once its report
      // is taken in (a report counts the request itself, but not the bodies open before it).
      view.counted = false;
      publish(state, view);
      state.open = (state.open ?? 0) + cost;
      return state;
    }
    view.counted = remove(state, cost, units, expires);
    if (answer.status === undefined && seq === 0 && state.open !== undefined) {
      state.open = Math.min(state.open - cost, state.units) || undefined;
    }
    return publish(state, view);
  },
  // No `expiresAt`: with nothing in flight the record stays, empty. A host that sends keeps
  // sending, and dropping it made a new record, list and tuple per request at one in flight.
} satisfies RuleModule<FlightsState, FlightsConfig>;

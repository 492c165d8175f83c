/**
 * One host's shared state, the order of its rules, and the one loop that runs them for the three
 * things the pipeline asks through the {@link StateStore}: admit an attempt, settle its answer, and
 * take a retry from the budget. Each is a pure function of the state and its arguments (time and
 * chance passed in), so any store can run it, and replay it (see `contract.ts`).
 *
 * The order, for every request (a rule that says "not yet" stops the check; its wait is the
 * answer):
 *
 * ```
 *  requests in flight  flights.ts   what is out, and what is taken as lost (first: the others read it)
 *  hold                hold.ts      after a pushback, until the server's time
 *  cold-start ramp     ramp.ts      until the host answers; +1 per round trip while it declares nothing
 *  declared quota      quota.ts     every policy the server reports has room for the cost
 *  blind quota         blind.ts     the quota learned from 429s alone
 *  client bucket       bucket.ts    the caller's own rate
 *  retry budget        budget.ts    a first attempt deposits; a retry withdraws (or is refused)
 * ```
 *
 * The circuit breaker (`breaker.ts`) is a rule of the same shape that the pipeline runs before all
 * of these, on state of its own process.
 *
 * @module
 */
import type { Transaction } from '../store.js';
import { type BlindState, blind } from './blind.js';
import { type BucketConfig, type BucketState, bucket } from './bucket.js';
import { type BudgetConfig, type BudgetState, budget } from './budget.js';
import {
  type Answer,
  GO,
  type Mode,
  newView,
  type Request,
  type Rule,
  type Ticket,
  type Verdict,
  type View,
  type Wait,
} from './contract.js';
import { type FlightsConfig, type FlightsState, flights } from './flights.js';
import { type HoldConfig, type HoldState, hold } from './hold.js';
import { type QuotaConfig, type QuotaState, quota } from './quota.js';
import { type RampState, ramp } from './ramp.js';

/** Everything shared about one host. Plain JSON. */
export interface HostState {
  /** What is known about the host: nothing yet, answers without policies, or policies. */
  mode: Mode;
  /** Attempts admitted so far (each ticket's number). */
  seq: number;
  flights?: FlightsState;
  hold?: HoldState;
  /** While cold, or blind and ramping up. */
  ramp?: RampState;
  /** Once the host declares policies. */
  quota?: QuotaState;
  /** While the host is blind. */
  blind?: BlindState;
  bucket?: BucketState;
  budget?: BudgetState;
}

/** Parameters of learning from the server's answers (flights, hold, ramp, quota, blind). */
export interface LearnConfig extends FlightsConfig, HoldConfig, QuotaConfig {
  /** Requests in flight before the host first answers; `undefined` turns the ramp off. */
  initialWindow: number | undefined;
}

/** Which rules a host runs, with their parameters; a rule whose part is absent is off. */
export interface HostRulesConfig {
  learn: LearnConfig | undefined;
  bucket: BucketConfig | undefined;
  budget: BudgetConfig | undefined;
}

/** The answer of an admission: a ticket, or a wait. */
export type AdmitResult = { ok: true; ticket: Ticket } | Wait;

/** A rule bound to its configuration for one host. */
export interface Bound {
  rule: Rule<unknown, unknown>;
  config: unknown;
}

/** Where a rule's state lives in the host state (the rules' own keys, never outside data). */
type Slots = Record<string, unknown>;

/** The rules of a host with this configuration, in order (see the module comment). */
export function bindRules(config: HostRulesConfig): readonly Bound[] {
  const { learn } = config;
  const bound: Bound[] = [];
  const add = <S, C>(rule: Rule<S, C>, c: C | undefined) => {
    if (c !== undefined) bound.push({ rule: rule as Rule<unknown, unknown>, config: c });
  };
  add(flights, learn);
  add(hold, learn);
  add(
    ramp,
    learn?.initialWindow === undefined ? undefined : { initialWindow: learn.initialWindow },
  );
  add(quota, learn);
  add(blind, learn && {});
  add(bucket, config.bucket);
  add(budget, config.budget);
  return bound;
}

/** A new host's state. */
export function newHostState(): HostState {
  return { mode: 'cold', seq: 0 };
}

/** One admission's walk through the rules: the state, the share, and the view they pass on. */
export interface Walk {
  rules: readonly Bound[];
  state: HostState;
  request: Request;
  /** The part of the shared limits this walk may use (see `Rule.scale`). */
  share: number;
  view: View;
}

/** Starts a walk of `request` on `state` (a new host's when `undefined`). */
export function walk(
  rules: readonly Bound[],
  state: HostState | undefined,
  request: Request,
  share = 1,
): Walk {
  const s = state ?? newHostState();
  return { rules, state: s, request, share, view: newView(s.mode, s.seq) };
}

function configOf(b: Bound, share: number, cost: number): unknown {
  return share === 1 || b.rule.scale === undefined ? b.config : b.rule.scale(b.config, share, cost);
}

/** Gives each rule the request is for a state (`fresh`) and takes what is due as lost. */
export function prune(w: Walk): void {
  const slots = w.state as unknown as Slots;
  const { now, kind, cost } = w.request;
  for (const b of w.rules) {
    if (!b.rule.kinds.includes(kind)) continue;
    const config = configOf(b, w.share, cost);
    let own = slots[b.rule.key];
    if (own === undefined) own = slots[b.rule.key] = b.rule.fresh(config, now, w.view);
    if (own !== undefined && b.rule.prune)
      slots[b.rule.key] = b.rule.prune(own, now, config, w.view);
  }
}

/** Asks each rule in order; the first "not yet" is the answer. Reads, writes nothing. */
export function check(w: Walk): Verdict {
  const slots = w.state as unknown as Slots;
  const { kind, cost } = w.request;
  for (const b of w.rules) {
    const own = slots[b.rule.key];
    if (own === undefined || !b.rule.check || !b.rule.kinds.includes(kind)) continue;
    const verdict = b.rule.check(own, w.request, configOf(b, w.share, cost), w.view);
    if (!verdict.ok) return verdict;
  }
  return GO;
}

/**
 * Commits the request to every rule and returns its ticket; with `replayed`, commits that ticket,
 * issued on another copy of the state (see the `contract.ts` module comment).
 */
export function commit(w: Walk, replayed?: Ticket): Ticket {
  const slots = w.state as unknown as Slots;
  const { request, state, view } = w;
  const { kind, cost, now } = request;
  const ticket: Ticket = replayed ?? { kind, seq: 0, at: now, cost, first: request.first };
  if (kind === 'attempt') {
    state.seq++;
    if (replayed === undefined) ticket.seq = state.seq;
  }
  view.seq = state.seq;
  view.replaying = replayed !== undefined;
  for (const b of w.rules) {
    if (!b.rule.commit || !b.rule.kinds.includes(kind)) continue;
    const next = b.rule.commit(
      slots[b.rule.key],
      request,
      ticket,
      configOf(b, w.share, cost),
      view,
    );
    if (next === undefined) delete slots[b.rule.key];
    else slots[b.rule.key] = next;
  }
  tidy(w.rules, state, now);
  return ticket;
}

/** The policies an answer reports with counts, or `undefined` when it reports none. */
function declaredBy(answer: Answer) {
  const reported = answer.info?.policies.filter(
    (q) => q.remaining !== undefined || q.limit !== undefined,
  );
  return reported && reported.length > 0 ? reported : undefined;
}

/**
 * Takes an answer into every rule, in order, after moving the mode on (policies declared, or
 * answers without). Returns the host's hold after it (epoch milliseconds, 0 for none).
 */
export function settle(rules: readonly Bound[], state: HostState, answer: Answer): number {
  const slots = state as unknown as Slots;
  const view = newView(state.mode, state.seq);
  if (answer.status !== undefined) {
    view.declared = declaredBy(answer);
    if (view.declared) state.mode = 'declared';
    else if (state.mode !== 'declared') state.mode = 'blind';
    view.mode = state.mode;
  }
  for (const { rule, config } of rules) {
    if (!rule.settle) continue;
    const next = rule.settle(slots[rule.key], answer, config, view);
    if (next === undefined) delete slots[rule.key];
    else slots[rule.key] = next;
  }
  tidy(rules, state, answer.now);
  return view.holdUntil;
}

/** Drops every rule state that is equivalent to none at `now` (see `Rule.expiresAt`). */
function tidy(rules: readonly Bound[], state: HostState, now: number): void {
  const slots = state as unknown as Slots;
  for (const { rule, config } of rules) {
    const own = slots[rule.key];
    if (own !== undefined && rule.expiresAt !== undefined && rule.expiresAt(own, config) <= now) {
      delete slots[rule.key];
    }
  }
}

/** Prune, check, commit: the admission of `request`, or the wait a rule asks for. */
function admit(w: Walk): AdmitResult {
  prune(w);
  const verdict = check(w);
  return verdict.ok ? { ok: true, ticket: commit(w) } : verdict;
}

/**
 * The transaction that admits `request` (an attempt, or a retry asking the budget): see
 * {@link admit}. On a share of the limits the rules' configuration is scaled (`Rule.scale`); a
 * replay commits the ticket the run on the other copy returned, or nothing if it was refused.
 */
export function admitTransaction(
  rules: readonly Bound[],
  request: Request,
): Transaction<HostState, AdmitResult> {
  return {
    run(current, share = 1) {
      const w = walk(rules, current, request, share);
      return [w.state, admit(w)];
    },
    replay(current, result) {
      if (!result.ok) return current;
      const w = walk(rules, current, request);
      prune(w);
      commit(w, structuredClone(result.ticket));
      return w.state;
    },
  };
}

/**
 * The transaction that takes an answer in. Returns the host's hold after it (epoch milliseconds,
 * 0 for none): what a retry after a pushback waits for. Deterministic: a replay runs it again.
 */
export function settleTransaction(
  rules: readonly Bound[],
  answer: Answer,
): Transaction<HostState, number> {
  const run = (current: HostState | undefined): [HostState, number] => {
    const state = current ?? newHostState();
    return [state, settle(rules, state, answer)];
  };
  return { run, replay: (current) => run(current)[0] };
}

/** The transaction that reads the state without changing it (for `stats()`). */
export const readTransaction: Transaction<HostState, HostState | undefined> = {
  run: (current) => [current, current],
  replay: (current) => current,
};

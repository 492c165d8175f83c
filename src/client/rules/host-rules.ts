/**
 * One host's shared state, the order of its rules, and the one loop that runs them for the three
 * things the pipeline asks through the {@link StateStore} (as the transactions of `transactions.ts`):
 * admit an attempt, settle its answer, and
 * take a retry from the budget. Each is a pure function of the state and its arguments (time and
 * chance passed in), so any store can run it, and replay it (see `contract.ts`).
 *
 * The order, for every request (a rule that says "not yet" stops the check; its wait is the
 * answer):
 *
 * ```
 *  requests in flight  flights.ts   what is out, and what is taken as lost (first: the others read it)
 *  refusing host       refusal.ts   refused everything for a while: waiting calls end, one probes
 *  hold                hold.ts      after a pushback, until the server's time
 *  cold-start ramp     ramp.ts      until the host answers; doubles per round until it refuses
 *  declared quota      quota.ts     every policy the server reports has room for the cost
 *  timed quota         timed.ts     what a host accepts between two refusals that give their time
 *  adaptive pace       pace.ts      after a refusal that neither explains nor times: a cubic rate
 *  client bucket       bucket.ts    the caller's own rate
 *  retry budget        budget.ts    a first attempt deposits; a retry withdraws (or is refused)
 * ```
 *
 * Before the rules take an answer in, the loop decides what it is: the mode it moves the host to
 * (policies declared, or answers without), and whether it is the server pushing back. A 429, a
 * 503 with `Retry-After` and a 403 with a rate-limit sign are, by their headers (`answer.ts`). A
 * 502, 503 or 504 without timing that comes back fast is a load shedder (nginx `limit_req`, a
 * gateway) while requests still get through: the host accepted one in the last 5 s and since the
 * pace was last cut, or the refused request was sent before that cut (too fast). Otherwise the
 * host accepts nothing, even slowed down: it is failing, and the answer is a failure for the
 * circuit breaker to count.
 *
 * The circuit breaker (`breaker.ts`) is a rule of the same shape that the pipeline runs before all
 * of these, on state of its own process.
 *
 * @module
 */
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
import { type PaceState, pace } from './pace.js';
import { type QuotaConfig, type QuotaState, quota } from './quota.js';
import { type RampState, ramp } from './ramp.js';
import { type RefusalState, refusal } from './refusal.js';
import { type TimedState, timed } from './timed.js';

/**
 * The format of {@link HostState}, carried in the state (`v`): a state of another format (another
 * version of the package sharing the store) is not read (see `state-check.ts`). Raise it when a
 * change of the state would make an older version misread a newer state, or the reverse.
 */
export const STATE_VERSION = 1;

/** Everything shared about one host. Plain JSON. */
export interface HostState {
  /** The state's format: {@link STATE_VERSION}. */
  v: number;
  /** What is known about the host: nothing yet, answers without policies, or policies. */
  mode: Mode;
  /** Attempts admitted so far (each ticket's number). */
  seq: number;
  flights?: FlightsState;
  hold?: HoldState;
  /** While the host refuses every attempt. */
  refusal?: RefusalState;
  /** While cold, or blind and ramping up. */
  ramp?: RampState;
  /** Once the host declares policies. */
  quota?: QuotaState;
  /** What the host accepts between its timed refusals. */
  timed?: TimedState;
  /** The rate the client sends at, and its pace after a refusal. */
  pace?: PaceState;
  bucket?: BucketState;
  budget?: BudgetState;
}

/** Parameters of learning from the server's answers (every rule but the bucket and the budget). */
export interface LearnConfig extends FlightsConfig, HoldConfig, QuotaConfig {
  /** Requests in flight before the host first answers; `undefined` turns the ramp off. */
  initialWindow: number | undefined;
  /** The host's concurrency cap, where the ramp ends (`undefined`: none, it ends at 1024). */
  openWindow?: number;
  /**
   * The longest a request of this host counts in flight, in milliseconds (its attempt timeout and
   * a second), for the check of a state read from a shared store; `flightTtlMs` when absent.
   */
  longestFlightMs?: number;
}

/** Which rules a host runs, with their parameters; a rule whose part is absent is off. */
export interface HostRulesConfig {
  learn: LearnConfig | undefined;
  bucket: BucketConfig | undefined;
  budget: BudgetConfig | undefined;
}

/** The answer of an admission: a ticket, or a wait. */
export type AdmitResult = { ok: true; ticket: Ticket } | Wait;

/** What a settle says. */
export interface Settled {
  /**
   * When the host lets a request go again, epoch milliseconds (0: now): the end of its hold, or
   * the pace's next opening, whichever is later. What a retry after a pushback waits for.
   */
  holdUntil: number;
  /** Whether the answer was the server pushing back. */
  pushback: boolean;
  /**
   * Whether the host is in a lockout after it (it refuses every request sent at the pace): a retry
   * waits for the lockout's probes, one request per probe however many wait (see `pace.ts`).
   */
  lockout: boolean;
}

type AnyRule = Rule<unknown, unknown>;

/**
 * A rule bound to its configuration for one host, with its key and hooks copied out of it (an
 * absent hook `undefined`): every bound rule has the same shape, so the loops below read
 * `b.check` from one hidden class rather than from nine rules' different ones (a megamorphic read
 * per rule and per step was the main cost of the loops).
 */
export interface Bound {
  config: unknown;
  key: string;
  kinds: AnyRule['kinds'];
  fresh: AnyRule['fresh'];
  scale: AnyRule['scale'];
  prune: AnyRule['prune'];
  check: AnyRule['check'];
  commit: AnyRule['commit'];
  settle: AnyRule['settle'];
  expiresAt: AnyRule['expiresAt'];
}

function bind(rule: AnyRule, config: unknown): Bound {
  const { key, kinds, fresh, scale, prune, check, commit, settle, expiresAt } = rule;
  return { config, key, kinds, fresh, scale, prune, check, commit, settle, expiresAt };
}

/**
 * Where a rule's state lives in the host state (the rules' own keys, never outside data). A rule
 * that never had state has no key there; one whose state is dropped has `undefined` rather than
 * no key: deleting keys would turn the host state into a dictionary-mode object, slower to read on
 * every request (JSON drops the `undefined`s).
 */
type Slots = Record<string, unknown>;

/**
 * The rules of a host bound to their configuration, in order, and sorted once by what each takes
 * part in: a request walks only the rules of its kind, with no test per rule and per request.
 */
export interface RuleSet {
  /** Every rule, in order. */
  readonly all: readonly Bound[];
  /** The rules of each kind of request, in order. */
  readonly attempt: readonly Bound[];
  readonly retry: readonly Bound[];
}

/** The rules of a host with this configuration, in order (see the module comment). */
export function bindRules(config: HostRulesConfig): RuleSet {
  const { learn } = config;
  const bound: Bound[] = [];
  const add = <S, C>(rule: Rule<S, C>, c: C | undefined) => {
    if (c !== undefined) bound.push(bind(rule as AnyRule, c));
  };
  add(flights, learn);
  add(refusal, learn && { refusingMs: learn.maxHoldMs });
  add(hold, learn);
  add(
    ramp,
    learn?.initialWindow === undefined
      ? undefined
      : { initialWindow: learn.initialWindow, openWindow: learn.openWindow },
  );
  add(quota, learn);
  add(timed, learn && {});
  add(pace, learn && {});
  add(bucket, config.bucket);
  add(budget, config.budget);
  return {
    all: bound,
    attempt: bound.filter((b) => b.kinds.includes('attempt')),
    retry: bound.filter((b) => b.kinds.includes('retry')),
  };
}

/** A new host's state. */
export function newHostState(): HostState {
  return { v: STATE_VERSION, mode: 'cold', seq: 0 };
}

/** One admission's walk through the rules: the state, the share, and the view they pass on. */
export interface Walk {
  rules: RuleSet;
  state: HostState;
  request: Request;
  /** The part of the shared limits this walk may use (see `Rule.scale`). */
  share: number;
  view: View;
}

/** Starts a walk of `request` on `state` (a new host's when `undefined`). */
export function walk(
  rules: RuleSet,
  state: HostState | undefined,
  request: Request,
  share = 1,
): Walk {
  const s = state ?? newHostState();
  return { rules, state: s, request, share, view: newView(s.mode, s.seq) };
}

function configOf(b: Bound, share: number, cost: number): unknown {
  return share === 1 || b.scale === undefined ? b.config : b.scale(b.config, share, cost);
}

/** Gives each rule the request is for a state (`fresh`) and takes what is due as lost. */
export function prune(w: Walk): void {
  const slots = w.state as unknown as Slots;
  const { now, kind, cost } = w.request;
  for (const b of w.rules[kind]) {
    const config = configOf(b, w.share, cost);
    const own = slots[b.key] ?? b.fresh(config, now, w.view);
    if (own === undefined) continue;
    // Written back only when it changed (a rule almost always keeps its state object).
    const next = b.prune ? b.prune(own, now, config, w.view) : own;
    if (next !== slots[b.key]) slots[b.key] = next;
  }
}

/** Asks each rule in order; the first "not yet" is the answer. Reads, writes nothing. */
export function check(w: Walk): Verdict {
  const slots = w.state as unknown as Slots;
  const { kind, cost } = w.request;
  for (const b of w.rules[kind]) {
    const own = slots[b.key];
    if (own === undefined || !b.check) continue;
    const verdict = b.check(own, w.request, configOf(b, w.share, cost), w.view);
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
  if (replayed === undefined && request.units !== undefined) ticket.units = request.units;
  if (kind === 'attempt') {
    state.seq++;
    if (replayed === undefined) ticket.seq = state.seq;
  }
  view.seq = state.seq;
  view.replaying = replayed !== undefined;
  for (const b of w.rules[kind]) {
    if (!b.commit) continue;
    const own = slots[b.key];
    const next = b.commit(own, request, ticket, configOf(b, w.share, cost), view);
    if (next !== own) slots[b.key] = next;
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

/** Statuses a load shedder answers with (nginx `limit_req` answers 503 by default). */
const SHEDDING_STATUSES: ReadonlySet<number> = new Set([502, 503, 504]);
/** A shedder answers fast: a 5xx that took longer than this (ms) is a failing host's. */
const SHEDDING_FAST_MS = 2000;
/** A shedder refuses some while it accepts others: an acceptance this recent, at most (ms). */
const SHEDDING_RECENT_MS = 5000;

/** Whether an answer is the server pushing back (see the module comment). */
function isPushbackOf(state: HostState, answer: Answer): boolean {
  const { status, info, ticket, now } = answer;
  if (answer.pushback) return true;
  if (status === undefined || !SHEDDING_STATUSES.has(status) || info?.retryAfterMs !== undefined) {
    return false;
  }
  if (now - ticket.at > SHEDDING_FAST_MS) return false;
  const { cutAt, okAt } = state.pace ?? {};
  // Sent before the last cut, at the old rate: the refusal of an overshoot already answered.
  if (cutAt !== undefined && ticket.at <= cutAt) return true;
  // Accepted lately, and since the last cut: the host still lets some through.
  return okAt !== undefined && now - okAt <= SHEDDING_RECENT_MS && okAt > (cutAt ?? -1);
}

/**
 * Takes an answer into every rule, in order, after deciding what it is (see the module comment).
 * Returns the host's hold after it (epoch milliseconds, 0 for none), and whether the answer is a
 * pushback.
 */
export function settle(rules: RuleSet, state: HostState, answer: Answer): Settled {
  const slots = state as unknown as Slots;
  const view = newView(state.mode, state.seq);
  if (answer.status !== undefined && rules.all.length > 0) {
    view.declared = declaredBy(answer);
    if (view.declared) state.mode = 'declared';
    else if (state.mode !== 'declared') state.mode = 'blind';
    view.mode = state.mode;
    view.pushback = isPushbackOf(state, answer);
    view.explained = answer.info?.remaining === 0;
  }
  for (const b of rules.all) {
    if (!b.settle) continue;
    const own = slots[b.key];
    const next = b.settle(own, answer, b.config, view);
    if (next !== own) slots[b.key] = next;
  }
  tidy(rules, state, answer.now);
  return {
    holdUntil: Math.max(view.holdUntil, view.paceAt),
    pushback: view.pushback,
    lockout: view.lockout,
  };
}

/** Drops every rule state that is equivalent to none at `now` (see `Rule.expiresAt`). */
function tidy(rules: RuleSet, state: HostState, now: number): void {
  const slots = state as unknown as Slots;
  for (const b of rules.all) {
    if (b.expiresAt === undefined) continue;
    const own = slots[b.key];
    if (own !== undefined && b.expiresAt(own, b.config) <= now) slots[b.key] = undefined;
  }
}

/** Prune, check, commit: the admission of the walk's request, or the wait a rule asks for. */
export function admit(w: Walk): AdmitResult {
  prune(w);
  const verdict = check(w);
  return verdict.ok ? { ok: true, ticket: commit(w) } : verdict;
}

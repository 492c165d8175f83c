/**
 * One host's shared state, its rules bound to their configuration, and the one loop that runs them
 * for the three things the pipeline asks through the {@link StateStore} (as the transactions of
 * `transactions.ts`): admit an attempt, settle its answer, and take a retry from the budget. Each is a pure function of the state and its arguments (time and
 * chance passed in), so any store can run it, and replay it (see `contract.ts`).
 *
 * The rules and their order are the registry's (`registry.ts`, drawn in `docs/how-it-works.md`):
 * a rule that says "not yet" stops the check, and its wait is the answer. What the loop needs to
 * know of a rule beyond its hooks (its wait reasons, whether it delays retries) it reads from the
 * rule's `RuleModule` when it binds the rules ({@link bindRules}), never by the rule's name.
 *
 * Before the rules take an answer in, the loop decides what it is (`answer-kind.ts`): the mode it
 * moves the host to (policies declared, or answers without), and whether it is the server pushing
 * back.
 *
 * The circuit breaker (`breaker.ts`) is not one of these rules: see there for why.
 *
 * @module
 */
import { declaredBy, isPushbackOf } from './answer-kind.js';
import type { BucketState } from './bucket.js';
import type { BudgetState } from './budget.js';
import {
  type Answer,
  GO,
  type Mode,
  newView,
  type Request,
  type Rule,
  type RuleInputs,
  type Ticket,
  type Verdict,
  type View,
  type Wait,
} from './contract.js';
import type { FlightsState } from './flights.js';
import type { HoldState } from './hold.js';
import type { PaceState } from './pace-curve.js';
import type { QuotaState } from './quota.js';
import type { RampState } from './ramp.js';
import type { RefusalState } from './refusal.js';
import { type AnyRuleModule, RULES } from './registry.js';
import type { TimedState } from './timed.js';

export type { LearnConfig } from './contract.js';

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

/** Which rules a host runs, with their parameters; a rule whose part is absent is off. */
export type HostRulesConfig = RuleInputs;

/** The answer of an admission: a ticket, or a wait. */
export type AdmitResult = { ok: true; ticket: Ticket } | Wait;

/** What a settle says. */
export interface Settled {
  /**
   * When the host lets a request go again, epoch milliseconds (0: now): the latest `retryAt` of
   * the rules that delay retries (the end of the hold, the pace's next opening). What a retry
   * after a pushback waits for.
   */
  holdUntil: number;
  /** Whether the answer was the server pushing back. */
  pushback: boolean;
  /**
   * Whether the host is in a lockout after it (it refuses every request sent at the pace): a retry
   * waits for the lockout's probes, one request per probe however many wait (see `pace.ts`).
   */
  lockout: boolean;
  /** Whether the host served others since the call's previous refusal (see `View.served`). */
  served: boolean;
}

type AnyRule = Rule<unknown, unknown>;

/**
 * A rule bound to its configuration for one host, its key and hooks copied out (an absent hook
 * `undefined`): one shape for every bound rule ([hot-path.md](../../../docs/hot-path.md)).
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
  retryAt: AnyRuleModule['retryAt'];
}

function bind(rule: AnyRuleModule, config: unknown): Bound {
  const { key, kinds, fresh, scale, prune, check, commit, settle, expiresAt, retryAt } = rule;
  return { config, key, kinds, fresh, scale, prune, check, commit, settle, expiresAt, retryAt };
}

/**
 * Where a rule's state lives in the host state (the rules' own keys, never outside data). A dropped
 * state is `undefined`, not deleted ([hot-path.md](../../../docs/hot-path.md); JSON drops them).
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
  /** The rules that take answers in (none: a settle has nothing to do). */
  readonly settling: readonly Bound[];
  /** The rules a retry after a pushback waits for (`RuleModule.retryAt`). */
  readonly delaying: readonly Bound[];
  /** The `held` event's bit of each wait reason the rules give (one per reason). */
  readonly heldBits: ReadonlyMap<string, number>;
  /** The wait reasons the server sets: a long one is refused with `RateLimitError`. */
  readonly serverWaits: ReadonlySet<string>;
}

/** The most wait reasons the rules of a host may give: one bit each in a 31-bit set. */
export const MAX_REASONS = 31;

/**
 * The rules of `modules` (the registry's, in its order) that are on for a host with these
 * inputs, bound to their configuration (see the module comment).
 * @throws Error when the rules give more than {@link MAX_REASONS} wait reasons.
 */
export function bindRules(config: RuleInputs, modules: readonly AnyRuleModule[] = RULES): RuleSet {
  const bound: Bound[] = [];
  const heldBits = new Map<string, number>();
  const serverWaits = new Set<string>();
  for (const rule of modules) {
    const c = rule.configure(config);
    if (c === undefined) continue;
    bound.push(bind(rule, c));
    for (const { reason, serverTimed } of rule.reasons) {
      if (!heldBits.has(reason)) {
        if (heldBits.size === MAX_REASONS) {
          throw new Error(`rules: more than ${MAX_REASONS} wait reasons (at ${reason})`);
        }
        heldBits.set(reason, 1 << heldBits.size);
      }
      if (serverTimed) serverWaits.add(reason);
    }
  }
  return {
    all: bound,
    attempt: bound.filter((b) => b.kinds.includes('attempt')),
    retry: bound.filter((b) => b.kinds.includes('retry')),
    settling: bound.filter((b) => b.settle !== undefined),
    delaying: bound.filter((b) => b.retryAt !== undefined),
    heldBits,
    serverWaits,
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

/**
 * Takes an answer into every rule, in order, after deciding what it is (`answer-kind.ts`).
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
    view.pushback = isPushbackOf(state.pace, answer);
    view.explained = answer.info?.remaining === 0;
  }
  for (const b of rules.settling) {
    const own = slots[b.key];
    const next = (b.settle as NonNullable<Bound['settle']>)(own, answer, b.config, view);
    if (next !== own) slots[b.key] = next;
  }
  tidy(rules, state, answer.now);
  let retryAt = 0;
  for (const b of rules.delaying) {
    const at = (b.retryAt as NonNullable<Bound['retryAt']>)(view, slots[b.key], b.config);
    if (at > retryAt) retryAt = at;
  }
  return {
    holdUntil: retryAt,
    pushback: view.pushback,
    lockout: view.lockout,
    served: view.served,
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

/**
 * The contract every client rule implements, as the server's algorithms implement theirs
 * (`src/server/algorithms/logic.ts`), and the one generic loop that runs the rules.
 *
 * A rule is pure arithmetic over its own plain JSON state: no I/O, no clock, no HTTP. It answers
 * four questions about a request:
 *
 * - `check`: may it go now? If not, until when (`waitMs`), or until another answer (`undefined`).
 *   Reads, never writes.
 * - `commit`: it goes; spend what it spends, and write the rule's part of its {@link Ticket}.
 * - `settle`: its answer came back (or it was given back unsent: no status); learn from it.
 * - `expiresAt`: from when the state is equivalent to none at all, so the loop can drop it.
 *
 * and optionally `prune` (take what is due as lost, before a check).
 *
 * **Replay.** `commit` given a ticket that another copy of the state issued (`view.replaying`)
 * applies exactly that ticket instead of deciding from the state: a request that was sent counts,
 * whatever this copy would have said. So a store that ran on a local copy while its shared state
 * was out of reach (`RedisStore` during an outage) makes the shared state learn what was done by
 * committing the same tickets again; nothing rule-specific is needed for it. Settling is already
 * deterministic given the answer, so a settle is replayed by running it again.
 *
 * **Share.** A store on a local copy runs on a share of the shared limits: `scale` turns a rule's
 * configuration into its share (the client bucket's rate and burst, the budget's floor).
 *
 * **View.** Rules see one another only through the {@link View}, which the loop passes from rule to
 * rule in the order of the registry (`registry.ts`): a rule earlier in the order publishes what
 * later ones read (the requests in flight, the hold), and nothing else is shared.
 *
 * **Module.** A {@link RuleModule} is a rule with everything else about it: its title in the docs,
 * the wait reasons its `check` gives (and which are the server's), how it reads its configuration
 * from a host's resolved options, and whether a retry after a pushback waits for it. The registry
 * lists the modules once; the loop, the `held` event's bits, the waits refused with
 * `RateLimitError` and the docs' rule order all derive from that list.
 *
 * @module
 */

import type { QuotaPolicy, RateLimitInfo } from '../../headers/types.js';
import type { UnitCosts } from '../call/cost.js';
import type { WaitJitter } from '../retry/backoff.js';

/** What the client has learned about a host: nothing yet, answers without policies, or policies. */
export type Mode = 'cold' | 'blind' | 'declared';

/** Why a request waits: the `held` event's `reason`. */
export type WaitReason =
  | 'retry-after'
  | 'learned-limit'
  | 'cold-start'
  | 'probe'
  | 'pace'
  | 'refusing'
  | 'client-rate';

/** "Not now": until `waitMs` from now, or until another answer comes (`waitMs` undefined). */
export interface Wait {
  ok: false;
  /** Milliseconds until the request may go; `undefined`: until another request is answered. */
  waitMs: number | undefined;
  /**
   * `budget`: the retry budget refused a retry; `circuit-open`: the breaker refused a request;
   * `cost-too-high`: the request costs more than a policy's whole limit, and can never go.
   */
  reason: WaitReason | 'budget' | 'circuit-open' | 'cost-too-high';
  /** The server's name for the policy that holds the request, when it has one. */
  policy?: string;
  /** The server's own wait, before the client's jitter, when it differs from `waitMs`. */
  serverWaitMs?: number;
}

/** A rule's answer to "may this request go now?". */
export type Verdict = { ok: true } | Wait;

/** The one "yes". */
export const GO: Verdict = Object.freeze({ ok: true });

/** What asks the rules: an attempt to send, or a retry asking the budget. */
export interface Request {
  kind: 'attempt' | 'retry';
  /** Units of the `requests` kind the request spends (see `cost.ts`). */
  cost: number;
  /** What it spends in other units, `[unit or policy name, units]` (see `cost.ts`). */
  units?: UnitCosts;
  /** The call's first attempt (it adds to what the retry budget allows). */
  first: boolean;
  /** Epoch milliseconds. */
  now: number;
  /** How long an attempt may stay unanswered before it is taken as lost, in milliseconds. */
  ttlMs?: number;
}

/**
 * The record of an admitted request, handed back with its answer. Plain JSON: a store may log it
 * and commit it again on another copy of the state (see the module comment).
 */
export interface Ticket {
  kind: 'attempt' | 'retry';
  /** Sequence number of the request in the state that admitted it. */
  seq: number;
  /** When it was admitted, epoch milliseconds. */
  at: number;
  cost: number;
  /** Its cost in other units, as the request had it. */
  units?: UnitCosts;
  first: boolean;
  /** When it is taken as lost if still unanswered, epoch milliseconds (requests in flight). */
  expires?: number;
  /** Keys of the declared policies it probes (declared quota). */
  probed?: string[];
  /** Whether it probes the quota learned from timed refusals (the timed quota). */
  timedProbe?: boolean;
  /** Whether it is a probe of a half-open circuit breaker. */
  probe?: boolean;
  /**
   * Units of the `requests` kind the state had in flight once it was sent, itself included, and
   * those answered whose bodies were still open (set by the requests-in-flight rule). A concurrency
   * report is written when the server admits the request; this brings it up to the answer
   * (`quota.ts`). Absent on a ticket issued without it: the report is read as it was before.
   */
  n?: number;
}

/** An attempt's outcome, as the rules take it in. */
export interface Answer {
  ticket: Ticket;
  /** HTTP status; `undefined` when there was no response (or the admission was given back). */
  status?: number;
  /** The response's rate-limit headers, parsed. */
  info?: RateLimitInfo;
  /**
   * What the status and headers alone say: the server pushed back (a 429, a 503 that says when to
   * come back, a 403 with a rate-limit sign; see `answer.ts`). The loop may find more (a 5xx from
   * a load shedder): rules read `view.pushback`.
   */
  pushback: boolean;
  /**
   * What the answer says of the host's health, for the circuit breaker: `ok`, `failure` (the host
   * failed to serve), or `undefined` (nothing: an abort, an error of this process).
   */
  health?: 'ok' | 'failure';
  /** When the answer arrived, epoch milliseconds. */
  now: number;
  /** A number in [0, 1), for jitter. */
  random: number;
  /**
   * The previous attempt of the same call, when it was refused: when its answer arrived (`at`,
   * epoch milliseconds on the state's time line), its ticket's `seq`, and how many of the call's
   * refusals so far came while the host accepted others (`served`: see {@link View.served}).
   * Absent for a first attempt, or when the previous attempt was not refused. The pace reads it
   * (`pace.ts`: a call the host refuses while it serves others).
   */
  again?: Again;
}

/** See {@link Answer.again}. */
export interface Again {
  at: number;
  seq: number;
  served: number;
}

/**
 * What a rule sees of the others, filled in by the rules earlier in the order and by the loop.
 * Read-only to every rule but the one that publishes a field.
 */
export interface View {
  /** Set by the loop: what is known about the host (after this answer, when settling). */
  mode: Mode;
  /** Set by the loop: sequence number of the last request admitted. */
  seq: number;
  /** Set by the loop: `commit` is applying a ticket issued elsewhere (a replay). */
  replaying: boolean;
  /** Requests in flight: units and requests (published by the requests-in-flight rule). */
  units: number;
  requests: number;
  /** Other units in flight, `[unit or policy name, units]` (published by the same rule). */
  otherUnits: UnitCosts;
  /**
   * Of the units in flight, those of requests answered whose bodies are still open: the server
   * still counts them (published by the requests-in-flight rule; not in `units`).
   */
  open: number;
  /** Units of the requests just taken as lost by `prune` (their concurrency slots come back). */
  lostUnits: number;
  /** While settling: the request was still counted in flight (it was not taken as lost). */
  counted: boolean;
  /** While settling: the policies the answer reported with counts (absent when none). */
  declared: readonly QuotaPolicy[] | undefined;
  /** Set by the loop while settling: the answer is the server pushing back (see `host-rules.ts`). */
  pushback: boolean;
  /** Set by the loop while settling: the answer's headers explain it (a policy it reports is spent). */
  explained: boolean;
  /** The host's hold, epoch milliseconds, 0 for none (published by the hold rule). */
  holdUntil: number;
  /** When the pace lets the next request go, epoch ms, 0 for now (published by the pace). */
  paceAt: number;
  /**
   * While settling: the host refuses every request sent at the pace, however slowly (a lockout:
   * published by the pace). Requests wait for its probes.
   */
  lockout: boolean;
  /**
   * While settling a refusal: the host accepted another request sent after the call's previous
   * refusal came back (published by the pace; an acceptance answered since, of a request sent
   * before, says nothing: a slow upstream answers after the limiter's fast refusals). The second
   * such refusal of a call is its own, not the host's rate: a route the host refuses for good
   * while it serves the others; the pace takes nothing from it, and the call retries on its own
   * backoff.
   */
  served: boolean;
}

/**
 * One rule: pure functions over its state `S` (plain JSON) and its configuration `C`. Every hook
 * but `fresh` is optional; one that is absent changes nothing (and `check` says yes).
 */
export interface Rule<S, C> {
  /** Its name, and where its state lives in the host's state. */
  readonly key: string;
  /** Which requests it looks at: attempts, retries asking the budget, or both. */
  readonly kinds: readonly Request['kind'][];
  /**
   * Its state where it has none (a new host, or a state it dropped): `undefined` until something
   * makes it one (an answer, a commit). `view` tells a new host (`seq` 0) from a known one.
   */
  fresh(config: C, now: number, view: View): S | undefined;
  /** Its configuration on `share` (0, 1] of the shared limits, for a request of `cost` units. */
  scale?(config: C, share: number, cost: number): C;
  /** Takes what is due at `now` as lost (before `check`). */
  prune?(state: S, now: number, config: C, view: View): S | undefined;
  /** May the request go now? Reads the state, writes nothing. */
  check?(state: S, request: Request, config: C, view: View): Verdict;
  /**
   * The request goes: spend, and write this rule's part of `ticket` (or, when `view.replaying`,
   * apply the part the ticket carries). Returns the state to keep (`undefined`: none).
   */
  commit?(
    state: S | undefined,
    request: Request,
    ticket: Ticket,
    config: C,
    view: View,
  ): S | undefined;
  /** Takes an answer in. Returns the state to keep (`undefined`: none). */
  settle?(state: S | undefined, answer: Answer, config: C, view: View): S | undefined;
  /** Epoch milliseconds from which the state is equivalent to none (`Infinity`: never). */
  expiresAt?(state: S, config: C): number;
}

const NO_UNITS: readonly [string, number][] = Object.freeze([]) as readonly [string, number][];

/**
 * Learning's parameters, resolved once per host from `learnLimits`, `coldStart`, `waitJitter`,
 * `maxRetryAfterMs`, `concurrency` and `attemptTimeoutMs`: the rules that learn from answers read
 * their configuration from it.
 */
export interface LearnConfig {
  /** How long an attempt without a timeout of its own counts in flight, in milliseconds. */
  flightTtlMs: number;
  /** The random extra on waits the server sets. */
  jitter: WaitJitter;
  /** The hold after a spent policy that gives no time, in milliseconds. */
  fallbackHoldMs: number;
  /** The longest hold recorded, in milliseconds (`undefined`: no cap). */
  maxHoldMs?: number;
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

/**
 * A host's options as the rules read them, resolved once per host (`options/resolve.ts`): each part
 * `undefined` when its option turns it off.
 */
export interface RuleInputs {
  /** Learning from answers (`learnLimits`). */
  learn: LearnConfig | undefined;
  /** The client's own rate: `rate` per second, `burst` at once (`rate`, `burst`). */
  bucket: { rate: number; burst: number } | undefined;
  /** The retry budget (`retryBudget`): `ratio` of first attempts, `minPerSecond`, over `windowMs`. */
  budget: { ratio: number; minPerSecond: number; windowMs: number } | undefined;
}

/** A wait reason a rule's `check` gives, and whose wait it is. */
export interface ReasonSpec {
  /** The `held` event's `reason`. */
  readonly reason: string;
  /**
   * The server set the wait (a `Retry-After`, a learned limit): one longer than the caller's
   * `maxRetryAfterMs` is refused at once with `RateLimitError` instead of waited for. `false`: the
   * client's own wait (its rate, its ramp), always waited for.
   */
  readonly serverTimed: boolean;
}

/**
 * A rule and everything about it, as the registry lists it (see the module comment). A new rule is
 * one module exporting one of these, one line in `registry.ts`, one section in the docs.
 */
export interface RuleModule<S, C> extends Rule<S, C> {
  /** Its name in the docs' rule order (`docs/how-it-works.md`), lower case. */
  readonly title: string;
  /** Every wait reason its `check` gives; none for a rule that only counts or never waits. */
  readonly reasons: readonly ReasonSpec[];
  /** Its configuration for a host, from the host's resolved options; `undefined`: off there. */
  configure(host: RuleInputs): C | undefined;
  /**
   * After an answer is settled: until when, epoch milliseconds (0: none), a retry after a
   * pushback waits for this rule (the hold's end, the pace's next opening). Absent: it does not
   * delay retries.
   */
  retryAt?(view: View, state: S | undefined, config: C): number;
}

/** A blank view for a host state with `seq` admissions in `mode`. */
export function newView(mode: Mode, seq: number): View {
  return {
    mode,
    seq,
    replaying: false,
    units: 0,
    requests: 0,
    otherUnits: NO_UNITS,
    open: 0,
    lostUnits: 0,
    counted: false,
    declared: undefined,
    pushback: false,
    explained: false,
    holdUntil: 0,
    paceAt: 0,
    lockout: false,
    served: false,
  };
}

/**
 * One host's shared state in the {@link StateStore}: the host's rules (`rules/host-rules.ts`) run
 * as transactions under its key, for the three things the pipeline asks (admit an attempt, settle
 * its answer, take a retry) and for `stats()`.
 *
 * A store that fails never costs a call the response the server sent: a failed settle is reported
 * (`store-error`) and otherwise ignored; a failed retry-budget check ends the call with its last
 * response, since a store that cannot answer cannot grant a retry. Only a failure while admitting
 * rejects the call, with the store's error: nothing was sent.
 *
 * @module
 */

import type { RateLimitInfo } from '../../headers/types.js';
import type { Clock } from '../../shared/clock.js';
import type { RequestContext } from '../../shared/errors.js';
import { isPushback } from '../call/answer.js';
import type { Cost } from '../call/cost.js';
import type { HostConfig } from '../options/resolve.js';
import type { Again, Ticket } from '../rules/contract.js';
import { bodyEnd, flights, keepsFlightOpen } from '../rules/flights.js';
import type { AdmitResult, HostState, RuleSet, Settled } from '../rules/host-rules.js';
import type { checkHostState } from '../rules/state-check.js';
import {
  admitTransaction,
  adoptTransaction,
  readTransaction,
  settleTransaction,
  type TransactionParts,
} from '../rules/transactions.js';
import type { HostReport } from './host-report.js';
import type { StateTime } from './state-time.js';
import {
  isPromise,
  type MaybePromise,
  STATE_CHECK,
  type StateStore,
  type Transaction,
  updateAt,
} from './store.js';

/** What a settle needs of an attempt's outcome, and where it records the host's hold after it. */
export interface SettledOutcome {
  response?: Response;
  info?: RateLimitInfo;
  /** The body says the server refused (a GraphQL `THROTTLED`): a pushback whatever the status. */
  refused?: boolean;
  /**
   * Set by the settle: the host's hold once the outcome was taken in, epoch milliseconds (0 for
   * none); left undefined when learning is off or the store failed.
   */
  holdUntil?: number;
  /**
   * Set by the settle: whether the answer is the server pushing back, as the host's rules see it
   * (a load shedder's 5xx is); by its status and headers alone when learning is off or the store
   * failed.
   */
  pushback?: boolean;
  /** Set by the settle: whether the host is in a lockout after it (see `rules/pace.ts`). */
  lockout?: boolean;
  /** Set by the settle: whether the host served others since the call's previous refusal. */
  served?: boolean;
  /**
   * Set by the caller, when the call's previous attempt was refused: when (epoch milliseconds on
   * the clock), its ticket's `seq`, and the call's refusals while the host served others;
   * undefined when it was not (see `Answer.again`).
   */
  again?: Again | undefined;
}

/** The admission of a host that shares no state (learning, client rate and budget all off). */
const ADMITTED: AdmitResult = Object.freeze({
  ok: true,
  ticket: Object.freeze({ kind: 'attempt', seq: 0, at: 0, cost: 0, first: false }),
}) as AdmitResult;

const noop = () => {};

/** A moment of the state's time line (0: none) on the clock's, `shift` behind it. */
function onClock(t: number, shift: number): number {
  return t > 0 ? t - shift : 0;
}

/** See the module comment. */
export class HostStore {
  /** The host's (or its scope's) key in the store: origin, `#partition`, a scope's name. */
  readonly key: string;
  readonly #rules: RuleSet;
  readonly #store: StateStore;
  readonly #clock: Clock;
  /** The state's time line (see `state-time.ts`). */
  readonly #time: StateTime;
  /** What the host's transactions share (the state's time as they run, the store's check). */
  readonly #parts: TransactionParts;
  /** The check of a state read from outside, when the store reads such states (see `STATE_CHECK`). */
  readonly #check: ((state: unknown) => HostState) | undefined;
  /** Whether a rule takes answers in (else a settle has nothing to do). */
  readonly #learns: boolean;
  /** Whether a rule keeps state (else an admission has nothing to ask). */
  readonly #shares: boolean;
  /** Whether a rule looks at retries (else every retry is granted). */
  readonly #judgesRetries: boolean;
  /** Whether the requests in flight are counted (an answer may then keep its flight open). */
  readonly #countsFlights: boolean;
  /** The state as last read for `stats()` (a copy). */
  #last: HostState | undefined;

  readonly #policy: HostConfig;
  readonly #report: HostReport;
  constructor(
    shared: { store: StateStore; clock: Clock; time: StateTime },
    policy: HostConfig,
    report: HostReport,
    key: string,
  ) {
    this.#policy = policy;
    this.#report = report;
    this.#store = shared.store;
    this.#clock = shared.clock;
    this.#time = shared.time;
    // The store adds its own prefix (RedisStore: `limited-client:state:{<origin>}`).
    this.key = key;
    const rules = policy.ruleSet;
    this.#rules = rules;
    const check = (shared.store as { [STATE_CHECK]?: typeof checkHostState })[STATE_CHECK];
    this.#check = check && ((state) => check(state, rules, shared.time.at(shared.clock.now())));
    this.#parts = { time: shared.time.live, check: this.#check };
    this.#learns = rules.settling.length > 0;
    this.#shares = rules.all.length > 0;
    this.#judgesRetries = rules.retry.length > 0;
    this.#countsFlights = rules.all.some((b) => b.key === flights.key);
  }

  /**
   * Asks the rules to admit one attempt costing `cost` at `now` (the clock's time, epoch
   * milliseconds), and records it when they do.
   */
  admit(cost: Cost, first: boolean, now: number, ttlMs: number | undefined) {
    if (!this.#shares) return ADMITTED;
    const transaction = admitTransaction(
      this.#rules,
      {
        kind: 'attempt',
        cost: cost.requests,
        units: cost.units,
        first,
        now: this.#time.at(now),
        ttlMs,
      },
      this.#parts,
    );
    return updateAt<HostState, AdmitResult>(
      this.#store,
      this.key,
      transaction,
      this.#policy.stateTtlMs,
      this.#clock,
      now,
    );
  }

  /**
   * Takes an attempt's outcome into the rules (`outcome` with no response: an admission given
   * back, or an attempt that got none), and records the host's hold after it on the outcome.
   * With `adopt`, the attempt was admitted by another lane of the host (`ticket` is that lane's):
   * this state takes the answer in as if it had admitted it (see `adoptTransaction`).
   * Never throws nor rejects (see the module comment); synchronous with a synchronous store.
   */
  settle(
    ticket: Ticket,
    outcome: SettledOutcome,
    ctx: RequestContext,
    now = this.#clock.now(),
    adopt = false,
  ): Promise<void> | undefined {
    const { response, info } = outcome;
    const status = response?.status;
    const pushback = status !== undefined && (outcome.refused === true || isPushback(status, info));
    outcome.pushback = pushback;
    if (!this.#learns) return;
    const at = this.#time.at(now);
    const answer = {
      ticket,
      status,
      info,
      pushback,
      now: at,
      random: this.#clock.random(),
      // A past moment keeps its distance from `now` (`StateTime.at` takes only the present).
      again:
        outcome.again === undefined
          ? undefined
          : { ...outcome.again, at: at - (now - outcome.again.at) },
    };
    const rules = this.#rules;
    return this.#record(
      () =>
        adopt
          ? adoptTransaction(rules, { ...ticket, now: ticket.at }, answer, this.#parts)
          : settleTransaction(rules, answer, this.#parts),
      outcome,
      ctx,
      now,
      at - now,
    );
  }

  /**
   * Runs a settling transaction and records on `outcome` what it says: the hold (moved to the
   * clock's time line, `shift` behind the state's), the pushback, the lockout. `now`: the clock's
   * time, epoch milliseconds. A store failure is
   * reported and otherwise ignored (see the module comment).
   */
  #record(
    transaction: () => Transaction<HostState, Settled>,
    outcome: SettledOutcome,
    ctx: RequestContext,
    now: number,
    shift: number,
  ): Promise<void> | undefined {
    let result: MaybePromise<Settled>;
    try {
      result = updateAt<HostState, Settled>(
        this.#store,
        this.key,
        transaction(),
        this.#policy.stateTtlMs,
        this.#clock,
        now,
      );
    } catch (error) {
      this.#report.storeError(ctx, 'settle', error);
      return;
    }
    if (!isPromise(result)) {
      outcome.holdUntil = shift === 0 ? result.holdUntil : onClock(result.holdUntil, shift);
      outcome.pushback = result.pushback;
      outcome.lockout = result.lockout;
      outcome.served = result.served;
      return;
    }
    return result.then(
      (settled) => {
        outcome.holdUntil = onClock(settled.holdUntil, shift);
        outcome.pushback = settled.pushback;
        outcome.lockout = settled.lockout;
        outcome.served = settled.served;
      },
      (error: unknown) => this.#report.storeError(ctx, 'settle', error),
    );
  }

  /**
   * Whether an answer with these rate-limit fields leaves its attempt in flight in the shared
   * state until its body ends (see `keepsFlightOpen`): then {@link endBody} must follow.
   */
  keepsFlight(info: RateLimitInfo | undefined): boolean {
    return this.#countsFlights && keepsFlightOpen(info);
  }

  /**
   * Ends the flight of an attempt whose answer left it open ({@link keepsFlight}): its body has
   * ended (or the call let it go). Never throws nor rejects, as {@link settle}.
   */
  endBody(ticket: Ticket, ctx: RequestContext): Promise<void> | undefined {
    return this.settle(bodyEnd(ticket), {}, ctx);
  }

  /** Takes one retry from the budget: whether there was one, or `store-error` (reported). */
  async retry(now: number, ctx: RequestContext): Promise<boolean | 'store-error'> {
    if (!this.#judgesRetries) return true;
    const transaction = admitTransaction(
      this.#rules,
      { kind: 'retry', cost: 1, first: false, now: this.#time.at(now) },
      this.#parts,
    );
    try {
      const result = await this.#store.update<HostState, AdmitResult>(
        this.key,
        transaction,
        this.#policy.stateTtlMs,
      );
      return result.ok;
    } catch (error) {
      this.#report.storeError(ctx, 'retry-budget', error);
      return 'store-error';
    }
  }

  /**
   * The host's state for `stats()`: read now when the store answers at once, else as of the
   * previous read (this one refreshes it). Never throws. Read-only when the store has `get`.
   * What a store that reads states from outside hands back is checked (a copy, within bounds; see
   * `STATE_CHECK`): a state that fails the check reads as none. Another store's is copied.
   */
  lastState(): HostState | undefined {
    try {
      const read = this.#store.get
        ? this.#store.get<unknown>(this.key)
        : this.#store.update<HostState, unknown>(
            this.key,
            readTransaction,
            this.#policy.stateTtlMs,
          );
      if (isPromise(read)) {
        read.then((state) => {
          this.#last = this.#checked(state);
        }, noop);
      } else {
        this.#last = this.#checked(read);
      }
    } catch {
      // The state as of the last read: stats() never throws for the store.
    }
    return this.#last;
  }

  /** A copy of `state` (checked, when the store has a check), or `undefined` (none, or it fails). */
  #checked(state: unknown): HostState | undefined {
    if (state === undefined) return undefined;
    try {
      return this.#check ? this.#check(state) : structuredClone(state as HostState);
    } catch {
      return undefined;
    }
  }
}

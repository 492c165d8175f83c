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
import type { Clock } from '../clock.js';
import type { RequestContext } from '../errors.js';
import type { RateLimitInfo } from '../headers/types.js';
import { isPushback } from './answer.js';
import type { Cost } from './cost.js';
import type { HostConfig } from './host-config.js';
import type { HostReport } from './host-report.js';
import type { Ticket } from './rules/contract.js';
import { bodyEnd, keepsFlightOpen } from './rules/flights.js';
import { type AdmitResult, bindRules, type HostState, type Settled } from './rules/host-rules.js';
import { admitTransaction, readTransaction, settleTransaction } from './rules/transactions.js';
import type { MaybePromise, StateStore } from './store.js';

/** What a settle needs of an attempt's outcome, and where it records the host's hold after it. */
export interface SettledOutcome {
  response?: Response;
  info?: RateLimitInfo;
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
}

/** The admission of a host that shares no state (learning, client rate and budget all off). */
const ADMITTED: AdmitResult = Object.freeze({
  ok: true,
  ticket: Object.freeze({ kind: 'attempt', seq: 0, at: 0, cost: 0, first: false }),
}) as AdmitResult;

const noop = () => {};

function isPromise<T>(value: MaybePromise<T>): value is Promise<T> {
  return typeof (value as { then?: unknown } | undefined)?.then === 'function';
}

/** See the module comment. */
export class HostStore {
  readonly #key: string;
  readonly #rules: ReturnType<typeof bindRules>;
  readonly #store: StateStore;
  readonly #clock: Clock;
  readonly #learns: boolean;
  readonly #shares: boolean;
  /** The state as last read for `stats()` (a copy). */
  #last: HostState | undefined;

  readonly #policy: HostConfig;
  readonly #report: HostReport;
  constructor(
    shared: { store: StateStore; clock: Clock },
    policy: HostConfig,
    report: HostReport,
    origin: string,
    partition: string | undefined,
  ) {
    this.#policy = policy;
    this.#report = report;
    this.#store = shared.store;
    this.#clock = shared.clock;
    // The store adds its own prefix (RedisStore: `limited-client:state:{<origin>}`).
    this.#key = partition === undefined ? origin : `${origin}#${partition}`;
    const { learn, bucket, budget } = policy.rules;
    this.#rules = bindRules(policy.rules);
    this.#learns = learn !== undefined;
    this.#shares = learn !== undefined || bucket !== undefined || budget !== undefined;
  }

  /** Asks the rules to admit one attempt costing `cost` at `now` (and records it when they do). */
  admit(cost: Cost, first: boolean, now: number, ttlMs: number | undefined) {
    if (!this.#shares) return ADMITTED;
    const transaction = admitTransaction(this.#rules, {
      kind: 'attempt',
      cost: cost.requests,
      units: cost.units,
      first,
      now,
      ttlMs,
    });
    return this.#store.update<HostState, AdmitResult>(
      this.#key,
      transaction,
      this.#policy.stateTtlMs,
    );
  }

  /**
   * Takes an attempt's outcome into the rules (`outcome` with no response: an admission given
   * back, or an attempt that got none), and records the host's hold after it on the outcome.
   * Never throws nor rejects (see the module comment); synchronous with a synchronous store.
   */
  settle(
    ticket: Ticket,
    outcome: SettledOutcome,
    ctx: RequestContext,
    now = this.#clock.now(),
  ): Promise<void> | undefined {
    const { response, info } = outcome;
    const status = response?.status;
    const pushback = status !== undefined && isPushback(status, info);
    outcome.pushback = pushback;
    if (!this.#learns) return;
    const answer = {
      ticket,
      status,
      info,
      pushback,
      now,
      random: this.#clock.random(),
    };
    let result: MaybePromise<Settled>;
    try {
      result = this.#store.update<HostState, Settled>(
        this.#key,
        settleTransaction(this.#rules, answer),
        this.#policy.stateTtlMs,
      );
    } catch (error) {
      this.#report.storeError(ctx, 'settle', error);
      return;
    }
    if (!isPromise(result)) {
      outcome.holdUntil = result.holdUntil;
      outcome.pushback = result.pushback;
      return;
    }
    return result.then(
      (settled) => {
        outcome.holdUntil = settled.holdUntil;
        outcome.pushback = settled.pushback;
      },
      (error: unknown) => this.#report.storeError(ctx, 'settle', error),
    );
  }

  /**
   * Whether an answer with these rate-limit fields leaves its attempt in flight in the shared
   * state until its body ends (see `keepsFlightOpen`): then {@link endBody} must follow.
   */
  keepsFlight(info: RateLimitInfo | undefined): boolean {
    return this.#learns && keepsFlightOpen(info);
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
    if (!this.#policy.rules.budget) return true;
    const transaction = admitTransaction(this.#rules, {
      kind: 'retry',
      cost: 1,
      first: false,
      now,
    });
    try {
      const result = await this.#store.update<HostState, AdmitResult>(
        this.#key,
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
   */
  lastState(): HostState | undefined {
    try {
      const read = this.#store.get
        ? this.#store.get<HostState>(this.#key)
        : this.#store.update(this.#key, readTransaction, this.#policy.stateTtlMs);
      if (isPromise(read)) {
        read.then((state) => {
          this.#last = state && structuredClone(state);
        }, noop);
      } else {
        this.#last = read && structuredClone(read);
      }
    } catch {
      // The state as of the last read: stats() never throws for the store.
    }
    return this.#last;
  }
}

/**
 * A call's retries that wait for the host's pace (after a bare 429, or for a lockout's probes):
 * bounded by time, not by the call's `retries`. The pace caps what the host is sent whatever the
 * calls waiting do, so such retries are no storm; counted, four pace-spaced bare 429s ended a call
 * (`retries-exhausted`) while the host went on accepting the others (a Stripe-like account
 * shared with a neighbour). So they spend no retry of the call for `maxRetryAfterMs` (the
 * longest the caller lets a server hold it) from the call's first one; after that the call ends
 * (`hold-too-long`) with its last response. A call the host refuses for good cannot hold the
 * front of the line meanwhile: such a retry waits behind the calls not tried yet (`call-run.ts`),
 * and once its refusals are seen as its own (see `View.served`), it retries on its own backoff.
 *
 * @module
 */
import type { Outcome } from '../call/attempt.js';
import type { Ticket } from '../rules/contract.js';
import { ownRefusal } from '../rules/pace.js';
import { pacedRetry } from './retry-grant.js';
import { type PlanContext, planAfter, type RetryPlan } from './retry-plan.js';

/** See the module comment. One per call. */
export class PacedRetries {
  /** Paced retries granted so far: not counted against the call's `retries`. */
  #count = 0;
  /** When the call's first paced retry was planned (its refusal's answer), epoch milliseconds. */
  #since: number | undefined;
  /** The last attempt's ticket's `seq` (see `Answer.again`). */
  #lastSeq = 0;
  /** The call's refusals that came while the host accepted others (see `View.served`). */
  #served = 0;

  /**
   * An attempt answered with `outcome`, before the host's state takes it in: tells the state the
   * call's previous refusal, if `last` (the previous outcome) was one (`Answer.again`).
   */
  answered(last: Outcome | undefined, outcome: Outcome, ticket: Ticket): void {
    if (last?.pushback === true) {
      outcome.again = { at: last.at, seq: this.#lastSeq, served: this.#served };
    }
    this.#lastSeq = ticket.seq;
  }

  /** The host's state took `outcome` in: whether its refusal is the call's own. */
  settled(outcome: Outcome): void {
    if (outcome.pushback !== true || outcome.served === undefined) return;
    outcome.ownRefusal = ownRefusal(this.#served, outcome.served);
    if (outcome.served) this.#served++;
  }

  /**
   * The retry plan after `outcome`: {@link planAfter}, with the paced retries granted so far not
   * counted, and a paced retry allowed past the call's `retries` (none when `retries` is 0) until
   * `boundMs` milliseconds after the first, refused after (`hold-too-long`).
   */
  plan(outcome: Outcome, context: PlanContext, boundMs: number): RetryPlan {
    const { call } = context;
    const counted =
      this.#count === 0
        ? context
        : { ...context, call: { ...call, retries: call.retries + this.#count } };
    const plan = planAfter(outcome, counted);
    if (call.retries === 0) return plan;
    const free =
      plan.retry || plan.reason !== 'retries-exhausted'
        ? plan
        : planAfter(outcome, { ...context, call: { ...call, retries: Number.POSITIVE_INFINITY } });
    if (!free.retry || !pacedRetry(outcome, free)) return plan;
    if (this.#since !== undefined && outcome.at - this.#since >= boundMs) {
      return { retry: false, reason: 'hold-too-long' };
    }
    return free;
  }

  /** A paced retry was granted after an answer at `at` (epoch milliseconds). */
  granted(at: number): void {
    this.#count++;
    this.#since ??= at;
  }
}

/**
 * One call's run through its host's pipeline: the steps, in the order `docs/how-it-works.md`
 * draws, and what the call carries from one attempt to the next (the attempts made, the last
 * outcome, the deadline).
 *
 * @module
 */
import { abortReason } from '../../shared/clock.js';
import { isClientClosedError, isLimitedClientError } from '../../shared/errors.js';
import type { HostParts, OpenFlight } from '../host/host-parts.js';
import type { MaybePromise } from '../host/store.js';
import {
  type CallSoFar,
  type NextAttempt,
  planNext,
  type Step,
  waitForRetry,
} from '../retry/next-attempt.js';
import { PacedRetries } from '../retry/paced-retries.js';
import { defaultShouldRetry } from '../retry/retry-rule.js';
import type { Ticket } from '../rules/contract.js';
import { settleInLane } from '../scopes/lane-settle.js';
import { healthOf } from './answer.js';
import { type Call, endAttempt, type Outcome, type Sending, startAttempt } from './attempt.js';
import { watchBody } from './body-watch.js';
import {
  circuitOpen,
  discard,
  flightTtlOf,
  giveUp,
  holdSlot,
  letGoOf,
  refusalReason,
} from './call-end.js';
import { learnKeys } from './key-honour.js';
import type { BodySlot } from './open-bodies.js';
import type { PreparedRequest } from './request.js';

/** See the module comment. */
export class CallRun {
  /** Attempts made so far. */
  #attempts = 0;
  /** The last attempt's outcome. */
  #last: Outcome | undefined;
  /** Whether this round's attempt is a probe of a half-open circuit breaker. */
  #probe = false;
  /** Retries that waited for the pace (bounded in time), and the call's refusals. */
  readonly #paced = new PacedRetries();
  /**
   * Whether the next round waits at the back of the line, behind the calls waiting already: a
   * retry that waits for the pace. A call the host refuses for good then cannot hold the front of
   * the line: the turns the pace gives rotate among the waiting calls.
   */
  #behind = false;
  /**
   * The answered attempt's slot while the call decides: given to the returned body, or given back.
   */
  #held: BodySlot<OpenFlight | undefined> | undefined;

  /** The lane the call runs in: its scope's (it moves when an answer names another). */
  #host: HostParts;
  readonly #req: PreparedRequest;
  readonly #call: Call;
  readonly #deadline: number;

  /** @param deadline epoch milliseconds by which the call must be done (`Infinity`: none). */
  constructor(host: HostParts, req: PreparedRequest, call: Call, deadline: number) {
    this.#host = host;
    this.#req = req;
    this.#call = call;
    this.#deadline = deadline;
  }

  /**
   * One round from `now` (epoch ms): breaker, admission, attempt (steps 1 to 3), then the retry
   * plan once the attempt is answered (step 4), which runs the next round. Never throws. The
   * happy path makes no `async` frame ([hot-path.md](../../docs/hot-path.md)).
   */
  run(now: number): Promise<Response> {
    this.#host.report.round(this.#call.ctx, now);
    try {
      // 1. Circuit breaker: fail fast while open; a probe when half-open.
      const breaker = this.#host.breaker;
      this.#probe = false;
      if (breaker) {
        const permit = breaker.acquire(now);
        if (!permit.allowed) return Promise.resolve(this.#circuitOpen(permit.retryAt));
        this.#probe = permit.probe;
      }
      // 2. Admission: the queue, the concurrency cap and the host's rules (at once when the host
      // has room and the store answers synchronously).
      const call = this.#call;
      const admitted = this.#ask(now);
      // A store that answers synchronously (memory) admits without a turn of the event loop.
      if (
        'then' in admitted ||
        this.#host.closed(call.ctx) !== undefined ||
        (breaker && !this.#probe && !breaker.closed)
      ) {
        return this.#admitted(admitted).then((step) =>
          'end' in step ? step.end : this.#attempt(step.go),
        );
      }
      // 3. The attempt, and what it teaches (the rules, the breaker, the counters); then step 4.
      return this.#attempt(admitted);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Step 2's question to the lane's admission. */
  #ask(now: number): MaybePromise<Ticket> {
    const call = this.#call;
    return this.#host.admission.admit({
      cost: call.cost,
      firstAttempt: this.#attempts === 0,
      priority: this.#attempts > 0 && !this.#behind,
      signal: call.signal,
      maxWaitMs: this.#host.policy.maxRetryAfterMs,
      ctx: call.ctx,
      now,
      flightTtlMs: flightTtlOf(call),
    });
  }

  /** The rest of step 2, when the admission waited or the host may have changed meanwhile. */
  async #admitted(admitted: MaybePromise<Ticket>): Promise<Step<Ticket>> {
    const call = this.#call;
    const last = this.#last;
    let ticket: Ticket;
    try {
      ticket = await admitted;
    } catch (error) {
      this.#host.breaker?.release(this.#probe);
      if (last?.response && isLimitedClientError(error) && !isClientClosedError(error)) {
        return { end: giveUp(this.#host, call, this.#attempts, refusalReason(error), last) };
      }
      discard(last?.response);
      throw error;
    }
    const closed = this.#host.closed(call.ctx);
    if (closed !== undefined) {
      // Closed while the store answered: nothing is sent after close().
      this.#host.breaker?.release(this.#probe);
      await this.#giveBack(ticket);
      discard(last?.response);
      throw closed;
    }
    // Queued with the host's own rules before an answer named its route's scope: it waits in
    // that scope's line instead, whose state knows the budget.
    const host = this.#host;
    const lane = host.scope === undefined ? host.laneOf(this.#req) : host;
    if (lane !== host) {
      await this.#giveBack(ticket);
      this.#host = lane;
      return this.#admitted(this.#ask(host.shared.clock.now()));
    }
    // The breaker may have opened while this request waited in line: it may still go as a probe.
    const permit = this.#host.breaker?.recheck(this.#host.shared.clock.now(), this.#probe);
    if (permit === undefined) return { go: ticket };
    if (!permit.allowed) {
      await this.#giveBack(ticket);
      return { end: this.#circuitOpen(permit.retryAt) };
    }
    this.#probe = true;
    return { go: ticket };
  }

  /**
   * Step 3: one attempt, and what follows it. The previous response is let go only now: until
   * another attempt goes, it is what the call resolves to, with its body still readable.
   */
  #attempt(ticket: Ticket): Promise<Response> {
    const req = this.#req;
    const call = this.#call;
    letGoOf(this.#last);
    this.#attempts++;
    this.#host.report.counters.attempts++;
    const { clock } = this.#host.shared;
    this.#host.report.sent(call.ctx, this.#attempts, clock);
    let sending: Sending;
    try {
      sending = startAttempt(clock, req, call);
    } catch (error) {
      // Not the fetch (its failures are outcomes): the caller's `createBody` threw.
      return this.#abandon(ticket, error);
    }
    return sending.sent.then(
      (response) => this.#answered(ticket, sending, response, undefined),
      (error: unknown) => this.#answered(ticket, sending, undefined, error),
    );
  }

  /** The attempt's answer (a response, or fetch's error) taken in; then step 4. */
  #answered(
    ticket: Ticket,
    sending: Sending,
    response: Response | undefined,
    error: unknown,
  ): Response | Promise<Response> {
    const call = this.#call;
    let outcome: Outcome;
    try {
      outcome = endAttempt(this.#host.shared.clock, call, sending, response, error);
    } catch (failure) {
      return this.#abandon(ticket, failure);
    }
    this.#host.report.answered(call.ctx, this.#attempts, response, error, outcome.at);
    this.#paced.answered(this.#last, outcome, ticket);
    this.#last = outcome;
    let settled: Promise<void> | undefined;
    try {
      const into = settleInLane(this.#host, this.#req, ticket, outcome, call.ctx);
      this.#host = into.lane;
      settled = into.settled;
    } catch (failure) {
      this.#host.admission.release();
      throw failure;
    }
    if (settled) {
      return settled.then(
        () => {
          this.#held = holdSlot(this.#host, ticket, outcome, call.ctx);
          return this.#learned(outcome);
        },
        (failure: unknown) => {
          this.#host.admission.release();
          throw failure;
        },
      );
    }
    // Whatever the store did, the attempt is answered: its slot comes back, or is held.
    this.#held = holdSlot(this.#host, ticket, outcome, call.ctx);
    return this.#learned(outcome);
  }

  /** The call returns `response`: the slot it holds goes with its body (see `body-watch.ts`). */
  #handOver(response: Response): Response {
    const held = this.#held;
    this.#held = undefined;
    if (held !== undefined) watchBody(response, held);
    return response;
  }

  /** The call lets the answer it holds go (a retry goes, or the call fails): its slot comes back. */
  #letGo(): void {
    const held = this.#held;
    this.#held = undefined;
    held?.end();
  }

  /** What the answer teaches the report and the breaker; then step 4, the retry plan. */
  #learned(outcome: Outcome): Response | Promise<Response> {
    const call = this.#call;
    const { response, info, error } = outcome;
    const pushback = outcome.pushback === true;
    this.#paced.settled(outcome);
    if (response) {
      this.#host.report.response(call.ctx, response.status, info, pushback);
      learnKeys(this.#host, this.#req.key, response);
      if (pushback) this.#host.holdHost(this.#host, outcome);
    }
    const aborted = call.signal?.aborted === true;
    const health = healthOf(response?.status, error, aborted, pushback, info);
    this.#host.breaker?.record(health, outcome.at, this.#probe);
    if (error !== undefined && aborted) throw abortReason(call.signal as AbortSignal);
    // 4. The retry plan: another attempt, or the end of the call. The default rule never retries
    // a success or a redirect (unless its body refused: GraphQL's THROTTLED): no plan to build.
    const final = response && response.status < 400 && !outcome.refused;
    if (final && call.shouldRetry === defaultShouldRetry) return this.#handOver(response);
    return this.#next(outcome);
  }

  /** Step 4 and 5 when a plan is needed: the plan, the wait, and the next round. */
  async #next(outcome: Outcome): Promise<Response> {
    this.#host.between++;
    try {
      let next: Step<NextAttempt>;
      try {
        next = await planNext(this.#soFar(), outcome);
      } catch (error) {
        this.#letGo();
        throw error;
      }
      if ('end' in next) return this.#handOver(next.end);
      // Waiting for the pace: behind the calls not tried yet (see `#behind`).
      this.#behind = next.go.paced;
      // Another attempt goes: this answer's slot comes back before the next is asked for (its body
      // is let go when that attempt starts; if none can, the call returns it without a slot).
      this.#letGo();
      await waitForRetry(this.#host, this.#call, this.#last, next.go.plan);
    } finally {
      this.#host.between--;
    }
    // The next round takes its place in line (or its slot) before it returns: the host stays busy.
    return this.run(this.#host.shared.clock.now());
  }

  /** What step 4 reads of the call (`retry/next-attempt.ts`). */
  #soFar(): CallSoFar {
    return {
      host: this.#host,
      req: this.#req,
      call: this.#call,
      attempts: this.#attempts,
      deadline: this.#deadline,
      paced: this.#paced,
    };
  }

  /**
   * An attempt that sent nothing (the caller's `createBody` threw): the admission, its slot and
   * any probe go back, and the call rejects with `error`.
   */
  async #abandon(ticket: Ticket, error: unknown): Promise<never> {
    this.#host.breaker?.release(this.#probe);
    await this.#giveBack(ticket);
    throw error;
  }

  /** Gives back an admission that will not be used, and its slot. */
  async #giveBack(ticket: Ticket): Promise<void> {
    try {
      const settled = this.#host.store.settle(ticket, {}, this.#call.ctx);
      if (settled) await settled;
    } finally {
      this.#host.admission.release();
    }
  }

  /** See {@link circuitOpen}. */
  #circuitOpen(retryAt: number): Response {
    return circuitOpen(this.#host, this.#call, this.#attempts, this.#last, retryAt);
  }
}

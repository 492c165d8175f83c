/**
 * One call's run through its host's pipeline: the steps, in the order `pipeline.ts` draws, and
 * what the call carries from one attempt to the next (the attempts made, the last outcome, the
 * deadline).
 *
 * @module
 */
import { abortReason } from '../clock.js';
import {
  CircuitOpenError,
  isClientClosedError,
  isCostTooHighError,
  isLimitedClientError,
  isQueueFullError,
  isQueueTimeoutError,
  isRateLimitError,
  RetryBudgetExhaustedError,
} from '../errors.js';
import { healthOf } from './answer.js';
import { type Call, endAttempt, type Outcome, type Sending, startAttempt } from './attempt.js';
import { watchBody } from './body-watch.js';
import type { HostParts, OpenFlight } from './host-parts.js';
import { answerHonoursKey } from './key-honour.js';
import type { BodySlot } from './open-bodies.js';
import type { PreparedRequest } from './request.js';
import { planAfter, type RetryPlan } from './retry/retry-plan.js';
import { defaultShouldRetry } from './retry/retry-rule.js';
import type { Ticket } from './rules/contract.js';
import type { MaybePromise } from './store.js';
import type { GiveUpReason } from './types.js';

/** The answer of a step: go on (with a value), or end the call with a response. */
type Step<T> = { go: T } | { end: Response };

const noop = () => {};

/** See the module comment. */
export class CallRun {
  /** Attempts made so far. */
  #attempts = 0;
  /** The last attempt's outcome. */
  #last: Outcome | undefined;
  /**
   * Retries that waited for the probes of a lockout: they spend no retry of the call (the
   * lockout bounds them in time: see `rules/pace.ts` and `rules/refusal.ts`).
   */
  #lockoutRetries = 0;
  /**
   * The slot of the attempt just answered, which the call holds while it decides what to do with
   * the answer: handed to the response's body when the call returns it, else given back.
   */
  #held: BodySlot<OpenFlight | undefined> | undefined;

  readonly #host: HostParts;
  readonly #req: PreparedRequest;
  readonly #call: Call;
  readonly #deadline: number;

  /**
   * @param deadline epoch milliseconds by which the call must be done (`Infinity`: none).
   */
  constructor(host: HostParts, req: PreparedRequest, call: Call, deadline: number) {
    this.#host = host;
    this.#req = req;
    this.#call = call;
    this.#deadline = deadline;
  }

  /**
   * Breaker, admission, attempt, retry plan; again while the plan says so. On the happy path (the
   * breaker closed, the host with room, a store that answers at once, a success) the call's promise
   * is fetch's, with one `then` that takes the answer in: no `async` frame of its own.
   */
  run(start: number): Promise<Response> {
    return this.#round(start);
  }

  /** One round: steps 1 to 3, then step 4 once the attempt is answered. Never throws. */
  #round(now: number): Promise<Response> {
    try {
      // 1. Circuit breaker: fail fast while open; a probe when half-open.
      const breaker = this.#host.breaker;
      let probe = false;
      if (breaker) {
        const permit = breaker.acquire(now);
        if (!permit.allowed) return Promise.resolve(this.#circuitOpen(permit.retryAt));
        probe = permit.probe;
      }
      // 2. Admission: the queue, the concurrency cap and the host's rules (at once when the host
      // has room and the store answers synchronously).
      const call = this.#call;
      const admitted = this.#host.admission.admit({
        cost: call.cost,
        firstAttempt: this.#attempts === 0,
        priority: this.#attempts > 0,
        signal: call.signal,
        maxWaitMs: this.#host.policy.maxRetryAfterMs,
        ctx: call.ctx,
        now,
        // A live attempt is answered or times out within its timeout; past it and a second more,
        // its request is taken as lost (a process that died with it out).
        flightTtlMs: Number.isFinite(call.attemptTimeoutMs)
          ? call.attemptTimeoutMs + 1000
          : undefined,
      });
      // A store that answers synchronously (memory) admits without a turn of the event loop.
      if (
        'then' in admitted ||
        this.#host.closed(call.ctx) !== undefined ||
        (breaker && !probe && !breaker.closed)
      ) {
        return this.#admitted(admitted, probe).then((step) =>
          'end' in step ? step.end : this.#attempt(step.go[0], step.go[1]),
        );
      }
      // 3. The attempt, and what it teaches (the rules, the breaker, the counters); then step 4.
      return this.#attempt(admitted, probe);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** The rest of step 2, when the admission waited or the host may have changed meanwhile. */
  async #admitted(
    admitted: MaybePromise<Ticket>,
    probe: boolean,
  ): Promise<Step<[Ticket, boolean]>> {
    const call = this.#call;
    const last = this.#last;
    const breaker = this.#host.breaker;
    let ticket: Ticket;
    try {
      ticket = await admitted;
    } catch (error) {
      breaker?.release(probe);
      if (last?.response && isLimitedClientError(error) && !isClientClosedError(error)) {
        return { end: this.#giveUp(refusalReason(error), last) };
      }
      discard(last?.response);
      throw error;
    }
    const closed = this.#host.closed(call.ctx);
    if (closed !== undefined) {
      // Closed while the store answered: nothing is sent after close().
      breaker?.release(probe);
      await this.#giveBack(ticket, call);
      discard(last?.response);
      throw closed;
    }
    const later = this.#host.shared.clock.now();
    if (breaker && !probe && !breaker.closed && breaker.stateAt(later) !== 'closed') {
      // The breaker opened while this request waited in line: it may still go as a probe.
      const permit = breaker.acquire(later);
      if (!permit.allowed) {
        await this.#giveBack(ticket, call);
        return { end: this.#circuitOpen(permit.retryAt) };
      }
      return { go: [ticket, true] };
    }
    return { go: [ticket, probe] };
  }

  /**
   * Step 3: one attempt, and what follows it. The previous response is let go only now: until
   * another attempt goes, it is what the call resolves to, with its body still readable.
   */
  #attempt(ticket: Ticket, probe: boolean): Promise<Response> {
    const req = this.#req;
    const call = this.#call;
    if (this.#last) {
      discard(this.#last.response);
      this.#last.scope?.dispose();
    }
    this.#attempts++;
    this.#host.report.counters.attempts++;
    const { clock } = this.#host.shared;
    let sending: Sending;
    try {
      sending = startAttempt(clock, req, call);
    } catch (error) {
      // Not the fetch (its failures are outcomes): the caller's `createBody` threw.
      return this.#abandon(ticket, probe, error);
    }
    return sending.sent.then(
      (response) => this.#answered(ticket, probe, sending, response, undefined),
      (error: unknown) => this.#answered(ticket, probe, sending, undefined, error),
    );
  }

  /** The attempt's answer (a response, or fetch's error) taken in; then step 4. */
  #answered(
    ticket: Ticket,
    probe: boolean,
    sending: Sending,
    response: Response | undefined,
    error: unknown,
  ): Response | Promise<Response> {
    const call = this.#call;
    let outcome: Outcome;
    try {
      outcome = endAttempt(this.#host.shared.clock, call, sending, response, error);
    } catch (failure) {
      return this.#abandon(ticket, probe, failure);
    }
    this.#last = outcome;
    let settled: Promise<void> | undefined;
    try {
      settled = this.#host.store.settle(ticket, outcome, call.ctx, outcome.at);
    } catch (failure) {
      this.#host.admission.release();
      throw failure;
    }
    if (settled) {
      return settled.then(
        () => {
          this.#hold(ticket, outcome);
          return this.#learned(outcome, probe);
        },
        (failure: unknown) => {
          this.#host.admission.release();
          throw failure;
        },
      );
    }
    this.#hold(ticket, outcome);
    return this.#learned(outcome, probe);
  }

  /**
   * Whatever the store did, the attempt is answered. Its slot comes back now, unless the response
   * may still hold it: a response counts until its body ends where a slot is counted, under the
   * host's concurrency cap or in a concurrency policy the server declares; the call holds the slot
   * until it knows whether it returns the response.
   */
  #hold(ticket: Ticket, outcome: Outcome): void {
    const { response } = outcome;
    if (response !== undefined) {
      const host = this.#host;
      const flight = host.store.keepsFlight(outcome.info);
      if (flight || Number.isFinite(host.policy.concurrency)) {
        this.#held = host.bodies.hold(flight ? { ticket, ctx: this.#call.ctx } : undefined);
        // The answer changed the shared state (a round of the ramp, a report): the line looks again.
        host.admission.kick();
        return;
      }
    }
    this.#host.admission.release();
  }

  /** The call returns `response`: the slot it holds goes with its body (see `body-watch.ts`). */
  #handOver(response: Response): Response {
    const held = this.#held;
    if (held === undefined) return response;
    this.#held = undefined;
    watchBody(response, held);
    return response;
  }

  /** The call lets the answer it holds go (a retry goes, or the call fails): its slot comes back. */
  #letGo(): void {
    const held = this.#held;
    this.#held = undefined;
    held?.end();
  }

  /** What the answer teaches the report and the breaker; then step 4, the retry plan. */
  #learned(outcome: Outcome, probe: boolean): Response | Promise<Response> {
    const call = this.#call;
    const { response, info, error } = outcome;
    const pushback = outcome.pushback === true;
    if (response) {
      this.#host.report.response(call.ctx, response.status, info, pushback);
      this.#learnKeys(response);
    }
    const aborted = call.signal?.aborted === true;
    const breaker = this.#host.breaker;
    if (breaker) {
      breaker.record(healthOf(response?.status, error, aborted, pushback, info), outcome.at, probe);
    }
    if (error !== undefined && aborted) throw abortReason(call.signal as AbortSignal);
    // 4. The retry plan: another attempt, or the end of the call. The default rule never retries
    // a success or a redirect: no plan to build.
    if (response && response.status < 400 && call.shouldRetry === defaultShouldRetry) {
      return this.#handOver(response);
    }
    return this.#next(outcome);
  }

  /**
   * Marks the host as honouring idempotency keys when this answer shows it does, unless the
   * caller declared either way.
   */
  #learnKeys(response: Response): void {
    const host = this.#host;
    const key = this.#req.key;
    const idem = host.policy.idempotency;
    if (host.keysHonoured || key === undefined || idem === undefined || idem.honoured !== undefined)
      return;
    if (answerHonoursKey(response.headers, idem.header, key)) host.keysHonoured = true;
  }

  /** Step 4 and 5 when a plan is needed: the plan, the wait, and the next round. */
  async #next(outcome: Outcome): Promise<Response> {
    this.#host.between++;
    try {
      let next: Step<RetryPlan & { retry: true }>;
      try {
        next = await this.#plan(outcome);
      } catch (error) {
        this.#letGo();
        throw error;
      }
      if ('end' in next) return this.#handOver(next.end);
      // Another attempt goes: this answer's slot comes back before the next is asked for (its body
      // is let go when that attempt starts; if none can, the call returns it without a slot).
      this.#letGo();
      await this.#waitForRetry(next.go);
    } finally {
      this.#host.between--;
    }
    // The next round takes its place in line (or its slot) before it returns: the host stays busy.
    return this.#round(this.#host.shared.clock.now());
  }

  /**
   * An attempt that sent nothing (the caller's `createBody` threw): the admission, its slot and
   * any probe go back, and the call rejects with `error`.
   */
  async #abandon(ticket: Ticket, probe: boolean, error: unknown): Promise<never> {
    this.#host.breaker?.release(probe);
    await this.#giveBack(ticket, this.#call);
    throw error;
  }

  /** Step 4: whether another attempt goes, and after what wait; or the end of the call. */
  async #plan(outcome: Outcome): Promise<Step<RetryPlan & { retry: true }>> {
    const call = this.#call;
    const { response, error } = outcome;
    const plan = planAfter(outcome, {
      req: this.#req,
      call:
        this.#lockoutRetries === 0
          ? call
          : { ...call, retries: call.retries + this.#lockoutRetries },
      attempts: this.#attempts,
      deadline: this.#deadline,
      policy: this.#host.policy,
      random: this.#host.shared.clock.random(),
      keysHonoured: this.#host.keysHonoured,
    });
    if (!plan.retry) {
      if (plan.reason) return { end: this.#giveUp(plan.reason, outcome) };
      if (response) return { end: response };
      throw error;
    }
    const closed = this.#host.closed(call.ctx);
    if (closed !== undefined) {
      // The attempt was on the wire at close(): it may finish, but no retry starts.
      discard(response);
      outcome.scope?.dispose();
      throw closed;
    }
    const now = this.#host.shared.clock.now();
    if (this.#host.breaker && this.#host.breaker.stateAt(now) === 'open') {
      return { end: this.#circuitOpen(this.#host.breaker.retryAt(now)) };
    }
    // The retry budget, for the retries the client decides on: one the server asked for with its
    // own time (Retry-After, a reset), waited for in the host's hold, is the server's pacing, not a
    // storm; so is one that waits for the probes of a lockout (the host gets one request per
    // probe, however many calls wait: see `rules/pace.ts`). A store that fails cannot grant a
    // retry: the call ends with what it has.
    const lockout = plan.hold && outcome.lockout === true;
    const paced = lockout || (plan.hold && plan.source === 'retry-after');
    const granted = paced || (await this.#host.store.retry(now, call.ctx));
    if (granted === 'store-error') return { end: this.#giveUp('store-error', outcome) };
    if (!granted) {
      this.#host.report.budgetExhausted(call.ctx, this.#attempts);
      const refusal = new RetryBudgetExhaustedError(this.#attempts, call.ctx, error);
      return { end: this.#giveUp('budget-exhausted', outcome, refusal) };
    }
    if (lockout) this.#lockoutRetries++;
    this.#host.report.retry(call.ctx, () => ({
      attempt: this.#attempts + 1,
      delayMs: plan.delayMs,
      delaySource: plan.source,
      status: response?.status,
      error,
    }));
    return { go: plan };
  }

  /**
   * Step 5: the wait before the retry. After a pushback the host is held until the server's time,
   * and the retry waits for that hold at the front of the queue, so it goes first when the hold
   * lifts (a separate sleep would wake on its own jitter, after the line had used the quota).
   * Otherwise a sleep of the backoff.
   */
  async #waitForRetry(plan: RetryPlan & { retry: true }): Promise<void> {
    if (plan.hold) return;
    const call = this.#call;
    try {
      const closed = this.#host.closed(call.ctx);
      if (closed !== undefined) throw closed;
      await this.#host.sleepers.sleep(plan.delayMs, call.signal, call.ctx);
    } catch (stopped) {
      discard(this.#last?.response);
      this.#last?.scope?.dispose();
      throw stopped;
    }
  }

  /** Gives back an admission that will not be used, and its slot. */
  async #giveBack(ticket: Ticket, call: Call): Promise<void> {
    try {
      const settled = this.#host.store.settle(ticket, {}, call.ctx);
      if (settled) await settled;
    } finally {
      this.#host.admission.release();
    }
  }

  /**
   * Stops retrying: reports `give-up` and resolves to the last response, or rejects with `refusal`
   * (when the client refused) or the last error.
   */
  #giveUp(reason: GiveUpReason, last: Outcome, refusal?: unknown): Response {
    this.#host.report.giveUp(this.#call.ctx, reason, this.#attempts, last);
    if (last.response) return last.response;
    throw refusal ?? last.error;
  }

  /** Refuses a call (or its retry) because the circuit is open. */
  #circuitOpen(retryAt: number): Response {
    const call = this.#call;
    const last = this.#last;
    this.#host.report.circuitOpen(call.ctx, retryAt);
    const refusal = new CircuitOpenError(
      retryAt,
      this.#host.shared.clock.now(),
      call.ctx,
      last?.error,
    );
    if (!last) throw refusal;
    return this.#giveUp('circuit-open', last, refusal);
  }
}

/** Lets a response we will not return release its connection. */
function discard(response: Response | undefined): void {
  if (response?.body && !response.bodyUsed) response.body.cancel().catch(noop);
}

function refusalReason(error: unknown): GiveUpReason {
  if (isQueueFullError(error)) return 'queue-full';
  if (isQueueTimeoutError(error)) return 'queue-timeout';
  if (isRateLimitError(error)) return 'hold-too-long';
  if (isCostTooHighError(error)) return 'cost-too-high';
  return 'deadline';
}

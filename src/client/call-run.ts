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
  type RequestContext,
  RetryBudgetExhaustedError,
} from '../errors.js';
import type { Admission } from './admission.js';
import { healthOf } from './answer.js';
import { type Call, type Outcome, sendAttempt } from './attempt.js';
import type { HostConfig } from './host-config.js';
import type { HostReport } from './host-report.js';
import type { HostStore } from './host-store.js';
import type { PipelineShared } from './pipeline.js';
import type { PreparedRequest } from './request.js';
import { planAfter, type RetryPlan } from './retry/retry-plan.js';
import { defaultShouldRetry } from './retry/retry-rule.js';
import type { CircuitBreaker } from './rules/breaker.js';
import type { Ticket } from './rules/contract.js';
import type { Sleepers } from './sleepers.js';
import type { MaybePromise } from './store.js';
import type { GiveUpReason } from './types.js';

/** The parts of a host a call runs through. */
export interface HostParts {
  shared: PipelineShared;
  policy: HostConfig;
  admission: Admission;
  breaker: CircuitBreaker | undefined;
  store: HostStore;
  report: HostReport;
  sleepers: Sleepers;
  /** The error a call gets once the host is closed; `undefined` while it is open. */
  closed(ctx: RequestContext): unknown;
}

/** The answer of a step: go on (with a value), or end the call with a response. */
type Step<T> = { go: T } | { end: Response };

const noop = () => {};

/** See the module comment. */
export class CallRun {
  /** Attempts made so far. */
  #attempts = 0;
  /** The last attempt's outcome. */
  #last: Outcome | undefined;

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

  /** Breaker, admission, attempt, retry plan; again while the plan says so. */
  async run(start: number): Promise<Response> {
    const { clock } = this.#host.shared;
    for (;;) {
      const now = this.#attempts === 0 ? start : clock.now();
      // 1. Circuit breaker: fail fast while open; a probe when half-open.
      const permit = this.#host.breaker?.acquire(now) ?? { allowed: true, probe: false };
      if (!permit.allowed) return this.#circuitOpen(permit.retryAt);
      // 2. Admission: the queue, the concurrency cap and the host's rules (at once when the host
      // has room and the store answers synchronously).
      let admitted = this.#admit(permit.probe, now);
      if ('then' in admitted) admitted = await admitted;
      if ('end' in admitted) return admitted.end;
      // 3. The attempt, and what it teaches (the rules, the breaker, the counters).
      const [ticket, probe] = admitted.go;
      const outcome = await this.#attempt(ticket, probe);
      if (outcome.error !== undefined && this.#call.signal?.aborted) {
        throw abortReason(this.#call.signal);
      }
      // 4. The retry plan: another attempt, or the end of the call. The default rule never
      // retries a success or a redirect: no plan to build.
      const { response } = outcome;
      if (response && response.status < 400 && this.#call.shouldRetry === defaultShouldRetry) {
        return response;
      }
      const next = await this.#plan(outcome);
      if ('end' in next) return next.end;
      await this.#waitForRetry(next.go);
    }
  }

  /** Step 2: a place in the host's queue and the rules' yes; or the end of the call. */
  #admit(probe: boolean, now: number): Step<[Ticket, boolean]> | Promise<Step<[Ticket, boolean]>> {
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
    const breaker = this.#host.breaker;
    // A store that answers synchronously (memory) admits without a turn of the event loop.
    return 'then' in admitted ||
      this.#host.closed(call.ctx) !== undefined ||
      (breaker && !probe && !breaker.closed)
      ? this.#admitted(admitted, probe)
      : { go: [admitted, probe] };
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
   * Step 3: one attempt. The previous response is let go only now: until another attempt goes, it
   * is what the call resolves to, with its body still readable.
   */
  async #attempt(ticket: Ticket, probe: boolean): Promise<Outcome> {
    const req = this.#req;
    const call = this.#call;
    if (this.#last) {
      discard(this.#last.response);
      this.#last.scope?.dispose();
    }
    this.#attempts++;
    this.#host.report.counters.attempts++;
    let outcome: Outcome;
    try {
      outcome = await sendAttempt(this.#host.shared.clock, req, call);
    } catch (error) {
      // Not the fetch (its failures are outcomes): the caller's `createBody` threw. Nothing was
      // sent; the admission, its slot and any probe go back.
      this.#host.breaker?.release(probe);
      await this.#giveBack(ticket, call);
      throw error;
    }
    this.#last = outcome;
    try {
      const settled = this.#host.store.settle(ticket, outcome, call.ctx, outcome.at);
      if (settled) await settled;
    } finally {
      // Whatever the store did, the attempt is over: its slot comes back.
      this.#host.admission.release();
    }
    const { response, info, error } = outcome;
    const pushback = outcome.pushback === true;
    if (response) this.#host.report.response(call.ctx, response.status, info, pushback);
    const aborted = call.signal?.aborted === true;
    const health = healthOf(response?.status, error, aborted, pushback);
    this.#host.breaker?.record(health, outcome.at, probe);
    return outcome;
  }

  /** Step 4: whether another attempt goes, and after what wait; or the end of the call. */
  async #plan(outcome: Outcome): Promise<Step<RetryPlan & { retry: true }>> {
    const call = this.#call;
    const { response, error } = outcome;
    const plan = planAfter(outcome, {
      req: this.#req,
      call: this.#call,
      attempts: this.#attempts,
      deadline: this.#deadline,
      policy: this.#host.policy,
      random: this.#host.shared.clock.random(),
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
    // storm. A store that fails cannot grant a retry: the call ends with what it has.
    const serverPaced = plan.hold && plan.source === 'retry-after';
    const granted = serverPaced || (await this.#host.store.retry(now, call.ctx));
    if (granted === 'store-error') return { end: this.#giveUp('store-error', outcome) };
    if (!granted) {
      this.#host.report.budgetExhausted(call.ctx, this.#attempts);
      const refusal = new RetryBudgetExhaustedError(this.#attempts, call.ctx, error);
      return { end: this.#giveUp('budget-exhausted', outcome, refusal) };
    }
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

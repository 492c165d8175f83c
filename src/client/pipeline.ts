/**
 * The pipeline of one host: where the policies are composed, in this order, for every call.
 *
 * ```
 * call ─► circuit breaker ─► admission queue ──────────────────────► fetch ─► learn ─► retry?
 *         (fail fast when     (concurrency cap, bounded FIFO,                  (headers    │
 *          open; probes when   holds after 429/503, cold start,                 into the   │
 *          half-open)          learned limits, client bucket)                   state,     │
 *            ▲                                                                  breaker    │
 *            │                                                                  outcome)   │
 *            └──── wait (the host's hold after a pushback, ◄── budget ◄──────────────────┘
 *                          else a full-jitter backoff)          (retries ≤ ratio ×
 *                                                                requests + floor)
 * ```
 *
 * A call resolves to the last response it got, whatever its status, and rejects only where fetch
 * would (a network error, an abort) or where the client refused to send (typed errors).
 *
 * @module
 */
import { abortReason, type Clock } from '../clock.js';
import {
  CircuitOpenError,
  isClientClosedError,
  isLimitedClientError,
  isQueueFullError,
  isQueueTimeoutError,
  isRateLimitError,
  isTimeoutError,
  type RequestContext,
  RetryBudgetExhaustedError,
  TimeoutError,
} from '../errors.js';
import { Admission } from './admission.js';
import { type Call, type Outcome, readCall, sendAttempt } from './attempt.js';
import type { Emitter } from './events.js';
import type { HostPolicy } from './host-policy.js';
import {
  type AdmitResult,
  admitTransaction,
  type HostState,
  readTransaction,
  retryTransaction,
  settleTransaction,
} from './host-state.js';
import type { KeepAlive } from './keep-alive.js';
import { isTransientNetworkError } from './network-errors.js';
import { DEFAULTS } from './options.js';
import { CircuitBreaker } from './policies/circuit-breaker.js';
import { isPushback, type LimitsTicket } from './policies/learned-limits.js';
import { defaultShouldRetry, IDEMPOTENT_METHODS } from './policies/retry-rule.js';
import type { PreparedRequest } from './request.js';
import { planRetry } from './retry-plan.js';
import { AbortScope } from './signals.js';
import { type Counters, hostStats, newCounters } from './stats.js';
import type { MaybePromise, StateStore } from './store.js';
import type {
  ClientEvents,
  EventBase,
  GiveUpReason,
  HostStats,
  LimitedRequestInit,
  StoreOperation,
} from './types.js';

/** What every pipeline shares with its client. */
export interface PipelineShared {
  clock: Clock;
  store: StateStore;
  events: Emitter<ClientEvents>;
  fetch: typeof fetch;
  keepAlive: KeepAlive;
}

const noop = () => {};

/** The pipeline of one host; see the module comment. */
export class HostPipeline {
  readonly counters: Counters = newCounters();
  private readonly admission: Admission;
  private readonly breaker: CircuitBreaker | undefined;
  private readonly key: string;
  /** Calls sleeping between attempts, with what to tell them when the host closes. */
  private readonly sleepers = new Map<AbortScope, RequestContext>();
  private lastState: HostState | undefined;
  /** Set by {@link close}: the error calls get from then on. */
  private closed: ((ctx: RequestContext) => unknown) | undefined;

  /**
   * @param partition the host's partition this pipeline runs (see the `partition` option), or
   *   `undefined` for the host's own.
   */
  constructor(
    readonly origin: string,
    readonly policy: HostPolicy,
    private readonly shared: PipelineShared,
    readonly partition?: string,
  ) {
    this.key =
      partition === undefined
        ? `limited-client:${origin}`
        : `limited-client:${origin}#${partition}`;
    const { store, clock, events } = shared;
    const config = policy.state;
    this.breaker = policy.breaker
      ? new CircuitBreaker(policy.breaker, (from, to) => {
          if (events.has('circuit-state')) {
            events.emit(
              'circuit-state',
              partition === undefined ? { origin, from, to } : { origin, partition, from, to },
            );
          }
        })
      : undefined;
    this.admission = new Admission({
      clock,
      concurrency: policy.concurrency,
      maxQueue: policy.maxQueue,
      queueTimeoutMs: policy.queueTimeoutMs,
      tryAdmit:
        config.limits || config.bucket || config.budget
          ? (cost, first, now, flightTtlMs) =>
              store.update<HostState, AdmitResult>(
                this.key,
                admitTransaction(config, cost, first, now, flightTtlMs),
                policy.stateTtlMs,
              )
          : () => ADMITTED, // nothing shared to consult
      giveBack: (ticket, cost, ctx) => this.settle(ticket, cost, {}, ctx),
      onQueued: (ctx, queueLength) => {
        this.counters.queued++;
        if (events.has('queued')) events.emit('queued', { ...this.base(ctx), queueLength });
      },
      onHeld: (ctx, reason, waitMs, policyName) => {
        this.counters.held++;
        if (events.has('held')) {
          events.emit('held', { ...this.base(ctx), reason, waitMs, policy: policyName });
        }
      },
      keepAlive: () => shared.keepAlive.acquire(),
    });
  }

  /** Whether the host has work in flight or waiting (then it is not evicted). */
  get busy(): boolean {
    return this.admission.busy || this.sleepers.size > 0;
  }

  /**
   * Runs a call through the pipeline.
   * @param now the clock's time when the call arrived (read once per call, not per step).
   */
  execute(
    req: PreparedRequest,
    init: LimitedRequestInit | undefined,
    now = this.shared.clock.now(),
  ): Promise<Response> {
    let call: Call;
    try {
      call = readCall(req, init, this.policy);
    } catch (error) {
      return Promise.reject(error);
    }
    this.counters.requests++;
    if (!Number.isFinite(call.timeoutMs)) return this.run(req, call, Number.POSITIVE_INFINITY, now);
    return this.runWithin(req, call, now);
  }

  /** {@link run} under the call's overall timeout. */
  private async runWithin(req: PreparedRequest, call: Call, now: number): Promise<Response> {
    const ms = call.timeoutMs;
    const scope = new AbortScope(call.signal).timeout(
      this.shared.clock,
      ms,
      () => new TimeoutError(ms, 'total', call.ctx),
    );
    call.signal = scope.signal;
    try {
      const response = await this.run(req, call, now + ms, now);
      // The caller's signal must still reach the body being read; the timeout is over.
      scope.dispose(true);
      return response;
    } catch (error) {
      scope.dispose();
      throw error;
    }
  }

  private async run(
    req: PreparedRequest,
    call: Call,
    deadline: number,
    start: number,
  ): Promise<Response> {
    const { clock, events } = this.shared;
    const breaker = this.breaker;
    const idempotent = req.hasKey || IDEMPOTENT_METHODS.has(req.method);
    let last: Outcome | undefined;
    for (let attempt = 1; ; attempt++) {
      const now = attempt === 1 ? start : clock.now();
      // 1. Circuit breaker: fail fast while open.
      let probe = false;
      if (breaker) {
        const permit = breaker.acquire(now);
        if (!permit.allowed) return this.circuitOpen(call, attempt - 1, last, permit.retryAt);
        probe = permit.probe;
      }
      // 2. Admission: concurrency, queue, holds, learned limits, client bucket. A store that
      // answers synchronously (memory) admits without a turn of the event loop.
      let ticket: LimitsTicket;
      try {
        const admitted = this.admission.admit({
          cost: call.cost,
          firstAttempt: attempt === 1,
          priority: attempt > 1,
          signal: call.signal,
          maxWaitMs: this.policy.maxRetryAfterMs,
          ctx: call.ctx,
          now,
          // A live attempt is answered or times out within its timeout; past it and a second
          // more, its request is taken as lost (a process that died with it out).
          flightTtlMs: Number.isFinite(call.attemptTimeoutMs)
            ? call.attemptTimeoutMs + 1000
            : undefined,
        });
        ticket = isPromiseLike(admitted) ? await admitted : admitted;
      } catch (error) {
        breaker?.release(probe);
        if (last?.response && isLimitedClientError(error) && !isClientClosedError(error)) {
          return this.giveUp(refusalReason(error), call, attempt - 1, last);
        }
        discard(last?.response);
        throw error;
      }
      const closedWhileAdmitted = this.closedError(call.ctx);
      if (closedWhileAdmitted !== undefined) {
        // Closed while the store answered: nothing is sent after close().
        breaker?.release(probe);
        await this.giveBack(ticket, call);
        discard(last?.response);
        throw closedWhileAdmitted;
      }
      if (breaker && !probe && !breaker.closed && breaker.stateAt(clock.now()) !== 'closed') {
        // The breaker opened while this request waited in line: it may still go as a probe.
        const permit = breaker.acquire(clock.now());
        if (!permit.allowed) {
          await this.giveBack(ticket, call);
          return this.circuitOpen(call, attempt - 1, last, permit.retryAt);
        }
        probe = true;
      }
      // 3. Send, and learn from the answer. The previous response is let go only now: until
      // another attempt goes, it is what the call resolves to, with its body still readable.
      if (last) {
        discard(last.response);
        last.scope?.dispose();
      }
      const outcome = await this.attempt(req, call, ticket, probe);
      last = outcome;
      if (outcome.error !== undefined && call.signal?.aborted) throw abortReason(call.signal);
      // 4. Worth another attempt, and may it be made?
      const { response, error, info } = outcome;
      // The default rule never retries a success or a redirect: no plan to build.
      if (response && response.status < 400 && call.shouldRetry === defaultShouldRetry) {
        return response;
      }
      const plan = planRetry({
        response,
        error,
        info,
        context: {
          method: req.method,
          url: req.url,
          attempt,
          response,
          error,
          retryAfterMs: info?.retryAfterMs,
          idempotent,
          hasIdempotencyKey: req.hasKey,
          networkError: error !== undefined && isTransientNetworkError(error),
        },
        shouldRetry: call.shouldRetry,
        attempt,
        retries: call.retries,
        replayable: req.replayable || call.createBody !== undefined,
        maxRetryAfterMs: this.policy.maxRetryAfterMs,
        deadline,
        now: outcome.at,
        random: clock.random(),
        backoff: this.policy.retry,
        jitter: this.policy.state.limits?.jitter ?? DEFAULTS.waitJitter,
        holdUntil: outcome.holdUntil,
      });
      if (!plan.retry) {
        if (plan.reason) return this.giveUp(plan.reason, call, attempt, outcome);
        if (response) return response;
        throw error;
      }
      const closedWhileSent = this.closedError(call.ctx);
      if (closedWhileSent !== undefined) {
        // The attempt was on the wire at close(): it may finish, but no retry starts.
        discard(response);
        outcome.scope?.dispose();
        throw closedWhileSent;
      }
      if (breaker && breaker.stateAt(clock.now()) === 'open') {
        return this.circuitOpen(call, attempt, outcome, breaker.retryAt(clock.now()));
      }
      // 5. The retry budget. A store that fails cannot grant a retry: the call ends with what it has.
      let allowed: boolean;
      try {
        allowed = await this.shared.store.update<HostState, boolean>(
          this.key,
          retryTransaction(this.policy.state, clock.now()),
          this.policy.stateTtlMs,
        );
      } catch (storeError) {
        this.storeFailed('retry-budget', call.ctx, storeError);
        return this.giveUp('store-error', call, attempt, outcome);
      }
      if (!allowed) {
        this.counters.budgetExhausted++;
        if (events.has('budget-exhausted')) {
          events.emit('budget-exhausted', { ...this.base(call.ctx), attempt });
        }
        const refusal = new RetryBudgetExhaustedError(attempt, call.ctx, error);
        return this.giveUp('budget-exhausted', call, attempt, outcome, refusal);
      }
      // 6. Wait, then go round again.
      this.counters.retries++;
      if (events.has('retry')) {
        events.emit('retry', {
          ...this.base(call.ctx),
          attempt: attempt + 1,
          delayMs: plan.delayMs,
          delaySource: plan.source,
          status: response?.status,
          error,
        });
      }
      // After a pushback the host is held until the server's time: the retry waits for that hold
      // at the front of the line, so it goes first when the hold lifts (a separate sleep would
      // wake on its own jitter, after the line had already used the quota).
      if (!plan.hold) {
        try {
          await this.sleep(plan.delayMs, call.signal, call.ctx);
        } catch (stopped) {
          discard(response);
          outcome.scope?.dispose();
          throw stopped;
        }
      }
    }
  }

  /** One attempt: fetch, then learn from the answer (shared state, breaker, counters). */
  private async attempt(
    req: PreparedRequest,
    call: Call,
    ticket: LimitsTicket,
    probe: boolean,
  ): Promise<Outcome> {
    this.counters.attempts++;
    let outcome: Outcome;
    try {
      outcome = await sendAttempt(this.shared.fetch, this.shared.clock, req, call);
    } catch (error) {
      // Not the fetch (its failures are outcomes): the caller's `createBody` threw. Nothing was
      // sent; the admission, its slot and any probe go back.
      this.breaker?.release(probe);
      await this.giveBack(ticket, call);
      throw error;
    }
    const now = outcome.at;
    try {
      const settled = this.settle(ticket, call.cost, outcome, call.ctx, now);
      if (settled) await settled;
    } finally {
      // Whatever the store did, the attempt is over: its slot comes back.
      this.admission.release();
    }
    this.record(outcome, call, now, probe);
    return outcome;
  }

  /** Gives back an admission that will not be used, and its slot. */
  private async giveBack(ticket: LimitsTicket, call: Call): Promise<void> {
    try {
      const settled = this.settle(ticket, call.cost, {}, call.ctx);
      if (settled) await settled;
    } finally {
      this.admission.release();
    }
  }

  /**
   * Takes an attempt's outcome into the shared state, and records the host's hold after it on the
   * outcome. Never throws nor rejects: the response is already the caller's, so a store that fails
   * here is reported (`store-error`) and otherwise ignored. The request then stays counted in
   * flight in the shared state until it ages out there (see `learned-limits.ts`); the slot in this
   * process is given back by the caller either way.
   */
  private settle(
    ticket: LimitsTicket,
    cost: number,
    outcome: Pick<Outcome, 'response' | 'info' | 'holdUntil'>,
    ctx: RequestContext,
    now = this.shared.clock.now(),
  ): Promise<void> | undefined {
    if (!this.policy.state.limits) return;
    let result: MaybePromise<number>;
    try {
      result = this.shared.store.update<HostState, number>(
        this.key,
        settleTransaction(this.policy.state, {
          seq: ticket.seq,
          probed: ticket.probed,
          at: ticket.at,
          expires: ticket.expires,
          cost,
          status: outcome.response?.status,
          info: outcome.info,
          now,
          random: this.shared.clock.random(),
        }),
        this.policy.stateTtlMs,
      );
    } catch (error) {
      this.storeFailed('settle', ctx, error);
      return;
    }
    if (isPromiseLike(result)) {
      return Promise.resolve(result).then(
        (holdUntil) => {
          outcome.holdUntil = holdUntil;
        },
        (error) => this.storeFailed('settle', ctx, error),
      );
    }
    outcome.holdUntil = result;
  }

  /** Counts and reports a store failure the call survived. */
  private storeFailed(operation: StoreOperation, ctx: RequestContext, error: unknown): void {
    this.counters.storeErrors++;
    if (this.shared.events.has('store-error')) {
      this.shared.events.emit('store-error', { ...this.base(ctx), operation, error });
    }
  }

  /** Breaker outcome, counters and the `rate-limited` event. */
  private record(outcome: Outcome, call: Call, now: number, probe: boolean): void {
    const { response, error, info } = outcome;
    if (response) {
      this.counters.responses++;
      const status = response.status;
      const pushback = isPushback(status, info);
      if (pushback) this.counters.rateLimited++;
      if (pushback && this.shared.events.has('rate-limited')) {
        this.shared.events.emit('rate-limited', {
          ...this.base(call.ctx),
          status,
          retryAfterMs: info?.retryAfterMs,
          policy: info?.remaining === 0 ? info.policy : undefined,
        });
      }
    }
    if (!this.breaker) return;
    if (response) {
      if (BREAKER_FAILURE_STATUSES.has(response.status)) this.breaker.failure(now, probe);
      else this.breaker.success(now, probe);
    } else if (!call.signal?.aborted && isHostFailure(error)) {
      this.breaker.failure(now, probe);
    } else {
      // An abort, or an error that says nothing about the host (a caller's mistake fetch refused
      // before sending, a permanent DNS failure): no verdict, and a probe slot back.
      this.breaker.release(probe);
    }
  }

  /**
   * Stops retrying: emits `give-up` and resolves to the last response, or rejects with `refusal`
   * (when the client refused) or the last error.
   */
  private giveUp(
    reason: GiveUpReason,
    call: Call,
    attempts: number,
    outcome: Outcome,
    refusal?: unknown,
  ): Response {
    this.counters.gaveUp++;
    if (this.shared.events.has('give-up')) {
      this.shared.events.emit('give-up', {
        ...this.base(call.ctx),
        reason,
        attempts,
        status: outcome.response?.status,
        error: outcome.error,
      });
    }
    if (outcome.response) return outcome.response;
    throw refusal ?? outcome.error;
  }

  /** Refuses a call (or its retry) because the circuit is open. */
  private circuitOpen(
    call: Call,
    attempts: number,
    last: Outcome | undefined,
    retryAt: number,
  ): Response {
    const now = this.shared.clock.now();
    this.counters.circuitOpen++;
    if (this.shared.events.has('circuit-open')) {
      this.shared.events.emit('circuit-open', { ...this.base(call.ctx), retryAt });
    }
    const refusal = new CircuitOpenError(retryAt, now, call.ctx, last?.error);
    if (!last) throw refusal;
    return this.giveUp('circuit-open', call, attempts, last, refusal);
  }

  /** The error a call gets once the host is closed; `undefined` while it is open. */
  private closedError(ctx: RequestContext): unknown {
    return this.closed?.(ctx);
  }

  private async sleep(ms: number, signal: AbortSignal | undefined, ctx: RequestContext) {
    const closed = this.closedError(ctx);
    if (closed !== undefined) throw closed;
    if (ms <= 0 && !signal?.aborted) return;
    const scope = new AbortScope(signal);
    this.sleepers.set(scope, ctx);
    const release = this.shared.keepAlive.acquire();
    try {
      await this.shared.clock.sleep(ms, scope.signal);
    } finally {
      release();
      this.sleepers.delete(scope);
      scope.dispose(false);
    }
  }

  private base(ctx: RequestContext): EventBase {
    const base: EventBase = {
      origin: this.origin,
      method: ctx.method ?? 'GET',
      url: ctx.url ?? '',
    };
    if (this.partition !== undefined) base.partition = this.partition;
    return base;
  }

  /**
   * Stops the host: every wait (a backoff sleep, a hold, the queue) rejects with `error`, and no
   * attempt starts from then on. An attempt already sent may finish: its call resolves to its
   * response when that is final, and rejects with `error` when it would need another attempt.
   */
  close(error: (ctx: RequestContext) => unknown): void {
    this.closed = error;
    this.admission.close(error);
    for (const [scope, ctx] of this.sleepers) scope.abort(error(ctx));
  }

  /**
   * The host's statistics. Synchronous: with a store that answers asynchronously, the shared part
   * (holds, policies, budget) is as of the previous call, and this call refreshes it. Read-only
   * with a store that has `get` (the default one does): looking does not renew the state's expiry.
   */
  stats(): HostStats {
    const { clock, store } = this.shared;
    const now = clock.now();
    try {
      const read: MaybePromise<HostState | undefined> = store.get
        ? store.get<HostState>(this.key)
        : store.update<HostState, HostState | undefined>(
            this.key,
            readTransaction(),
            this.policy.stateTtlMs,
          );
      if (isPromiseLike(read)) {
        Promise.resolve(read).then((state) => {
          this.lastState = state && structuredClone(state);
        }, noop);
      } else {
        this.lastState = read && structuredClone(read);
      }
    } catch {
      // The shared part as of the last read: stats() never throws for the store.
    }
    return hostStats(
      this.origin,
      this.partition,
      this.counters,
      this.lastState,
      this.policy.state,
      now,
      {
        inFlight: this.admission.inFlight,
        queueLength: this.admission.queueLength,
        circuit: this.breaker ? this.breaker.stateAt(now) : 'closed',
      },
    );
  }
}

/** The admission of a host that shares no state (learning, client rate and budget all off). */
const ADMITTED: AdmitResult = Object.freeze({ ok: true, seq: 0, probed: [] }) as AdmitResult;

/** Statuses that count against the circuit breaker: the server failing, not refusing. */
const BREAKER_FAILURE_STATUSES: ReadonlySet<number> = new Set([500, 502, 503, 504]);

/** Errors that count against the breaker: the host did not answer (network, attempt timeout). */
function isHostFailure(error: unknown): boolean {
  return isTransientNetworkError(error) || (isTimeoutError(error) && error.scope === 'attempt');
}

function isPromiseLike<T>(value: MaybePromise<T>): value is Promise<T> {
  return typeof (value as { then?: unknown } | undefined)?.then === 'function';
}

/** Lets a response we will not return release its connection. */
function discard(response: Response | undefined): void {
  if (response?.body && !response.bodyUsed) response.body.cancel().catch(noop);
}

function refusalReason(error: unknown): GiveUpReason {
  if (isQueueFullError(error)) return 'queue-full';
  if (isQueueTimeoutError(error)) return 'queue-timeout';
  if (isRateLimitError(error)) return 'hold-too-long';
  return 'deadline';
}

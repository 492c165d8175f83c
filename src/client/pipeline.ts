/**
 * The pipeline of one host: where the parts a call runs through are made (the breaker, the
 * admission queue over the host's rules, the store, the open bodies) and where a call starts. The
 * order of a call's steps is drawn once, in `docs/how-it-works.md` ("How a request flows"); the
 * steps run in `call-run.ts`, the host's rules in the order of `rules/registry.ts`.
 *
 * A call resolves to the last response it got, whatever its status, and rejects only where fetch
 * would (a network error, an abort) or where the client refused to send (typed errors). The slot
 * an attempt took in admission lasts until its response's body ends, when the call returns it
 * (`open-bodies.ts`); an answer the call retries gives it back before the wait.
 *
 * @module
 */
import { type RequestContext, TimeoutError } from '../errors.js';
import { Admission } from './admission.js';
import { type Call, readCall } from './attempt.js';
import { RouteCosts } from './body/route-costs.js';
import { CallRun } from './call-run.js';
import type { HostConfig } from './host-config.js';
import type { HostParts, OpenFlight, PipelineShared } from './host-parts.js';
import { HostReport } from './host-report.js';
import { HostStore } from './host-store.js';
import { OpenBodies } from './open-bodies.js';
import type { PreparedRequest } from './request.js';
import { CircuitBreaker } from './rules/breaker.js';
import { AbortScope } from './signals.js';
import { Sleepers } from './sleepers.js';
import { hostStats } from './stats.js';
import type { HostStats, LimitedRequestInit } from './types.js';

/** The pipeline of one host; see the module comment. */
export class HostPipeline {
  readonly report: HostReport;
  /** What a call's run uses (see `call-run.ts`). */
  readonly #parts: HostParts;
  /** Set by {@link close}: the error calls get from then on. */
  #closedWith: ((ctx: RequestContext) => unknown) | undefined;

  readonly #shared: PipelineShared;
  /** What each route costs in points, learned from answers' bodies (`body/route-costs.ts`). */
  readonly #costs = new RouteCosts();

  /**
   * @param partition the host's partition this pipeline runs (see the `partition` option), or
   *   `undefined` for the host's own.
   */
  constructor(
    readonly origin: string,
    readonly policy: HostConfig,
    shared: PipelineShared,
    readonly partition?: string,
  ) {
    this.#shared = shared;
    const report = new HostReport(shared.events, origin, partition);
    this.report = report;
    const store = new HostStore(shared, policy, report, origin, partition);
    const admission = new Admission({
      clock: shared.clock,
      concurrency: policy.concurrency,
      maxQueue: policy.maxQueue,
      queueTimeoutMs: policy.queueTimeoutMs,
      tryAdmit: (cost, first, now, ttlMs) => store.admit(cost, first, now, ttlMs),
      giveBack: (ticket, ctx) => store.settle(ticket, {}, ctx),
      onQueued: (ctx, queueLength) => report.queued(ctx, queueLength),
      onHeld: (ctx, reason, waitMs, name) => report.held(ctx, reason, waitMs, name),
      keepAlive: () => shared.keepAlive.acquire(),
      reasons: policy.ruleSet,
    });
    this.#parts = {
      shared,
      policy,
      report,
      store,
      sleepers: new Sleepers(shared.clock, shared.keepAlive),
      // A body's end ends its flight where its answer kept it open, then gives the slot back to the
      // cap: the line it lets move then reads the slot free in the shared state too.
      bodies: new OpenBodies(shared.clock, (flight: OpenFlight | undefined) => {
        const ended = flight && store.endBody(flight.ticket, flight.ctx);
        if (ended) ended.then(() => admission.release());
        else admission.release();
      }),
      between: 0,
      breaker: policy.breaker
        ? new CircuitBreaker(policy.breaker, (from, to) => report.circuitState(from, to))
        : undefined,
      admission,
      closed: (ctx) => this.#closedWith?.(ctx),
      keysHonoured: policy.idempotency?.honoured === true,
    };
  }

  /** The counters behind `stats()`. */
  get counters() {
    return this.report.counters;
  }

  /**
   * Whether the host has a call under way (then it is not evicted): in line, holding a slot,
   * asleep before a retry, or between an attempt and its retry's wait (`HostParts.between`), where
   * a call holds none of the others for a few turns and evicting its pipeline would end it with
   * `ClientClosedError` although the client is open. From the call's start to its admission the
   * call runs synchronously: nothing can evict the host in between.
   */
  get busy(): boolean {
    const parts = this.#parts;
    return parts.between > 0 || parts.admission.busy || parts.sleepers.size > 0;
  }

  /**
   * Runs a call through the pipeline.
   * @param now the clock's time when the call arrived (read once per call, not per step).
   * @param send the fetch this call's attempts go through, when not the client's.
   */
  execute(
    req: PreparedRequest,
    init: LimitedRequestInit | undefined,
    now = this.#shared.clock.now(),
    send?: typeof fetch,
  ) {
    let call: Call;
    try {
      call = readCall(req, init, this.policy, send ?? this.#shared.fetch, this.#costs);
    } catch (error) {
      return Promise.reject(error);
    }
    this.report.counters.requests++;
    const result = Number.isFinite(call.timeoutMs)
      ? this.#runWithin(req, call, now)
      : new CallRun(this.#parts, req, call, Number.POSITIVE_INFINITY).run(now);
    if (!this.report.listens('done')) return result;
    const { clock } = this.#shared;
    return this.report.done(call.ctx, result, now, () => clock.now());
  }

  /** A call's run under its overall timeout. */
  async #runWithin(req: PreparedRequest, call: Call, now: number): Promise<Response> {
    const ms = call.timeoutMs;
    const scope = new AbortScope(call.signal).timeout(
      this.#shared.clock,
      ms,
      () => new TimeoutError(ms, 'total', call.ctx),
    );
    call.signal = scope.signal;
    try {
      const response = await new CallRun(this.#parts, req, call, now + ms).run(now);
      // The caller's signal must still reach the body being read; the timeout is over.
      scope.dispose(true);
      return response;
    } catch (error) {
      scope.dispose();
      throw error;
    }
  }

  /**
   * Stops the host: every wait (a backoff sleep, a hold, the queue) rejects with `error`, and no
   * attempt starts from then on. An attempt already sent may finish: its call resolves to its
   * response when that is final, and rejects with `error` when it would need another attempt.
   */
  close(error: (ctx: RequestContext) => unknown): void {
    this.#closedWith = error;
    this.#parts.admission.close(error);
    this.#parts.sleepers.wakeAll(error);
    this.#parts.bodies.close();
  }

  /**
   * The host's statistics. Synchronous: with a store that answers asynchronously, the shared part
   * (holds, policies, budget) is as of the previous call, and this call refreshes it. Read-only
   * with a store that has `get` (the default one does): looking does not renew the state's expiry.
   */
  stats(): HostStats {
    const now = this.#shared.clock.now();
    const at = this.#shared.time.at(now);
    const { admission, breaker, store } = this.#parts;
    const stats = hostStats(
      this.origin,
      this.partition,
      this.report.counters,
      store.lastState(),
      this.policy.rules,
      at,
      {
        inFlight: admission.inFlight,
        queueLength: admission.queueLength,
        circuit: breaker ? breaker.stateAt(now) : 'closed',
      },
    );
    // The hold, read on the state's time line, on the clock's.
    if (stats.holdUntil > 0) stats.holdUntil -= at - now;
    return stats;
  }
}

/**
 * The pipeline of one host: where the parts a call runs through are made (the breaker, the
 * admission queue over the host's rules, the store, the open bodies) and where a call starts. The
 * order of a call's steps is drawn once, in `docs/how-it-works.md` ("How a request flows"); the
 * steps run in `call-run.ts`, the host's rules in the order of `rules/registry.ts`.
 *
 * A host may keep many budgets (GitHub's resources, Discord's buckets): each scope its answers
 * name runs in a lane of its own (its line, its state in the store) over the parts the host shares
 * (`scopes/scope-lanes.ts`); which scope a call is in, the answers tell (`scopes/route-scopes.ts`).
 * A host whose answers name no scope has one lane, its own, and pays nothing for scopes.
 *
 * A call resolves to the last response it got, whatever its status, and rejects only where fetch
 * would (a network error, an abort) or where the client refused to send (typed errors). The slot
 * an attempt took in admission lasts until its response's body ends, when the call returns it
 * (`open-bodies.ts`); an answer the call retries gives it back before the wait.
 *
 * @module
 */

import type { RateLimitInfo } from '../../headers/types.js';
import { ClientClosedError, type RequestContext, TimeoutError } from '../../shared/errors.js';
import { RouteCosts } from '../body/route-costs.js';
import { type Call, readCall } from '../call/attempt.js';
import { CallRun } from '../call/call-run.js';
import { OpenBodies } from '../call/open-bodies.js';
import type { PreparedRequest } from '../call/request.js';
import { AbortScope } from '../call/signals.js';
import type { HostConfig } from '../options/resolve.js';
import { Admission } from '../queue/admission.js';
import { Slots } from '../queue/host-slots.js';
import { Sleepers } from '../queue/sleepers.js';
import { CircuitBreaker } from '../rules/breaker.js';
import type { AdmitResult } from '../rules/host-rules.js';
import { scopeOfAnswer } from '../scopes/answer-scope.js';
import { ImplicitScopes } from '../scopes/implicit-scopes.js';
import { RouteScopes } from '../scopes/route-scopes.js';
import { ScopeLanes } from '../scopes/scope-lanes.js';
import { SharedRoutes } from '../scopes/shared-routes.js';
import type { HostStats, LimitedRequestInit } from '../types.js';
import type {
  HostParts,
  HostWide,
  OpenFlight,
  PipelineShared,
  ScopeOutcome,
} from './host-parts.js';
import { HostReport } from './host-report.js';
import { HostStore } from './host-store.js';
import { hostStats, stateStats } from './stats.js';

/** What separates a scope's name from its host's in a store key (never in a scope's name). */
const SCOPE_SEPARATOR = '\u001f';

/** The pipeline of one host; see the module comment. */
export class HostPipeline {
  readonly report: HostReport;
  /** The host's lanes: its own, and one per scope its answers named. */
  readonly #lanes: ScopeLanes;
  /** Which scope each route was answered from; made at the first answer that names one. */
  #routes: RouteScopes | undefined;
  /** The scopes no answer names: a request's model, a route (`scopes/implicit-scopes.ts`). */
  readonly #implicit: ImplicitScopes;
  /** The routes shared with other processes through the store (learning on only). */
  readonly #sharedRoutes: SharedRoutes | undefined;
  readonly #slots: Slots;
  readonly #wide: HostWide;
  readonly #sleepers: Sleepers;
  readonly #breaker: CircuitBreaker | undefined;
  /** The host's key in the store; a scope's is this, the separator, and its name. */
  readonly #key: string;
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
    this.report = new HostReport(shared.events, origin, partition);
    this.#key = partition === undefined ? origin : `${origin}#${partition}`;
    this.#slots = new Slots(policy.concurrency);
    this.#wide = { keysHonoured: policy.idempotency?.honoured === true, holdUntil: 0 };
    this.#sleepers = new Sleepers(shared.clock, shared.keepAlive);
    this.#breaker = policy.breaker
      ? new CircuitBreaker(policy.breaker, (from, to) => this.report.circuitState(from, to))
      : undefined;
    this.#implicit = new ImplicitScopes(origin, policy.rules.learn !== undefined);
    this.#sharedRoutes =
      policy.rules.learn === undefined
        ? undefined
        : new SharedRoutes(shared.store, `${this.#key}${SCOPE_SEPARATOR}`, policy.stateTtlMs, () =>
            this.#routesOf(),
          );
    this.#lanes = new ScopeLanes(
      this.#lane(undefined),
      (scope) => this.#lane(scope),
      (lane) => {
        // Dropped idle: no call waits in it, and none can come (calls find lanes by scope).
        lane.admission.close((ctx) => new ClientClosedError(ctx));
        lane.bodies.close();
        shared.store.forget?.(lane.store.key);
      },
    );
    // What other processes learned of the host's routes (a host that names no scope has none).
    this.#sharedRoutes?.read(shared.clock.now());
  }

  readonly #closed = (ctx: RequestContext) => this.#closedWith?.(ctx);

  #routesOf(): RouteScopes {
    this.#routes ??= new RouteScopes();
    return this.#routes;
  }

  /** The parts of one lane: the host's own (`scope` undefined) or a scope's. */
  #lane(scope: string | undefined): HostParts {
    const { policy, report } = this;
    const shared = this.#shared;
    const key = scope === undefined ? this.#key : `${this.#key}${SCOPE_SEPARATOR}${scope}`;
    const store = new HostStore(shared, policy, report, key);
    const wide = this.#wide;
    const admission = new Admission({
      clock: shared.clock,
      slots: this.#slots,
      maxQueue: policy.maxQueue,
      queueTimeoutMs: policy.queueTimeoutMs,
      // A hold on the whole host (Discord's global limit) holds every lane before its own rules.
      tryAdmit: (cost, first, now, ttlMs) =>
        wide.holdUntil > now
          ? heldByHost(wide.holdUntil - now)
          : store.admit(cost, first, now, ttlMs),
      giveBack: (ticket, ctx) => store.settle(ticket, {}, ctx),
      onQueued: (ctx, queueLength) => report.queued(ctx, queueLength),
      onHeld: (ctx, reason, waitMs, name) => report.held(ctx, reason, waitMs, name),
      keepAlive: () => shared.keepAlive.acquire(),
      reasons: policy.ruleSet,
    });
    return {
      shared,
      policy,
      report,
      store,
      sleepers: this.#sleepers,
      // A body's end ends its flight where its answer kept it open, then gives the slot back to the
      // cap: the line it lets move then reads the slot free in the shared state too.
      bodies: new OpenBodies(shared.clock, (flight: OpenFlight | undefined) => {
        const ended = flight && store.endBody(flight.ticket, flight.ctx);
        if (ended) ended.then(() => admission.release());
        else admission.release();
      }),
      between: 0,
      breaker: this.#breaker,
      admission,
      closed: this.#closed,
      wide,
      scope,
      laneOfAnswer: this.#laneOfAnswer,
      laneOf: this.#laneOf,
      holdHost: this.#holdHost,
    };
  }

  /**
   * The lane that takes in an answer (see `HostParts.laneOfAnswer`): the scope it names, whose
   * route is remembered; when it names none, the call's inferred scope if the host has them; this
   * lane otherwise, or when learning is off.
   */
  readonly #laneOfAnswer = (
    lane: HostParts,
    req: PreparedRequest,
    info: RateLimitInfo,
    at: number,
  ) => {
    if (this.policy.rules.learn === undefined) return lane;
    const named = scopeOfAnswer(info);
    if (named === undefined)
      return this.#implicit.answered(req, info, at) ? this.#laneOf(req) : lane;
    const learned = this.#routesOf().learn(req.method, req.url, named);
    if (learned) this.#sharedRoutes?.add(learned);
    return this.#laneOf(req);
  };

  /**
   * A hold for the whole host after a pushback (see `HostParts.holdHost`): the server's global
   * limit, or a pushback on a route of no known scope once the host has scopes.
   */
  readonly #holdHost = (lane: HostParts, outcome: ScopeOutcome): void => {
    const hold = outcome.holdUntil ?? 0;
    if (hold <= this.#wide.holdUntil) return;
    const global = outcome.info?.global === true;
    if (global || (lane.scope === undefined && this.#lanes.size > 0)) this.#wide.holdUntil = hold;
  };

  /**
   * The lane a call runs in: the scope the server named for its route, else its inferred scope
   * (its model, its route), else the host's own.
   */
  readonly #laneOf = (req: PreparedRequest): HostParts => {
    const routes = this.#routes;
    let scope: string | undefined;
    if (routes !== undefined) {
      scope = routes.scopeOf(req.method, req.url);
      if (scope === undefined && this.#sharedRoutes !== undefined) {
        // A host with scopes, a route of none: another process may have learned it.
        this.#sharedRoutes.read(this.#shared.clock.now());
        scope = routes.scopeOf(req.method, req.url);
      }
    }
    if (scope === undefined && this.#implicit.active) scope = this.#implicit.scopeOf(req);
    return scope === undefined ? this.#lanes.own : this.#lanes.get(scope);
  };

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
    return this.#sleepers.size > 0 || this.#lanes.busy;
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
    const lane = this.#laneOf(req);
    try {
      call = readCall(req, init, this.policy, send ?? this.#shared.fetch, this.#costs, lane.scope);
    } catch (error) {
      return Promise.reject(error);
    }
    this.report.counters.requests++;
    const result = Number.isFinite(call.timeoutMs)
      ? this.#runWithin(lane, req, call, now)
      : new CallRun(lane, req, call, Number.POSITIVE_INFINITY).run(now);
    if (!this.report.listens('done')) return result;
    const { clock } = this.#shared;
    return this.report.done(call.ctx, result, now, () => clock.now());
  }

  /** A call's run under its overall timeout. */
  async #runWithin(
    lane: HostParts,
    req: PreparedRequest,
    call: Call,
    now: number,
  ): Promise<Response> {
    const ms = call.timeoutMs;
    const scope = new AbortScope(call.signal).timeout(
      this.#shared.clock,
      ms,
      () => new TimeoutError(ms, 'total', call.ctx),
    );
    call.signal = scope.signal;
    try {
      const response = await new CallRun(lane, req, call, now + ms).run(now);
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
    for (const lane of this.#lanes.all()) {
      lane.admission.close(error);
      lane.bodies.close();
    }
    this.#sleepers.wakeAll(error);
  }

  /** The store keys of the host's lanes: its own, and its scopes' (forgotten with the host). */
  storeKeys(): string[] {
    return [...this.#lanes.all()].map((lane) => lane.store.key);
  }

  /**
   * The host's statistics. Synchronous: with a store that answers asynchronously, the shared part
   * (holds, policies, budget) is as of the previous call, and this call refreshes it. Read-only
   * with a store that has `get` (the default one does): looking does not renew the state's expiry.
   */
  stats(): HostStats {
    const now = this.#shared.clock.now();
    const at = this.#shared.time.at(now);
    const { admission, breaker, store } = this.#lanes.own;
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
    for (const lane of this.#lanes.all()) {
      if (lane.scope === undefined) continue;
      const scope = stateStats(lane.scope, lane.store.lastState(), this.policy.rules, at);
      if (scope.holdUntil > 0) scope.holdUntil -= at - now;
      stats.scopes.push(scope);
    }
    // The hold, read on the state's time line, on the clock's.
    if (stats.holdUntil > 0) stats.holdUntil -= at - now;
    if (this.#wide.holdUntil > now && this.#wide.holdUntil > stats.holdUntil) {
      stats.holdUntil = this.#wide.holdUntil;
    }
    return stats;
  }
}

/** The wait of a lane while the whole host is held (see `HostWide.holdUntil`). */
function heldByHost(waitMs: number): AdmitResult {
  return { ok: false, waitMs, reason: 'retry-after' };
}

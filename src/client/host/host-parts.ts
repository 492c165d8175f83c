/**
 * What a host's pipeline hands each call's run (`call-run.ts`): the parts of the host, and what
 * every pipeline shares with its client. Its own module so that the pipeline, which makes the
 * runs, and the run, which uses the parts, do not import each other.
 *
 * @module
 */

import type { RateLimitInfo } from '../../headers/types.js';
import type { Clock } from '../../shared/clock.js';
import type { RequestContext } from '../../shared/errors.js';
import type { Emitter } from '../../shared/events.js';
import type { OpenBodies } from '../call/open-bodies.js';
import type { PreparedRequest } from '../call/request.js';
import type { HostConfig } from '../options/resolve.js';
import type { Admission } from '../queue/admission.js';
import type { KeepAlive } from '../queue/keep-alive.js';
import type { Sleepers } from '../queue/sleepers.js';
import type { CircuitBreaker } from '../rules/breaker.js';
import type { Ticket } from '../rules/contract.js';
import type { ClientEvents } from '../types.js';
import type { HostReport } from './host-report.js';
import type { HostStore } from './host-store.js';
import type { StateTime } from './state-time.js';
import type { StateStore } from './store.js';

/** What every pipeline shares with its client. */
export interface PipelineShared {
  clock: Clock;
  store: StateStore;
  /** The time line of the hosts' state (see `state-time.ts`). */
  time: StateTime;
  events: Emitter<ClientEvents>;
  fetch: typeof fetch;
  keepAlive: KeepAlive;
}

/**
 * What holds for every scope of a host (see `pipeline.ts`): mutable, one object per host pipeline,
 * which its lines share.
 */
export interface HostWide {
  /**
   * Whether the host honours idempotency keys: declared or listed from the start, else learned
   * from its first answer that shows it (see `key-honour.ts`), for the pipeline's life.
   */
  keysHonoured: boolean;
  /**
   * Until when every scope of the host waits, epoch milliseconds on the clock's time line (0:
   * none): a hold the server set for the whole host (Discord's global limit, a `Retry-After` on a
   * route of no known scope while the host has scopes).
   */
  holdUntil: number;
}

/** The parts of a host a call runs through: those of the scope it runs in (see `pipeline.ts`). */
export interface HostParts {
  shared: PipelineShared;
  policy: HostConfig;
  admission: Admission;
  breaker: CircuitBreaker | undefined;
  store: HostStore;
  report: HostReport;
  sleepers: Sleepers;
  /** The slots of answers whose bodies are still open (see `open-bodies.ts`). */
  bodies: OpenBodies<OpenFlight | undefined>;
  /**
   * Calls between an attempt's answer and their next round (the retry plan, the budget, the wait):
   * they hold no slot, no place in line and maybe no sleep for a few turns, yet the host is busy.
   */
  between: number;
  /** The error a call gets once the host is closed; `undefined` while it is open. */
  closed(ctx: RequestContext): unknown;
  /** What every scope of the host shares. */
  wide: HostWide;
  /** The scope's name (`undefined`: the host's own rules, for routes of no known scope). */
  scope: string | undefined;
  /**
   * The lane whose state takes in an answer with these fields, read at `at` (epoch ms): the scope
   * the answer names (remembered for the call's route), the one it shows the call is in (its
   * model, its route: `scopes/implicit-scopes.ts`), or this one. Set by the pipeline.
   */
  laneOfAnswer(parts: HostParts, req: PreparedRequest, info: RateLimitInfo, at: number): HostParts;
  /** The lane a call of this route runs in now: its scope's, or the host's own. */
  laneOf(req: PreparedRequest): HostParts;
  /**
   * After an answer is settled: a hold for the whole host where the server set one (its global
   * limit; a pushback on a route of no known scope once the host has scopes).
   */
  holdHost(parts: HostParts, outcome: ScopeOutcome): void;
}

/** What {@link HostParts.holdHost} reads of an attempt's outcome. */
export interface ScopeOutcome {
  info?: RateLimitInfo;
  pushback?: boolean;
  /** The lane's hold after the answer, epoch milliseconds on the clock's time line (0: none). */
  holdUntil?: number;
}

/**
 * An attempt whose answer left its flight open in the shared state (`HostStore.keepsFlight`): what
 * its slot needs to end that flight too.
 */
export interface OpenFlight {
  ticket: Ticket;
  ctx: RequestContext;
}

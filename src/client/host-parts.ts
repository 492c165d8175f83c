/**
 * What a host's pipeline hands each call's run (`call-run.ts`): the parts of the host, and what
 * every pipeline shares with its client. Its own module so that the pipeline, which makes the
 * runs, and the run, which uses the parts, do not import each other.
 *
 * @module
 */
import type { Clock } from '../clock.js';
import type { RequestContext } from '../errors.js';
import type { Admission } from './admission.js';
import type { Emitter } from './events.js';
import type { HostConfig } from './host-config.js';
import type { HostReport } from './host-report.js';
import type { HostStore } from './host-store.js';
import type { KeepAlive } from './keep-alive.js';
import type { OpenBodies } from './open-bodies.js';
import type { CircuitBreaker } from './rules/breaker.js';
import type { Ticket } from './rules/contract.js';
import type { Sleepers } from './sleepers.js';
import type { StateTime } from './state-time.js';
import type { StateStore } from './store.js';
import type { ClientEvents } from './types.js';

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

/** The parts of a host a call runs through. */
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
  /**
   * Whether the host honours idempotency keys: declared or listed from the start, else learned
   * from its first answer that shows it (see `key-honour.ts`), for the pipeline's life.
   */
  keysHonoured: boolean;
}

/**
 * An attempt whose answer left its flight open in the shared state (`HostStore.keepsFlight`): what
 * its slot needs to end that flight too.
 */
export interface OpenFlight {
  ticket: Ticket;
  ctx: RequestContext;
}

/**
 * Fault triggers: whether an injected fault fires on a request.
 *
 * @module
 */
import type { Clock } from '../../shared/clock.js';
import type { FaultTrigger } from './config.js';
import { FAULT_DEFAULTS } from './defaults.js';

/** A trigger with its own count of firings. */
export class Trigger {
  readonly #config: FaultTrigger;
  #fired = 0;

  constructor(config: FaultTrigger) {
    this.#config = config;
  }

  /**
   * Whether the fault fires now, counting it when it does. `sinceStartMs` is the time since the
   * server started; chance comes from `clock.random()`, drawn only when every other condition holds.
   */
  fires(sinceStartMs: number, clock: Clock): boolean {
    const {
      probability = FAULT_DEFAULTS.probability,
      times,
      afterMs = FAULT_DEFAULTS.afterMs,
      forMs,
    } = this.#config;
    if (sinceStartMs < afterMs) return false;
    if (forMs !== undefined && sinceStartMs >= afterMs + forMs) return false;
    if (times !== undefined && this.#fired >= times) return false;
    if (probability < 1 && clock.random() >= probability) return false;
    this.#fired += 1;
    return true;
  }
}

/** A latency setting as milliseconds for one request: fixed, or uniform in `[min, max]`. */
export function latencyFor(
  latency: number | { min: number; max: number } | undefined,
  clock: Clock,
): number {
  if (latency === undefined) return 0;
  if (typeof latency === 'number') return latency;
  return latency.min + Math.floor(clock.random() * (latency.max - latency.min + 1));
}

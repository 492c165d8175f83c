/**
 * The counters behind `stats()`: plain integers, incremented on the pipeline's path (no
 * allocation), summed across hosts, and kept in the totals when a host is evicted.
 *
 * @module
 */

/** The counters of one host (see `HostStats` for their meaning). */
export interface Counters {
  requests: number;
  attempts: number;
  responses: number;
  rateLimited: number;
  retries: number;
  queued: number;
  held: number;
  budgetExhausted: number;
  circuitOpen: number;
  gaveUp: number;
}

/** Fresh counters, all zero. */
export function newCounters(): Counters {
  return {
    requests: 0,
    attempts: 0,
    responses: 0,
    rateLimited: 0,
    retries: 0,
    queued: 0,
    held: 0,
    budgetExhausted: 0,
    circuitOpen: 0,
    gaveUp: 0,
  };
}

/** Adds `from` into `into`. */
export function addCounters(into: Counters, from: Counters): Counters {
  for (const key of Object.keys(into) as (keyof Counters)[]) into[key] += from[key];
  return into;
}

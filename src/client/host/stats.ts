/**
 * The counters behind `stats()`: plain integers, incremented on the pipeline's path (no
 * allocation), summed across hosts, and kept in the totals when a host is evicted.
 *
 * @module
 */

import type { CircuitState } from '../rules/breaker.js';
import { availableRetries } from '../rules/budget.js';
import type { HostRulesConfig, HostState } from '../rules/host-rules.js';
import { newCounts } from '../rules/sliding-counts.js';
import type { HostStats, ScopeStats } from '../types.js';

/** The counters of one host: the counting part of {@link HostStats} (see it for their meaning). */
export type Counters = Pick<
  HostStats,
  | 'requests'
  | 'attempts'
  | 'responses'
  | 'rateLimited'
  | 'retries'
  | 'queued'
  | 'held'
  | 'budgetExhausted'
  | 'circuitOpen'
  | 'gaveUp'
  | 'storeErrors'
>;

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
    storeErrors: 0,
  };
}

/** Adds `from` into `into`. */
export function addCounters(into: Counters, from: Counters): Counters {
  for (const key of Object.keys(into) as (keyof Counters)[]) into[key] += from[key];
  return into;
}

/** What the pipeline knows that is not in the shared state. */
export interface LiveStats {
  inFlight: number;
  queueLength: number;
  circuit: CircuitState;
}

/**
 * One host's `HostStats`: its counters, what is live in this process, and a snapshot of its shared
 * state (a copy: computing the budget's availability moves its window).
 */
export function hostStats(
  origin: string,
  partition: string | undefined,
  counters: Counters,
  state: HostState | undefined,
  config: HostRulesConfig,
  now: number,
  live: LiveStats,
): HostStats {
  const { name: _, ...own } = stateStats('', state, config, now);
  return {
    origin,
    ...(partition === undefined ? {} : { partition }),
    ...counters,
    ...live,
    ...own,
    scopes: [],
  };
}

/** What a state shows of a host or one of its scopes (named `name`), at `now`. */
export function stateStats(
  name: string,
  state: HostState | undefined,
  config: HostRulesConfig,
  now: number,
): ScopeStats {
  const hold = state?.hold;
  const learned = [...(state?.quota?.policies ?? [])];
  if (state?.timed?.policy) learned.push(state.timed.policy);
  return {
    name,
    holdUntil: hold && hold.until > now ? hold.until : 0,
    mode: config.learn ? (state?.mode ?? 'cold') : 'off',
    paceRate: state?.pace?.rate,
    policies: learned.map((p) => ({
      name: p.name ?? p.key,
      limit: p.limit,
      windowMs: p.windowMs,
      remaining: p.remaining,
      resetInMs:
        p.resetAt === undefined ? undefined : Math.max(0, (p.serverResetAt ?? p.resetAt) - now),
    })),
    budgetAvailable: config.budget
      ? availableRetries(
          state?.budget ?? newCounts(['requests', 'retries'], config.budget.windowMs, now),
          config.budget,
          now,
        )
      : Number.POSITIVE_INFINITY,
  };
}

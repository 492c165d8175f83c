/**
 * The retry budget: retries to a host may be at most `ratio` of its recent requests, plus a small
 * floor of `minPerSecond` so that a quiet client can still retry an occasional failure.
 *
 * This is Finagle's `RetryBudget` (deposits per request, withdrawals per retry, over a time window,
 * with a reserve of retries per second) rather than gRPC's token count or Envoy's share of
 * *active* requests: a window of recent traffic bounds amplification over time, which is what
 * matters during an outage, and it needs no notion of concurrency. With the defaults (10 %, 1 per
 * second, 10 s), a full outage costs at most 1.1 attempts per request, plus one per second.
 *
 * The window slides in ten slots; the state is two arrays of ten counts, plain JSON for a shared
 * store. Pure functions: the caller passes `now`.
 *
 * @module
 */

/** Budget parameters. */
export interface BudgetConfig {
  /** Retries allowed per request sent, over the window. @default 0.1 */
  ratio: number;
  /** Retries allowed per second whatever the traffic (the floor). @default 1 */
  minPerSecond: number;
  /** Length of the window, in milliseconds. @default 10_000 */
  windowMs: number;
}

/** Serialisable budget state. */
export interface BudgetState {
  /** Number of the newest slot (`floor(now / slotMs)`). */
  slot: number;
  /** Requests per slot, in a ring indexed by slot number modulo {@link SLOTS}. */
  requests: number[];
  /** Retries per slot, same ring. */
  retries: number[];
}

/** How many slots the window is cut into. */
export const SLOTS = 10;

/** A new, empty budget. */
export function newBudget(config: BudgetConfig, now: number): BudgetState {
  return {
    slot: Math.floor(now / (config.windowMs / SLOTS)),
    requests: new Array<number>(SLOTS).fill(0),
    retries: new Array<number>(SLOTS).fill(0),
  };
}

/** Moves the window to `now`, clearing the slots that fell out. A clock going back moves nothing. */
function advance(state: BudgetState, config: BudgetConfig, now: number): number {
  const current = Math.floor(now / (config.windowMs / SLOTS));
  if (current <= state.slot) return state.slot % SLOTS;
  const steps = Math.min(SLOTS, current - state.slot);
  for (let i = 1; i <= steps; i++) {
    const index = (state.slot + i) % SLOTS;
    state.requests[index] = 0;
    state.retries[index] = 0;
  }
  state.slot = current;
  return current % SLOTS;
}

function sum(values: readonly number[]): number {
  let total = 0;
  for (const v of values) total += v;
  return total;
}

/** Records a request (a first attempt) sent to the host. */
export function depositRequest(state: BudgetState, config: BudgetConfig, now: number): void {
  const index = advance(state, config, now);
  state.requests[index] = (state.requests[index] ?? 0) + 1;
}

/** Retries the budget would allow right now, without taking any. May be fractional. */
export function availableRetries(state: BudgetState, config: BudgetConfig, now: number): number {
  advance(state, config, now);
  const allowed =
    config.ratio * sum(state.requests) + (config.minPerSecond * config.windowMs) / 1000;
  return Math.max(0, allowed - sum(state.retries));
}

/**
 * Takes one retry from the budget if it has one: `retries + 1 <= ratio * requests + minPerSecond *
 * windowSeconds` over the window. Returns whether the retry may go.
 */
export function withdrawRetry(state: BudgetState, config: BudgetConfig, now: number): boolean {
  if (availableRetries(state, config, now) < 1) return false;
  recordRetry(state, config, now);
  return true;
}

/** Records a retry taken at `now`, whatever the budget holds (one that already happened). */
export function recordRetry(state: BudgetState, config: BudgetConfig, now: number): void {
  const index = advance(state, config, now);
  state.retries[index] = (state.retries[index] ?? 0) + 1;
}

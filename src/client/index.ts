/**
 * The client's public face: `LimitedClient`, `wrapFetch`, their options and defaults, the retry
 * rule, the events and statistics, and the state store interface with its in-memory default.
 * Every name here is in the README; the building blocks behind them are internals (tests import
 * them from their modules).
 *
 * @module
 */

export type { Listener } from '../shared/events.js';
export type { CostVector } from './call/cost.js';
export type { CostContext, ReadonlyHeaders } from './call/request-view.js';
export { LimitedClient } from './entries/client.js';
export { limitedInit } from './entries/limited-init.js';
export { type WrappedFetch, wrapFetch } from './entries/wrap-fetch.js';
export {
  type MaybePromise,
  MemoryStateStore,
  type MemoryStateStoreOptions,
  type StateStore,
  type Transaction,
} from './host/store.js';
export { DEFAULTS } from './options/schema.js';
export type {
  CircuitBreakerOptions,
  HostOptions,
  IdempotencyOptions,
  LimitedClientOptions,
  RetryBudgetOptions,
  RetryOptions,
} from './options/types.js';
export { defaultShouldRetry } from './retry/retry-rule.js';
export type { CircuitState } from './rules/breaker.js';
export type {
  ClientEvents,
  ClientStats,
  EventBase,
  GiveUpReason,
  HostStats,
  LimitedInit,
  LimitedInitOptions,
  LimitedRequestInit,
  PolicyStats,
  RetryContext,
  ScopeStats,
  ShouldRetry,
  StoreOperation,
} from './types.js';

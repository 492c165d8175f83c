/**
 * The client's public face: `LimitedClient`, `wrapFetch`, their options and defaults, the retry
 * rule, the events and statistics, and the state store interface with its in-memory default.
 * Every name here is in the README; the building blocks behind them are internals (tests import
 * them from their modules).
 *
 * @module
 */
export { LimitedClient } from './client.js';
export type { CostVector } from './cost.js';
export type { Listener } from './events.js';
export { limitedInit } from './limited-init.js';
export { DEFAULTS } from './options/schema.js';
export type {
  CircuitBreakerOptions,
  HostOptions,
  IdempotencyOptions,
  LimitedClientOptions,
  RetryBudgetOptions,
  RetryOptions,
} from './options/types.js';
export type { CostContext, ReadonlyHeaders } from './request-view.js';
export { defaultShouldRetry } from './retry/retry-rule.js';
export type { CircuitState } from './rules/breaker.js';
export {
  type MaybePromise,
  MemoryStateStore,
  type MemoryStateStoreOptions,
  type StateStore,
  type Transaction,
} from './store.js';
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
export { type WrappedFetch, wrapFetch } from './wrap-fetch.js';

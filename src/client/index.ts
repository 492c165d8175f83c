/**
 * The client: `LimitedClient`, `wrapFetch`, their options, events, statistics, the state store
 * interface and the policies' building blocks.
 *
 * @module
 */
export { LimitedClient } from './client.js';
export type { Listener } from './events.js';
export { isTransientNetworkError } from './network-errors.js';
export {
  type CircuitBreakerOptions,
  type CostContext,
  DEFAULTS,
  type IdempotencyOptions,
  type LimitedClientOptions,
  type PolicyOptions,
  type RetryBudgetOptions,
  type RetryOptions,
} from './options.js';
export { backoffCeiling, fullJitter, serverWait, type WaitJitter } from './retry/backoff.js';
export { defaultShouldRetry, IDEMPOTENT_METHODS, RETRY_STATUSES } from './retry/retry-rule.js';
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
  LimitedRequestInit,
  PolicyStats,
  RetryContext,
  ShouldRetry,
  StoreOperation,
} from './types.js';
export { type WrappedFetch, wrapFetch } from './wrap-fetch.js';

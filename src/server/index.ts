/**
 * limited-client/server: the classic rate-limiting algorithms, usable on their own with an injected
 * clock, and a mock HTTP server that enforces them (Node only).
 *
 * What it exports is what the README documents: the seven algorithm classes with their options,
 * `createMockServer` with its configuration, the memory store and the store interface. The pure
 * arithmetic behind each algorithm (`src/server/algorithms/*.ts`) is an internal, shared with the
 * Redis store; the names are listed in `test/package/api.txt`.
 *
 * @module
 */
export {
  ConcurrencyLimit,
  type ConcurrencyLimitOptions,
} from './algorithms/concurrency-limit.js';
export { FixedWindow, type FixedWindowOptions } from './algorithms/fixed-window.js';
export { Gcra, type GcraOptions } from './algorithms/gcra.js';
export { LeakyBucket, type LeakyBucketOptions } from './algorithms/leaky-bucket.js';
export { type Acquisition, type LimiterOptions, RateLimiter } from './algorithms/limiter.js';
export { SlidingLog, type SlidingLogOptions } from './algorithms/sliding-log.js';
export {
  SlidingWindowCounter,
  type SlidingWindowCounterOptions,
} from './algorithms/sliding-window-counter.js';
export { TokenBucket, type TokenBucketOptions } from './algorithms/token-bucket.js';
export type {
  CorsConfig,
  CostFrom,
  FailMode,
  FaultsConfig,
  FaultTrigger,
  HeaderFamily,
  IdempotencyConfig,
  KeyConfig,
  KeyPart,
  LimitCommon,
  LimitConfig,
  MockServerConfig,
  ResponseConfig,
  RetryAfterFormat,
  RouteConfig,
} from './http/config.js';
export {
  createMockServer,
  type MockServer,
  type MockServerEvents,
  type StoreErrorEvent,
} from './http/server.js';
export type { HeldStats, KeyStats, MockServerStats, RouteStats } from './http/stats.js';
export { MemoryStore, type MemoryStoreOptions } from './memory-store.js';
export type { LimiterSpec, RateLimitStore, StoreDecision, StoreRequest } from './store.js';
export type { AlgorithmName, TakeOptions, TakeResult } from './types.js';

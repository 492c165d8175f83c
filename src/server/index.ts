/**
 * limited-client/server: the classic rate-limiting algorithms, usable on their own with an injected
 * clock, and a mock HTTP server that enforces them (Node only).
 *
 * @module
 */
export {
  ConcurrencyLimit,
  type ConcurrencyLimitConfig,
  type ConcurrencyLimitOptions,
  type ConcurrencyLimitState,
  concurrencyLimit,
} from './algorithms/concurrency-limit.js';
export {
  FixedWindow,
  type FixedWindowConfig,
  type FixedWindowOptions,
  type FixedWindowState,
  fixedWindow,
} from './algorithms/fixed-window.js';
export {
  Gcra,
  type GcraConfig,
  type GcraOptions,
  type GcraState,
  gcra,
} from './algorithms/gcra.js';
export {
  LeakyBucket,
  type LeakyBucketConfig,
  type LeakyBucketOptions,
  type LeakyBucketState,
  leakyBucket,
} from './algorithms/leaky-bucket.js';
export { type Acquisition, type LimiterOptions, RateLimiter } from './algorithms/limiter.js';
export {
  type AlgorithmLogic,
  type Consumed,
  type Decision,
  decide,
  inspect,
} from './algorithms/logic.js';
export {
  SlidingLog,
  type SlidingLogConfig,
  type SlidingLogOptions,
  type SlidingLogState,
  slidingLog,
} from './algorithms/sliding-log.js';
export {
  SlidingWindowCounter,
  type SlidingWindowCounterConfig,
  type SlidingWindowCounterOptions,
  type SlidingWindowCounterState,
  slidingWindowCounter,
} from './algorithms/sliding-window-counter.js';
export {
  TokenBucket,
  type TokenBucketConfig,
  type TokenBucketOptions,
  type TokenBucketState,
  tokenBucket,
} from './algorithms/token-bucket.js';
export type {
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

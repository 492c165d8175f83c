/**
 * Where the algorithms keep their per-key state. The memory store ({@link MemoryStore}) is the
 * default; `limited-client/redis` provides one shared across processes. Anyone can write another:
 * this file is the whole contract.
 *
 * @module
 */
import type { AlgorithmLogic } from './algorithms/logic.js';
import type { AlgorithmName, TakeResult } from './types.js';

/**
 * Everything a store needs to know about the limiter asking: which algorithm, with which
 * parameters, under which namespace. Built by the algorithm classes; a store never builds one.
 */
export interface LimiterSpec<S = unknown, C = unknown> {
  /** The algorithm. A store that runs its own code per algorithm (Lua) dispatches on this. */
  readonly algorithm: AlgorithmName;
  /**
   * The limiter's namespace. Keys of different limiters never collide: a store keeps `key` under
   * `name` (the memory store joins them; a Redis store would use `${prefix}${name}:${key}`).
   */
  readonly name: string;
  /** The algorithm's normalised parameters: plain numbers, safe to serialise. */
  readonly config: C;
  /** The pure arithmetic. The memory store runs it; a Redis store runs its Lua twin instead. */
  readonly logic: AlgorithmLogic<S, C>;
}

/** The moment and the cost of one store operation. */
export interface StoreRequest {
  /** Units to spend or give back: an integer from 1 to the limit. */
  cost: number;
  /**
   * The decision time in epoch milliseconds, from the limiter's clock or its caller. A store shared
   * by machines may decide on a clock of its own instead (Redis `TIME`), so that every instance
   * agrees; it must then use that one time for the whole operation, and say so in its docs.
   */
  now: number;
}

/** What {@link RateLimitStore.take} resolves to. */
export interface StoreDecision {
  /** The decision, exactly as `decide()` in `algorithms/logic.ts` computes it. */
  result: TakeResult;
  /**
   * An opaque number to hand back to {@link RateLimitStore.refund} to undo this take; absent when
   * the algorithm needs none. Meaningless when the take was rejected.
   */
  receipt?: number;
}

/**
 * A store of per-key limiter state. Every method is asynchronous and must be atomic per key: the
 * read, the decision and the write of one call behave as one step with respect to every other
 * call on the same `(spec.name, key)`, in this process and in any other sharing the store.
 *
 * Implementations must also bound their memory: state that `spec.logic.expiresAt()` declares
 * equivalent to a fresh key may be dropped at any time from then on, and should be (the memory
 * store sweeps it; a Redis store sets it as the key's expiry).
 *
 * @example
 * // A store that logs every decision, wrapping another:
 * const logging: RateLimitStore = {
 *   async take(spec, key, request) {
 *     const decision = await inner.take(spec, key, request);
 *     console.log(spec.name, key, decision.result.allowed);
 *     return decision;
 *   },
 *   peek: (spec, key, request) => inner.peek(spec, key, request),
 *   refund: (spec, key, request) => inner.refund(spec, key, request),
 * };
 */
export interface RateLimitStore {
  /**
   * Atomically reads the state of `key`, runs the decision `decide(spec.logic, spec.config, state,
   * request.now, request.cost)` (or an exact equivalent), writes the new state when it changed, and
   * resolves to the result with the receipt. A rejected take must leave the key as it was (the
   * only permitted change is the algorithm's own `rebase` after a backwards clock).
   *
   * A take that rejects (the store failed, timed out) must not have spent anything, or must give
   * it back once it learns it did: its caller decides without it (the mock server fails open or
   * closed) and never refunds it.
   */
  take(spec: LimiterSpec, key: string, request: StoreRequest): Promise<StoreDecision>;
  /**
   * Describes the key at `request.now` without changing it, as `inspect()` in
   * `algorithms/logic.ts` computes it: whether a take of `request.cost` would be admitted, and the
   * units available now. Used to report on every limit of a request that another limit rejected.
   */
  peek(spec: LimiterSpec, key: string, request: StoreRequest): Promise<TakeResult>;
  /**
   * Atomically gives back `request.cost` units spent by an admitted take, identified by the
   * `receipt` that take returned (`request.now` is the time of that take). Used to roll back a
   * request that another limit rejected, and to release a concurrency slot when a response ends.
   * A refund for a key that no longer exists is a no-op; calling it twice for one take is a
   * caller's bug the store need not detect.
   */
  refund(
    spec: LimiterSpec,
    key: string,
    request: StoreRequest & { receipt?: number },
  ): Promise<void>;
}

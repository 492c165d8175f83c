/**
 * The class every algorithm shares: option handling, the clock, the store, and the `take` call.
 *
 * @module
 */
import { z } from 'zod';
import { type Clock, systemClock } from '../../shared/clock.js';
import { MemoryStore } from '../memory-store.js';
import { clockSchema, storeSchema } from '../options.js';
import type { LimiterSpec, RateLimitStore, StoreDecision } from '../store.js';
import type { AlgorithmName, TakeOptions, TakeResult } from '../types.js';
import type { AlgorithmLogic } from './logic.js';

/** Options every algorithm accepts besides its own parameters. */
export interface LimiterOptions {
  /**
   * Where per-key state lives. Pass one store to several limiters to keep all their keys in one
   * place (they need distinct `name`s), or a Redis store to share state across processes.
   * @default a new MemoryStore for this limiter
   */
  store?: RateLimitStore;
  /**
   * The source of `now` when a call does not pass one.
   * @default systemClock
   */
  clock?: Clock;
  /**
   * This limiter's namespace in its store. Two limiters with the same name and the same store share
   * their state, which is what you want across processes enforcing one limit, and not otherwise.
   * @default the algorithm and its parameters, e.g. `'token-bucket:10:2'`
   */
  name?: string;
}

/** Zod shape of {@link LimiterOptions}, spread into each algorithm's option schema. */
export const limiterOptionsShape = {
  store: storeSchema.optional(),
  clock: clockSchema.optional(),
  name: z.string({ error: 'must be a string' }).min(1, { error: 'must not be empty' }).optional(),
};

/** An admitted (or rejected) take that can be undone. */
export interface Acquisition {
  /** The decision. */
  readonly result: TakeResult;
  /**
   * Gives back what this take consumed: rolls back a request that another limit rejected, or frees
   * a concurrency slot when its response ends. A no-op for a rejected take, and after the first
   * call.
   */
  refund(): Promise<void>;
}

const noRefund = async (): Promise<void> => {};

const memoryTake = MemoryStore.prototype.take;

/**
 * The `refund` of an admitted {@link RateLimiter.acquire}: gives `request` back to `store` once.
 * Made by a function rather than written inline in `acquire`, so that no name is set on each one
 * (a bundler that keeps function names defines one per closure: a property write per acquire).
 */
function refunder(
  store: RateLimitStore,
  spec: LimiterSpec,
  key: string,
  request: { cost: number; now: number; receipt: number | undefined },
): () => Promise<void> {
  let done = false;
  return () => {
    if (done) return Promise.resolve();
    done = true;
    try {
      return store.refund(spec, key, request);
    } catch (error) {
      return Promise.reject(error);
    }
  };
}

/**
 * Base class of the seven algorithms. Subclasses only describe their parameters; everything else,
 * including the call that matters, `take`, lives here.
 */
export abstract class RateLimiter<S = unknown, C = unknown> {
  /** The algorithm's name, as in the mock server's configuration. */
  readonly algorithm: AlgorithmName;
  /** This limiter's namespace in its store. */
  readonly name: string;
  /** Where the state lives. */
  readonly store: RateLimitStore;
  /** The source of `now` for calls that do not pass one. */
  readonly clock: Clock;
  /** The most units a key can hold: the `limit` of every result. */
  readonly limit: number;
  /** What the store is handed with every call. */
  protected readonly spec: LimiterSpec<S, C>;

  protected constructor(logic: AlgorithmLogic<S, C>, config: C, options: LimiterOptions) {
    this.algorithm = logic.algorithm;
    this.limit = logic.limit(config);
    this.name = options.name ?? `${logic.algorithm}:${Object.values(config as object).join(':')}`;
    this.store = options.store ?? new MemoryStore();
    this.clock = options.clock ?? systemClock;
    this.spec = Object.freeze({ algorithm: logic.algorithm, name: this.name, config, logic });
  }

  /**
   * Spends `cost` units of `key`'s quota if they are available, and says so.
   * A rejected take consumes nothing.
   *
   * @throws RangeError when `cost` is not an integer from 1 to {@link RateLimiter.limit}, or `now`
   *   is not a finite number: such a request could never be admitted, so it is a caller's bug.
   * @example
   * const limiter = new TokenBucket({ capacity: 5, refillPerSecond: 2 });
   * const { allowed, retryAfterMs } = await limiter.take('user-42');
   */
  async take(key: string, options: TakeOptions = {}): Promise<TakeResult> {
    return (await this.store.take(this.spec, key, this.#request(options))).result;
  }

  /**
   * Describes `key` without spending anything: `allowed` says whether a take of `cost` would be
   * admitted now, `remaining` is what is available now (not minus `cost`), `retryAfterMs` is when
   * a take of `cost` would be admitted. For a take that would be rejected, this is exactly what it
   * would return.
   * @example
   * const { remaining } = await limiter.peek('user-42');
   */
  async peek(key: string, options: TakeOptions = {}): Promise<TakeResult> {
    const { cost, now } = this.#request(options);
    return this.store.peek(this.spec, key, { cost, now });
  }

  /**
   * `take`, plus a way to undo it. The mock server uses it to admit a request only if all its limits
   * admit it (taking each, and refunding the ones taken when a later one rejects) and to free
   * concurrency slots.
   * @example
   * const a = await perIp.acquire(ip);
   * const b = a.result.allowed ? await perKey.acquire(apiKey) : undefined;
   * if (b && !b.result.allowed) await a.refund();
   */
  async acquire(key: string, options: TakeOptions = {}): Promise<Acquisition> {
    const request = this.#request(options);
    return this.#acquisition(key, request, await this.store.take(this.spec, key, request));
  }

  /**
   * {@link RateLimiter.acquire} without a promise when the store decides in this process (a
   * {@link MemoryStore} with its own `take`); `undefined` for any other store, whose callers use
   * `acquire`. The mock server admits through it, so a request limited in memory waits for no
   * promise.
   * @throws RangeError as `take` does.
   * @example
   * const a = limiter.acquireNow(ip) ?? (await limiter.acquire(ip));
   */
  acquireNow(key: string, options: TakeOptions = {}): Acquisition | undefined {
    const { store } = this;
    // Only a memory store whose `take` is the class's own: a subclass or a wrapper that changes
    // `take` (to log, to count, a test's spy) is asked through it.
    if (!(store instanceof MemoryStore) || store.take !== memoryTake) return undefined;
    const request = this.#request(options);
    return this.#acquisition(key, request, store.takeNow(this.spec, key, request));
  }

  /** The acquisition a store's decision on `request` makes: a refund only when it was admitted. */
  #acquisition(
    key: string,
    { cost, now }: { cost: number; now: number },
    { result, receipt }: StoreDecision,
  ): Acquisition {
    if (!result.allowed) return { result, refund: noRefund };
    return { result, refund: refunder(this.store, this.spec, key, { cost, now, receipt }) };
  }

  #request(options: TakeOptions): { cost: number; now: number } {
    const cost = options.cost ?? 1;
    if (!Number.isInteger(cost) || cost < 1 || cost > this.limit) {
      throw new RangeError(
        `${this.name}: cost must be an integer from 1 to the limit (${this.limit}), got ${cost}`,
      );
    }
    const now = options.now ?? this.clock.now();
    if (!Number.isFinite(now)) {
      throw new RangeError(`${this.name}: now must be a finite number of milliseconds, got ${now}`);
    }
    return { cost, now };
  }
}

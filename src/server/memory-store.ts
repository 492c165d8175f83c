/**
 * The default {@link RateLimitStore}: one `Map` in this process.
 *
 * @module
 */

import { z } from 'zod';
import { decide, inspect } from './algorithms/logic.js';
import { parseOptions, positiveInteger } from './options.js';
import type { LimiterSpec, RateLimitStore, StoreDecision, StoreRequest } from './store.js';
import type { TakeResult } from './types.js';

/** Options of {@link MemoryStore}. */
export interface MemoryStoreOptions {
  /**
   * Entries the idle-key sweep examines on each take or refund. Each adds at most one key, so any
   * value above 1 keeps the map within a small multiple of the keys that are live (not expired).
   * @default 2
   */
  sweepPerOperation?: number;
  /**
   * The most keys held, over every limiter sharing the store. A new key past it evicts a key that
   * has not been used since the eviction hand last passed it (second chance, an approximation of
   * least recently used); a key with concurrency slots in flight is never evicted. An evicted key
   * that comes back starts fresh, the one error this bound can make: toward admitting, for a key
   * idle longer than the others held.
   * @default 100_000 (about 25 MB of keys of a few dozen characters)
   */
  maxKeys?: number;
}

interface Entry {
  state: unknown;
  expiresAt: number;
  /** Used since the eviction hand last passed: spared once. */
  used: boolean;
}

const optionsSchema = z.strictObject({
  sweepPerOperation: positiveInteger.optional(),
  maxKeys: positiveInteger.optional(),
});

/** Every default of {@link MemoryStoreOptions}. */
export const MEMORY_STORE_DEFAULTS = Object.freeze({ sweepPerOperation: 2, maxKeys: 100_000 });

/**
 * Keeps limiter state in a `Map`, in this process. Operations run synchronously inside the returned
 * promise, so each is atomic; state is not shared with other processes (use a Redis store for
 * that).
 *
 * Memory is bounded three times over:
 * - per key, by the algorithm: a few numbers, or for the sliding log at most one entry per
 *   distinct millisecond in the window (and never more than its limit);
 * - in the number of keys: every take advances a sweep over the map by `sweepPerOperation` entries
 *   (a clock hand, not a timer) and deletes those whose state has expired, that is, is equivalent
 *   to a fresh key. A million distinct keys seen once each shrink back to the keys still live as
 *   soon as traffic continues; {@link MemoryStore.prune} sweeps everything at once;
 * - and never past `maxKeys`, however many are live: the same hand evicts a key not used lately.
 *
 * Time comes from the requests (`now`), so the store has no timer, never keeps a process alive and
 * behaves the same on fake time.
 *
 * @example
 * const store = new MemoryStore();
 * const perIp = new TokenBucket({ capacity: 10, refillPerSecond: 1, store, name: 'per-ip' });
 * const perKey = new FixedWindow({ limit: 1000, windowMs: 3_600_000, store, name: 'per-key' });
 */
export class MemoryStore implements RateLimitStore {
  readonly #entries = new Map<string, Entry>();
  readonly #sweepPerOperation: number;
  readonly #maxKeys: number;
  #hand: Iterator<[string, Entry]> | undefined;
  #evicted = 0;

  constructor(options: MemoryStoreOptions = {}) {
    const parsed = parseOptions(optionsSchema, options);
    this.#sweepPerOperation = parsed.sweepPerOperation ?? MEMORY_STORE_DEFAULTS.sweepPerOperation;
    this.#maxKeys = parsed.maxKeys ?? MEMORY_STORE_DEFAULTS.maxKeys;
  }

  /** Keys evicted so far because the store was full (`maxKeys`), not because they expired. */
  get evicted(): number {
    return this.#evicted;
  }

  /** Number of keys currently held (expired ones included until the sweep reaches them). */
  get size(): number {
    return this.#entries.size;
  }

  async take(spec: LimiterSpec, key: string, request: StoreRequest): Promise<StoreDecision> {
    return this.takeNow(spec, key, request);
  }

  /**
   * {@link MemoryStore.take}, synchronously: the same decision without a promise, for a caller in
   * this process that wants to skip the await (the mock server's admission does).
   * @example
   * const { result } = store.takeNow(spec, 'ip:203.0.113.7', { cost: 1, now: Date.now() });
   */
  takeNow(spec: LimiterSpec, key: string, request: StoreRequest): StoreDecision {
    const id = entryId(spec, key);
    const entry = this.#entries.get(id);
    const decision = decide(spec.logic, spec.config, entry?.state, request.now, request.cost);
    if (entry !== undefined) entry.used = true;
    if (decision.state !== entry?.state) this.#write(spec, id, entry, decision.state, request.now);
    this.#sweep(request.now);
    return { result: decision.result, receipt: decision.receipt };
  }

  async peek(spec: LimiterSpec, key: string, request: StoreRequest): Promise<TakeResult> {
    const entry = this.#entries.get(entryId(spec, key));
    return inspect(spec.logic, spec.config, entry?.state, request.now, request.cost);
  }

  async refund(
    spec: LimiterSpec,
    key: string,
    request: StoreRequest & { receipt?: number },
  ): Promise<void> {
    const id = entryId(spec, key);
    const entry = this.#entries.get(id);
    if (entry === undefined) return;
    const state = spec.logic.refund(
      entry.state,
      request.now,
      request.cost,
      request.receipt,
      spec.config,
    );
    this.#write(spec, id, entry, state, request.now);
    this.#sweep(request.now);
  }

  /**
   * Deletes every key whose state has expired at `now` (epoch milliseconds). Never needed for
   * correctness; useful before measuring, or after a burst of distinct keys when no more traffic
   * will come to drive the sweep.
   * @returns the number of keys deleted.
   */
  prune(now: number): number {
    let deleted = 0;
    for (const [id, entry] of this.#entries) {
      if (entry.expiresAt <= now) {
        this.#entries.delete(id);
        deleted += 1;
      }
    }
    return deleted;
  }

  /** Forgets every key. */
  clear(): void {
    this.#entries.clear();
    this.#hand = undefined;
  }

  /** Writes `state` for `id`, whose current entry is `entry`: in place, or as a new key. */
  #write(
    spec: LimiterSpec,
    id: string,
    entry: Entry | undefined,
    state: unknown,
    now: number,
  ): void {
    if (state === undefined) this.#entries.delete(id);
    else {
      const expiresAt = spec.logic.expiresAt(state, spec.config);
      if (expiresAt <= now) this.#entries.delete(id);
      else {
        if (entry !== undefined) {
          entry.state = state;
          entry.expiresAt = expiresAt;
          entry.used = true;
          return;
        }
        this.#entries.set(id, { state, expiresAt, used: true });
        if (this.#entries.size > this.#maxKeys) this.#evict(now);
      }
    }
  }

  /**
   * Advances the hand until the store is back within `maxKeys`: expired keys go, a used key loses
   * its mark and stays, an unused one goes; a key whose state never expires on its own (slots in
   * flight) stays. Two turns of the hand at most, so a store full of such keys may pass the bound
   * (they are bounded by the requests in flight).
   */
  #evict(now: number): void {
    for (let steps = 2 * this.#entries.size + 2; this.#entries.size > this.#maxKeys; steps--) {
      if (steps === 0) return;
      this.#hand ??= this.#entries.entries();
      const next = this.#hand.next();
      if (next.done) {
        this.#hand = undefined;
        continue;
      }
      const [id, entry] = next.value;
      if (entry.expiresAt <= now) this.#entries.delete(id);
      else if (entry.expiresAt === Number.POSITIVE_INFINITY) continue;
      else if (entry.used) entry.used = false;
      else {
        this.#entries.delete(id);
        this.#evicted += 1;
      }
    }
  }

  /** Advances the clock hand: examines the next few entries, deleting the expired ones. */
  #sweep(now: number): void {
    for (let i = 0; i < this.#sweepPerOperation; i++) {
      this.#hand ??= this.#entries.entries();
      const next = this.#hand.next();
      if (next.done) {
        this.#hand = undefined;
        if (this.#entries.size === 0) return;
        continue;
      }
      const [id, entry] = next.value;
      if (entry.expiresAt <= now) this.#entries.delete(id);
    }
  }
}

/** The map key of `key` in `spec`'s namespace. NUL cannot appear in a header-derived key. */
function entryId(spec: LimiterSpec, key: string): string {
  return `${spec.name}\u0000${key}`;
}

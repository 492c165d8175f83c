/**
 * The state store: where the pipeline keeps the state that several processes may share (the
 * client-side token bucket, the learned limits, the retry budget). The pipeline knows only this
 * interface; {@link MemoryStateStore} is the default, and `limited-client/redis` adds one that many
 * processes share.
 *
 * The interface is one read-modify-write. Every operation the pipeline needs (admit a request,
 * settle its answer, take a retry from the budget) is a pure function over one host's state, run
 * atomically by the store. A store in another process's memory (Redis) can run it with optimistic
 * concurrency: read, apply, write if unchanged, else read again and re-apply.
 *
 * @module
 */
import { type Clock, systemClock } from '../../shared/clock.js';

/** A value, or a promise of it: stores may answer synchronously (memory) or not (network). */
export type MaybePromise<T> = T | Promise<T>;

/** Whether a store's answer is a promise (a remote store) rather than the value (the memory one). */
export function isPromise<T>(value: MaybePromise<T>): value is Promise<T> {
  return typeof (value as { then?: unknown } | undefined)?.then === 'function';
}

/**
 * A transaction over one key: what {@link StateStore.update} runs atomically. States are plain
 * JSON: objects, arrays, finite numbers, strings, booleans.
 */
export interface Transaction<S, R> {
  /**
   * Receives the current state (`undefined` when there is none or it expired) and returns the
   * state to keep (`undefined` deletes the key) and a result for the caller. It may mutate and
   * return the object it was given. It must be deterministic and have no other effect: a store may
   * run it more than once for one call (after a conflicting write) and keep only the last run.
   */
  run(state: S | undefined): [next: S | undefined, result: R];
  /**
   * Checks a state the store read from outside this process (parsed from another process's JSON),
   * before the transaction runs on it: returns the state to run on (checked and bounded, a copy),
   * or throws an `Error` whose message says which field is wrong. A store that reads shared state
   * calls it once per state it reads (not on every run); a state that fails it is run on as no
   * state (`undefined`), reported, and written over. Optional: without it, a store runs on what it
   * read.
   */
  check?(state: unknown): S | undefined;
}

/**
 * What the pipeline's transactions offer a store that falls back to state local to its process
 * while the shared state is unavailable (`RedisStore`), beyond the public {@link Transaction}.
 * Internal: not exported by the package. Every transaction the pipeline passes to a store has
 * this shape; a store may read a `Transaction` as one, since both additions are optional to use.
 *
 * `share` (default 1) is the part of the shared limits the run may use. A store running on its
 * local copy passes less (its local share, about one over the number of processes), so that the
 * processes on local state together stay near the shared limits instead of each spending all of
 * them.
 *
 * `replay` serves such a store once its shared state is back: it applies to that state a run made
 * on the local copy, whose result the caller already acted on (it sent the request, took the
 * retry). It records that result instead of deciding again: deciding again, on other state, could
 * count a request that was never sent, one that then never ends. Without `replay`, a store replays
 * by running again.
 */
export interface ReplayableTransaction<S, R> extends Transaction<S, R> {
  run(state: S | undefined, share?: number): [next: S | undefined, result: R];
  replay?(state: S | undefined, result: R): S | undefined;
}

/** Where the pipeline's shared state lives. Implement it to share state across processes. */
export interface StateStore {
  /**
   * Runs `transaction` atomically on the state under `key` and returns its result. No other
   * `update` of the same key may interleave with it (in any process sharing the store).
   *
   * The pipeline calls it on every attempt (once to admit, once to settle), so it sits on the hot
   * path: a memory store should answer synchronously; a remote one should take one round trip.
   *
   * @param key the host's key: its origin (`https://api.example.com`), followed by `#` and the
   *   partition for a partition (see the `partition` option); a scope's key is the host's, the
   *   separator `\u001f` and the scope's name, and the host's key with the separator alone holds
   *   the routes its scopes were learned from (docs/how-it-works.md, "Many budgets per host").
   *   A store shared with other data should add a prefix of its own.
   * @param transaction see {@link Transaction}.
   * @param ttlMs how long the state may be kept after this update, in milliseconds; a store
   *   should drop it after that (it is state about a host nobody talks to any more). Past that,
   *   the pipeline treats the host as new.
   */
  update<S, R>(key: string, transaction: Transaction<S, R>, ttlMs: number): MaybePromise<R>;
  /** Deletes the state under `key`; deleting a missing key is not an error. */
  delete(key: string): MaybePromise<void>;
  /**
   * Reads the state under `key` (`undefined` when there is none or it expired) without changing it
   * or its expiry. `stats()` uses it, so that looking at a host does not keep its state alive.
   * Optional: without it, `stats()` reads through `update`, which renews the expiry.
   */
  get?<S>(key: string): MaybePromise<S | undefined>;
  /**
   * The store's clock, epoch milliseconds, for a store shared by processes whose clocks may
   * disagree (`RedisStore`: Redis's `TIME`): the moments the pipeline records in the state (a
   * hold's end, a reset, a refill) are then on one time line for every process. `undefined` while
   * the store does not know it yet. Optional: without it, the pipeline records times on its own
   * clock (see `state-time.ts`).
   */
  now?(): number | undefined;
  /**
   * Called when the client dropped the pipeline of `key` (idle for `hostIdleMs`, or the least
   * recently used past `maxHosts`): a store may drop what it keeps of the key in this process (a
   * local copy, updates waiting to be replayed after an outage), leaving the shared state as it
   * is. Optional.
   */
  forget?(key: string): void;
  /**
   * Releases what the store owns (timers, its own connections; never a connection the user passed
   * in). Called by the client's `close()` for the store it created itself; a store passed in by the
   * user is the user's to close.
   */
  close?(): MaybePromise<void>;
}

/**
 * Where a store that reads the client's host states from outside the process (`RedisStore`) keeps
 * the check of a host's state (`checkHostState` of `rules/state-check.ts`), so that the pipeline
 * can hand it to its transactions (`Transaction.check`) and to `stats()`. A property of the store
 * rather than an import of the pipeline: the check is code only such a store needs, and the core
 * bundle (browsers, workers, the memory store) stays without it.
 */
export const STATE_CHECK = Symbol.for('limited-client.state-check');

/** `MemoryStateStore`'s update at a time its caller read (set in the class: see {@link updateAt}). */
let memoryUpdate: <S, R>(
  store: MemoryStateStore,
  key: string,
  transaction: Transaction<S, R>,
  ttlMs: number,
  clock: Clock,
  now: number,
) => R;

/**
 * `store.update(key, transaction, ttlMs)` for a caller that has just read `now` from `clock`: a
 * {@link MemoryStateStore} (its own `update`, not a subclass's) on the same clock takes that time
 * instead of reading its clock again, two reads per request fewer (docs/hot-path.md). Internal:
 * not exported by the package.
 */
export function updateAt<S, R>(
  store: StateStore,
  key: string,
  transaction: Transaction<S, R>,
  ttlMs: number,
  clock: Clock,
  now: number,
): MaybePromise<R> {
  return store instanceof MemoryStateStore && store.update === MemoryStateStore.prototype.update
    ? memoryUpdate(store, key, transaction, ttlMs, clock, now)
    : store.update(key, transaction, ttlMs);
}

/** Options of {@link MemoryStateStore}. */
export interface MemoryStateStoreOptions {
  /**
   * Most keys kept; past it, the least recently updated key is dropped.
   * @default 10_000
   */
  maxKeys?: number;
  /** Time source for expiry. @default systemClock */
  clock?: Clock;
}

interface Entry {
  state: unknown;
  expiresAt: number;
  movedAt: number;
}

/**
 * The default store: a `Map` in this process, bounded in size (least recently updated keys go
 * first) and in time (each key expires `ttlMs` after its last update). Answers synchronously.
 */
export class MemoryStateStore implements StateStore {
  readonly #entries = new Map<string, Entry>();
  readonly #maxKeys: number;
  readonly #clock: Clock;

  constructor(options: MemoryStateStoreOptions = {}) {
    this.#maxKeys = options.maxKeys ?? 10_000;
    this.#clock = options.clock ?? systemClock;
  }

  /** Keys held right now (expired ones included until they are touched or pushed out). */
  get size(): number {
    return this.#entries.size;
  }

  update<S, R>(key: string, transaction: Transaction<S, R>, ttlMs: number): R {
    return this.#update(key, transaction, ttlMs, this.#clock.now());
  }

  static {
    memoryUpdate = (store, key, transaction, ttlMs, clock, now) =>
      store.#update(key, transaction, ttlMs, clock === store.#clock ? now : store.#clock.now());
  }

  #update<S, R>(key: string, transaction: Transaction<S, R>, ttlMs: number, now: number): R {
    const entry = this.#entries.get(key);
    const current = entry && entry.expiresAt > now ? (entry.state as S) : undefined;
    const [next, result] = transaction.run(current);
    if (next === undefined) {
      this.#entries.delete(key);
      return result;
    }
    if (entry) {
      // Re-inserting moves the key to the end of the Map's order (least recently updated first);
      // done at most once a second per key, so a busy key costs one lookup.
      if (now - entry.movedAt >= 1000) {
        this.#entries.delete(key);
        this.#entries.set(key, entry);
        entry.movedAt = now;
      }
      entry.state = next;
      entry.expiresAt = now + ttlMs;
    } else {
      this.#entries.set(key, { state: next, expiresAt: now + ttlMs, movedAt: now });
      this.#evict(now);
    }
    return result;
  }

  delete(key: string): void {
    this.#entries.delete(key);
  }

  get<S>(key: string): S | undefined {
    const entry = this.#entries.get(key);
    return entry && entry.expiresAt > this.#clock.now() ? (entry.state as S) : undefined;
  }

  close(): void {
    this.#entries.clear();
  }

  /**
   * Drops keys from the front of the Map (least recently updated first) while the store is over its
   * bound or the front key has expired. Amortised O(1) per update.
   */
  #evict(now: number): void {
    for (const [key, entry] of this.#entries) {
      if (this.#entries.size <= this.#maxKeys && entry.expiresAt > now) break;
      this.#entries.delete(key);
    }
  }
}

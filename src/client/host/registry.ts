/**
 * The host registry: one pipeline per origin, created on first use, dropped when idle or when there
 * are too many. A crawler that touches a hundred thousand hosts keeps at most `maxHosts` pipelines
 * (plus the ones busy at that moment); each call does O(1) work to keep it so.
 *
 * The Map's insertion order is the recency order: a used host is moved to the back, so the front
 * holds the least recently used, and eviction only ever looks at the front. A busy host found at
 * the front is moved to the back too, so at most `maxHosts` plus the hosts busy at that moment are
 * kept, whatever the order they became busy in.
 *
 * @module
 */
import type { Clock } from '../../shared/clock.js';

/** What the registry needs from what it holds. */
export interface Evictable {
  /** Busy entries (requests in flight or waiting) are never evicted. */
  readonly busy: boolean;
}

interface Entry<P> {
  value: P;
  lastUsed: number;
}

/** Front entries examined per call, at most, to keep each call O(1). */
const SWEEP_LIMIT = 8;
/** Recency is kept to this precision, in milliseconds. */
const REORDER_MS = 1000;

/** See the module comment. */
export class HostRegistry<P extends Evictable> {
  readonly #entries = new Map<string, Entry<P>>();
  #swept = Number.NEGATIVE_INFINITY;

  readonly #clock: Clock;
  readonly #maxHosts: number;
  readonly #idleMs: number;
  readonly #onEvict: (key: string, value: P) => void;

  /**
   * @param maxHosts entries kept at once (busy ones may exceed it until they are idle).
   * @param idleMs an entry unused for this long is dropped, in milliseconds.
   * @param onEvict called with each dropped entry.
   */
  constructor(
    clock: Clock,
    maxHosts: number,
    idleMs: number,
    onEvict: (key: string, value: P) => void,
  ) {
    this.#clock = clock;
    this.#maxHosts = maxHosts;
    this.#idleMs = idleMs;
    this.#onEvict = onEvict;
  }

  /** Entries held now. */
  get size(): number {
    return this.#entries.size;
  }

  /** The entry for `key`, created with `create` when there is none; `now` from the caller's clock. */
  get(key: string, create: () => P, now = this.#clock.now()): P {
    let entry = this.#entries.get(key);
    if (entry) {
      // Move to the back (most recently used), at most once a second per host: the order is
      // exact to a second, and a busy host costs one Map lookup per call.
      if (now - entry.lastUsed >= REORDER_MS) {
        this.#entries.delete(key);
        this.#entries.set(key, entry);
      }
      entry.lastUsed = now;
    } else {
      entry = { value: create(), lastUsed: now };
      this.#entries.set(key, entry);
    }
    if (this.#entries.size > this.#maxHosts || now - this.#swept >= REORDER_MS)
      this.sweep(now, key);
    return entry.value;
  }

  /** The entry for `key`, without creating or touching it. */
  peek(key: string): P | undefined {
    return this.#entries.get(key)?.value;
  }

  /** Every entry, least recently used first. */
  values(): IterableIterator<P> {
    return [...this.#entries.values()].map((e) => e.value)[Symbol.iterator]();
  }

  /** Every key and entry. */
  *[Symbol.iterator](): IterableIterator<[string, P]> {
    for (const [key, entry] of this.#entries) yield [key, entry.value];
  }

  /**
   * Drops idle entries past their time, and the least recently used ones past `maxHosts`.
   * @param keep a key never dropped by this sweep: the one {@link get} is about to hand out (when
   *   every entry ahead of it is busy, it is the least recently used idle one, yet about to run).
   */
  sweep(now = this.#clock.now(), keep?: string): void {
    this.#swept = now;
    let examined = 0;
    for (const [key, entry] of this.#entries) {
      if (examined++ >= SWEEP_LIMIT) break;
      if (key === keep) continue;
      const over = this.#entries.size > this.#maxHosts;
      const idle = now - entry.lastUsed >= this.#idleMs;
      if (!over && !idle) break;
      this.#entries.delete(key);
      if (entry.value.busy) {
        // In use (a long poll): kept, and moved out of the way to the back, so that the entries
        // behind it can go. Skipping it in place would let a few busy hosts at the front stop
        // every later sweep, and the registry grow without bound.
        this.#entries.set(key, entry);
        continue;
      }
      this.#onEvict(key, entry.value);
    }
  }

  /** Drops every entry (calling `onEvict` for each). */
  clear(): void {
    for (const [key, entry] of this.#entries) this.#onEvict(key, entry.value);
    this.#entries.clear();
  }
}

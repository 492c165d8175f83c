/**
 * What a host's queue is made of: the line of waiting entries (a doubly linked list with O(1)
 * insertion at either end and removal of any entry: a request that aborts leaves from the middle
 * of the line), and the one alarm that wakes the line when the shortest wait it was told runs out.
 *
 * @module
 */
import type { Clock } from '../../shared/clock.js';

/** What an entry of a {@link Line} carries. */
export interface InLine {
  prev?: InLine | undefined;
  next?: InLine | undefined;
}

/** See the module comment. */
export class Line<T extends InLine> {
  #head: T | undefined;
  #tail: T | undefined;
  /** The last entry of the front part (the entries added with `front`), if any. */
  #lastFront: T | undefined;
  /** Entries in the line. */
  size = 0;

  /** The first entry, if any. */
  get first(): T | undefined {
    return this.#head;
  }

  /**
   * Puts `entry` at the back of the front part (`front`: ahead of every entry added without it,
   * behind those added with it before) or at the back of the line. First come, first served within
   * each part: an entry that comes back to the front does not overtake the others waiting there.
   */
  add(entry: T, front: boolean): void {
    const after = front ? this.#lastFront : this.#tail;
    if (front) this.#lastFront = entry;
    // After `after`, or at the head when there is none (an empty line, or no front part yet).
    const next = after ? after.next : this.#head;
    entry.prev = after;
    entry.next = next;
    if (after) after.next = entry;
    else this.#head = entry;
    if (next) next.prev = entry;
    else this.#tail = entry;
    this.size++;
  }

  /** Whether `entry` is in the line. */
  has(entry: T): boolean {
    return entry.prev !== undefined || this.#head === entry;
  }

  /** Takes `entry` out of the line (it must be in it). */
  remove(entry: T): void {
    // The front part is a prefix of the line: its last entry gone, the one before it is the last.
    if (entry === this.#lastFront) this.#lastFront = entry.prev as T | undefined;
    if (entry.prev) entry.prev.next = entry.next;
    else this.#head = entry.next as T | undefined;
    if (entry.next) entry.next.prev = entry.prev;
    else this.#tail = entry.prev as T | undefined;
    entry.prev = undefined;
    entry.next = undefined;
    this.size--;
  }
}

const noop = () => {};

/**
 * One timer on the injected clock that calls `wake` at the earliest time it was set for: setting
 * it later than it already rings changes nothing, earlier moves it.
 */
export class Alarm {
  #timer: AbortController | undefined;
  #at = Number.POSITIVE_INFINITY;

  readonly #clock: Clock;
  readonly #wake: () => void;
  constructor(clock: Clock, wake: () => void) {
    this.#clock = clock;
    this.#wake = wake;
  }

  /** Rings in `waitMs` milliseconds (at least 1), unless it rings sooner already. */
  set(waitMs: number): void {
    const ms = Math.max(1, waitMs);
    const at = this.#clock.now() + ms;
    if (this.#timer && this.#at <= at) return;
    this.stop();
    const timer = new AbortController();
    this.#timer = timer;
    this.#at = at;
    this.#clock.sleep(ms, timer.signal).then(() => {
      if (this.#timer !== timer) return;
      this.#timer = undefined;
      this.#at = Number.POSITIVE_INFINITY;
      this.#wake();
    }, noop);
  }

  /** Will not ring. */
  stop(): void {
    this.#timer?.abort();
    this.#timer = undefined;
    this.#at = Number.POSITIVE_INFINITY;
  }
}

/**
 * Timeouts for many calls that share one duration, with one timer: calls time out in the order
 * they started, so they queue in that order, and the one timer is armed for the oldest call still
 * waiting. Starting and ending a call cost an object and no timer (a `setTimeout` per call costs
 * more than the rest of the call's bookkeeping).
 *
 * @module
 */
import { unrefTimer } from '../shared/clock.js';

/**
 * One call's wait: {@link Deadlines.start} makes one for a call, or the call is its own wait
 * ({@link Deadlines.enqueue}: one object less per call). The caller marks it `done`.
 */
export interface Wait {
  /** When the call times out, `Date.now()` milliseconds. */
  at: number;
  /** Set by the caller when the call settled: the wait is then dropped when it reaches the head. */
  done: boolean;
  /** Called if the call is not done by `at` (after `done` is set). */
  expire(): void;
}

/** The wait {@link Deadlines.start} makes for a call that is not its own wait. */
class CallWait implements Wait {
  done = false;
  constructor(
    public at: number,
    readonly call: { expire(): void },
  ) {}

  expire(): void {
    this.call.expire();
  }
}

/** A queue of waits of `ms` milliseconds each, expired by one unref'd timer. */
export class Deadlines {
  readonly #ms: number;
  #queue: Wait[] = [];
  #head = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #sweeping = false;

  /** @param ms how long each wait lasts, in milliseconds (at least 1). */
  constructor(ms: number) {
    this.#ms = ms;
  }

  /** Waits held: not yet dropped (settled ones are dropped when they reach the head). */
  get size(): number {
    return this.#queue.length - this.#head;
  }

  /** Starts a wait that calls `call.expire()` after the duration unless marked `done` first. */
  start(call: { expire(): void }): Wait {
    const wait = new CallWait(0, call);
    this.enqueue(wait);
    return wait;
  }

  /**
   * Starts `wait` (a call that is its own wait): sets its `at` to the duration from now and its
   * `done` to false; its `expire()` is called then unless it is marked `done` first.
   */
  enqueue(wait: Wait): void {
    wait.at = Date.now() + this.#ms;
    wait.done = false;
    const queue = this.#queue;
    // Calls mostly end in the order they started: drop the settled ones at the head now rather
    // than at the next sweep, so that a long timeout does not keep every settled wait alive until
    // then (garbage that grows with the timeout times the call rate).
    // (Not while a sweep runs: an expiry's listener may start a call, and the sweep holds the queue.)
    if (!this.#sweeping) {
      let head = this.#head;
      while (head < queue.length && (queue[head] as Wait).done) head += 1;
      if (head === queue.length) {
        queue.length = 0;
        head = 0;
      } else if (head > 1024 && head * 2 > queue.length) {
        this.#queue = queue.slice(head);
        head = 0;
      }
      this.#head = head;
    }
    this.#queue.push(wait);
    if (this.#timer === undefined) this.#arm(this.#ms);
  }

  #arm(ms: number): void {
    this.#timer = setTimeout(() => {
      // A reply that arrived while the event loop was busy is read before the waits expire: Node
      // runs due timers before it reads the sockets, so the sweep waits for setImmediate.
      setImmediate(() => this.#sweep());
    }, ms);
    unrefTimer(this.#timer);
  }

  /** Expires the waits that are due, drops those done, and re-arms for the next one. */
  #sweep(): void {
    this.#sweeping = true;
    try {
      this.#expire();
    } finally {
      this.#sweeping = false;
    }
  }

  #expire(): void {
    this.#timer = undefined;
    const now = Date.now();
    const queue = this.#queue;
    while (this.#head < queue.length) {
      const wait = queue[this.#head] as Wait;
      if (!wait.done && wait.at > now) break;
      this.#head += 1;
      if (!wait.done) {
        wait.done = true;
        wait.expire();
      }
    }
    if (this.#head >= queue.length) {
      this.#queue = [];
      this.#head = 0;
      return;
    }
    if (this.#head > 1024 && this.#head * 2 > queue.length) {
      this.#queue = queue.slice(this.#head);
      this.#head = 0;
    }
    this.#arm(Math.max(1, (this.#queue[this.#head] as Wait).at - now));
  }
}

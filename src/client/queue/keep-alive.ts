/**
 * Keeping the process alive while calls wait. The clock's timers never hold a Node process open
 * (they are `unref`'d), which is right for housekeeping but wrong for a call someone awaits: a
 * script whose only work is a request held for a second must not exit with it unresolved, any more
 * than it would during a slow fetch. While at least one call waits (in a queue, or between
 * retries), one long timer that is *not* unref'd keeps the process up; it is cleared when the
 * last one stops waiting.
 *
 * @module
 */

const noop = () => {};
const LONG_MS = 2 ** 30;

/** A counter of waiting calls and the one timer that keeps the process up while it is above 0. */
export class KeepAlive {
  #count = 0;
  #timer: ReturnType<typeof setInterval> | undefined;

  /** Counts a waiting call; returns the function (idempotent) that ends its wait. */
  acquire(): () => void {
    if (this.#count++ === 0) this.#timer = setInterval(noop, LONG_MS);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (--this.#count === 0) {
        clearInterval(this.#timer);
        this.#timer = undefined;
      }
    };
  }

  /** Calls waiting now. */
  get waiting(): number {
    return this.#count;
  }
}

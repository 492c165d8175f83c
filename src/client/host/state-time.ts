/**
 * The time line of the hosts' state. The rules record moments in the state as epoch milliseconds
 * (a hold's end, a reset, the client bucket's last refill) and read them back against the time of
 * each request, so every writer and reader of a state must share one time line:
 *
 * - **A store with a clock of its own** (`StateStore.now`: `RedisStore` reads Redis's `TIME`): its
 *   clock, for every process sharing it, so that a process whose clock is an hour ahead does not
 *   hold the others for an hour after one `Retry-After: 1`. The time is read when a transaction
 *   runs ({@link StateTime.live}), after the store has heard from its server.
 * - **Otherwise** the client's clock, made steady: never earlier than a time it gave before. A wall
 *   clock stepped back by NTP moves the state's time line on from where it was, so a 1 s hold
 *   still lasts a second (recorded against the raw clock, it lasted an hour and a second). A step
 *   forward cannot be told from a pause of the process: what was due is due.
 *
 * Times leave the state converted back to the client's clock (`Settled.holdUntil`, `stats()`).
 *
 * @module
 */
import type { Clock } from '../../shared/clock.js';
import type { StateStore } from './store.js';

/** See the module comment. One per client, shared by its hosts. */
export class StateTime {
  /** The state's time minus the clock's, in milliseconds, while the clock is made steady. */
  #shift = 0;
  /** The last state time given on the steady clock. */
  #last = Number.NEGATIVE_INFINITY;
  readonly #clock: Clock;
  readonly #store: StateStore;
  /**
   * Reads the state time when a transaction runs, for a store with a clock of its own (its clock
   * may be unknown until it hears from its server); `undefined` for the others, whose transactions
   * take the time the call passed.
   */
  readonly live: (() => number) | undefined;

  constructor(clock: Clock, store: StateStore) {
    this.#clock = clock;
    this.#store = store;
    this.live = typeof store.now === 'function' ? () => this.at(clock.now()) : undefined;
  }

  /** The state's time, epoch milliseconds, when the client's clock reads `now`. */
  at(now: number): number {
    if (this.live !== undefined) {
      const shared = (this.#store.now as () => number | undefined)();
      if (shared !== undefined) return now + (shared - this.#clock.now());
    }
    // The clock as it is (no new number: epoch milliseconds are heap numbers) until it goes back.
    if (this.#shift === 0 && now >= this.#last) {
      this.#last = now;
      return now;
    }
    let t = now + this.#shift;
    if (t < this.#last) {
      // The clock went back: the state's time goes on from where it was.
      this.#shift = this.#last - now;
      t = this.#last;
    }
    this.#last = t;
    return t;
  }
}

/**
 * A request holds its slot until its response ends, not until its headers arrive: a server that
 * limits concurrent requests counts one until the last byte of its body is sent, so a slow body or
 * an event stream (an LLM completion) is still in flight. This module keeps the slots of a host's
 * answered attempts whose bodies are still open, and gives each back once: when its body is read
 * to the end, cancelled or fails (whoever watches the body says so: `body-watch.ts` for a fetch
 * `Response`, the undici interceptor for its own), or when nobody has read it for
 * {@link BODY_GRACE_MS}.
 *
 * **The grace.** A caller that never reads nor cancels a body (it only wanted the status, or it
 * dropped the response) must not hold the slot for ever, and would otherwise stall every call
 * queued behind it. A slot is idle while no read of its body is pending: from when the response is
 * handed over until a read starts, and between two reads of a stream. Idle for the grace, it is
 * given back; the body is left alone and can still be read. One second, because code that reads a
 * body does so at once (microseconds after the response arrives), while code that collects
 * responses before reading them (`await Promise.all(urls.map(fetch))`, then each body) holds its
 * first answers unread until the last one is admitted: with a cap below the number of calls, every
 * such wave waits out the grace, so the grace is what that pattern costs per wave. A server sees
 * an unread body end as soon as its socket buffers take it (small bodies at once), so holding a
 * slot longer for one protects little. Not an option: reading or cancelling a body
 * (`response.body?.cancel()`) gives its slot back at once.
 *
 * One alarm per host on the injected clock: the idle slots are a line in the order they became
 * idle, and the alarm rings when the first of them has been idle for the grace. A body read as
 * soon as it arrives costs two O(1) moves in the line and no timer of its own.
 *
 * @module
 */
import type { Clock } from '../../shared/clock.js';
import { Alarm, type InLine, Line } from '../queue/line.js';

/**
 * How long a response body nobody reads keeps its request's slot, in milliseconds (see the module
 * comment).
 */
export const BODY_GRACE_MS = 1000;

const IDLE = 0;
const READING = 1;
const ENDED = 2;

/** What whoever watches a body tells its request's slot (`body-watch.ts`, the undici interceptor). */
export interface Slot {
  /** Whether the slot was given back. */
  readonly ended: boolean;
  /** A read of the body is pending, or the body is being consumed whole: no grace runs. */
  reading(): void;
  /** Nobody reads the body now: the grace starts. */
  idle(): void;
  /** The body ended, was cancelled or failed: the slot comes back (once; later calls do nothing). */
  end(): void;
}

/**
 * The slot of one answered attempt whose body is open, with what its host needs to give it back
 * (`D`). Made `reading`: the call holds it until it returns the response (then it goes `idle`).
 */
export class BodySlot<D = unknown> implements InLine, Slot {
  prev: BodySlot<D> | undefined;
  next: BodySlot<D> | undefined;
  /** Since when it is idle, epoch milliseconds on the host's clock. */
  idleSince = 0;
  #state = READING;

  readonly #bodies: OpenBodies<D>;
  /** What the host's `onEnd` is given (see {@link OpenBodies}). */
  readonly data: D;
  constructor(bodies: OpenBodies<D>, data: D) {
    this.#bodies = bodies;
    this.data = data;
  }

  /** Whether the slot was given back. */
  get ended(): boolean {
    return this.#state === ENDED;
  }

  /** A read of the body is pending, or the body is being consumed whole: no grace runs. */
  reading(): void {
    if (this.#state === IDLE) this.#bodies.unwatch(this);
    if (this.#state !== ENDED) this.#state = READING;
  }

  /** Nobody reads the body now: the grace starts. */
  idle(): void {
    if (this.#state === READING) {
      this.#state = IDLE;
      this.#bodies.watch(this);
    }
  }

  /** The body ended, was cancelled or failed (or the grace ran out): the slot comes back, once. */
  end(): void {
    if (this.#state === ENDED) return;
    if (this.#state === IDLE) this.#bodies.unwatch(this);
    this.#state = ENDED;
    this.#bodies.onEnd(this.data);
  }
}

/** The open bodies of one host, and the alarm of their grace (see the module comment). */
export class OpenBodies<D = unknown> {
  readonly #idle = new Line<BodySlot<D>>();
  readonly #alarm: Alarm;

  readonly #clock: Clock;
  readonly #graceMs: number;
  /**
   * @param onEnd gives a slot back (once per slot), with the slot's `data`.
   * @param graceMs see {@link BODY_GRACE_MS} (a test may shorten it).
   */
  constructor(
    clock: Clock,
    readonly onEnd: (data: D) => void,
    graceMs = BODY_GRACE_MS,
  ) {
    this.#clock = clock;
    this.#graceMs = graceMs;
    this.#alarm = new Alarm(clock, () => this.#sweep());
  }

  /** A slot for an answered attempt, held (`reading`) until its body is watched or let go. */
  hold(data: D): BodySlot<D> {
    return new BodySlot(this, data);
  }

  /** {@link BodySlot.idle}: in line for the grace. */
  watch(slot: BodySlot<D>): void {
    slot.idleSince = this.#clock.now();
    this.#idle.add(slot, false);
    if (this.#idle.size === 1) this.#alarm.set(this.#graceMs);
  }

  /** {@link BodySlot.reading} or {@link BodySlot.end}: out of the line. */
  unwatch(slot: BodySlot<D>): void {
    this.#idle.remove(slot);
  }

  /** Stops the alarm (the host is closed); slots still end with their bodies. */
  close(): void {
    this.#alarm.stop();
  }

  /** Gives back every slot idle for the grace; rings again for the next one. */
  #sweep(): void {
    const now = this.#clock.now();
    for (let slot = this.#idle.first; slot !== undefined; slot = this.#idle.first) {
      // A clock that stepped back: the grace counts from now, never longer.
      if (slot.idleSince > now) slot.idleSince = now;
      const left = slot.idleSince + this.#graceMs - now;
      if (left > 0) {
        this.#alarm.set(left);
        return;
      }
      slot.end();
    }
  }
}

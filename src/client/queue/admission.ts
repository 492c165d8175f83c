/**
 * The admission queue of one host: the concurrency cap, the bounded FIFO queue with its timeout,
 * and the wait for whatever the shared state says (learned limits, holds, the client bucket).
 *
 * A request that finds the queue empty and room everywhere is admitted at once, with one call to
 * the store. Otherwise it waits in line; the head of the line is re-examined when an attempt ends
 * (a slot frees, a report arrives) and when the shortest wait the state announced runs out, on a
 * single timer per host. A request that aborts or times out while waiting leaves the line at once
 * and has taken nothing. A request with `priority` (a retry the server timed) goes ahead of first
 * attempts, in the order they came back: the oldest calls finish first. A retry that waits for the
 * pace asks for none (`call-run.ts`): it waits behind the others, so the pace's turns rotate among
 * the waiting calls (against a host that refuses everything, or one route of it, its probes are
 * not all one call's).
 *
 * This is p-limit's job plus waits that depend on time and on shared state, per-entry removal,
 * a bound and a timeout, which p-limit does not offer; so it is its own small queue.
 *
 * @module
 */
import { abortReason } from '../../shared/clock.js';
import { QueueFullError, QueueTimeoutError, type RequestContext } from '../../shared/errors.js';
import { onAbort } from '../call/signals.js';
import type { MaybePromise } from '../host/store.js';
import type { Ticket, WaitReason } from '../rules/contract.js';
import type { AdmitResult } from '../rules/host-rules.js';
import type { AdmissionDeps, AdmissionRequest } from './admission-deps.js';
import type { Slots } from './host-slots.js';
import { Alarm, type InLine, Line } from './line.js';
import { refusalOf } from './refusals.js';

/** How often a wait for "another answer" re-reads shared state (another process may answer). */
export const POLL_MS = 250;

interface Waiter extends InLine {
  req: AdmissionRequest;
  resolve(ticket: Ticket): void;
  reject(error: unknown): void;
  held: number;
  cleanup: (() => void) | undefined;
}

const noop = () => {};

/** See the module comment. */
export class Admission {
  /** Attempts this line admitted and not yet ended (an answer ends when its body does). */
  #own = 0;
  readonly #slots: Slots;
  readonly #line = new Line<Waiter>();
  #draining = false;
  #again = false;
  /** Wakes the line when the shortest wait the state announced runs out. */
  readonly #alarm: Alarm;
  #endWait: (() => void) | undefined;
  /** Set by {@link close}: the error every request gets from then on. */
  #closed: ((ctx: RequestContext) => unknown) | undefined;

  readonly #deps: AdmissionDeps;
  constructor(deps: AdmissionDeps) {
    this.#deps = deps;
    this.#slots = deps.slots;
    this.#slots.join(this);
    this.#alarm = new Alarm(deps.clock, () => this.kick());
  }

  /** Attempts in flight over every line of the host (`open-bodies.ts` says when one ends). */
  get inFlight(): number {
    return this.#slots.inFlight;
  }

  /** Takes a slot (the caller checked there is one). */
  #take(): void {
    this.#slots.inFlight++;
    this.#own++;
  }

  /** Gives a slot back without waking anyone (the caller goes on with the line). */
  #untake(): void {
    this.#slots.inFlight--;
    this.#own--;
  }

  /** Requests waiting, in this line and every other line of the host. */
  get queueLength(): number {
    return this.#slots.queued;
  }

  /** Whether anything is in flight or waiting (a busy host is never evicted). */
  get busy(): boolean {
    return this.#own > 0 || this.#line.size > 0 || this.#draining;
  }

  /**
   * Waits for room and admits one attempt, without a turn of the event loop when none is needed:
   * with room, an empty line and a store that answers at once (the memory store), the ticket
   * itself; otherwise a promise. Every refusal is a rejected promise (this never throws): the
   * signal's reason on abort, `QueueFullError`, `QueueTimeoutError`, or `RateLimitError` when the
   * server's limit would hold the request longer than `maxWaitMs`. `await` only a promise.
   */
  admit(req: AdmissionRequest): MaybePromise<Ticket> {
    if (this.#closed) return Promise.reject(this.#closed(req.ctx));
    if (req.signal?.aborted) return Promise.reject(abortReason(req.signal));
    if (this.#line.size === 0 && !this.#draining && this.#slots.inFlight < this.#slots.cap) {
      this.#take();
      let result: MaybePromise<AdmitResult>;
      try {
        result = this.#deps.tryAdmit(
          req.cost,
          req.firstAttempt,
          req.now ?? this.#deps.clock.now(),
          req.flightTtlMs,
        );
      } catch (error) {
        this.#untake();
        return Promise.reject(error);
      }
      if (typeof (result as Promise<AdmitResult>).then === 'function') {
        return (result as Promise<AdmitResult>).then(
          (answer) => this.#admitted(answer, req),
          (error) => {
            this.#untake();
            throw error;
          },
        );
      }
      return this.#admitted(result as AdmitResult, req);
    }
    return this.#enqueue(req);
  }

  /** The fast path's answer: the ticket, a refusal, or a place in line. */
  #admitted(result: AdmitResult, req: AdmissionRequest): MaybePromise<Ticket> {
    if (result.ok) return result.ticket;
    this.#untake();
    const refusal = refusalOf(result, req, this.#deps.reasons.serverWaits);
    if (refusal) return Promise.reject(refusal);
    return this.#enqueue(req);
  }

  #enqueue(req: AdmissionRequest): Promise<Ticket> {
    // Closed while the store answered: no place in a line that will not move.
    if (this.#closed) return Promise.reject(this.#closed(req.ctx));
    if (this.#slots.queued >= this.#deps.maxQueue) {
      return Promise.reject(new QueueFullError(this.#deps.maxQueue, req.ctx));
    }
    return new Promise<Ticket>((resolve, reject) => {
      const waiter: Waiter = {
        req,
        resolve,
        reject,
        held: 0,
        cleanup: undefined,
      };
      this.#watch(waiter);
      this.#insert(waiter);
      this.#deps.onQueued(req.ctx, this.#slots.queued);
      this.kick();
    });
  }

  /** Ends an admitted attempt (its answer's body included): frees its slot, lets the line move. */
  release(): void {
    if (this.#own > 0) this.#own--;
    this.#slots.release(this);
  }

  /**
   * Hands an admitted attempt's slot to another line of the same host (its answer was taken in
   * there: `pipeline.ts`); that line's release ends it. The host's count does not change.
   */
  handOver(to: Admission): void {
    if (to === this) return;
    if (this.#own > 0) this.#own--;
    to.#own++;
  }

  /** Re-examines the line now (the shared state changed). */
  kick(): void {
    if (this.#line.size > 0) void this.#drain();
  }

  /** Rejects everyone waiting, and every later request, with `error`; stops the timer. */
  close(error: (ctx: RequestContext) => unknown): void {
    this.#closed = error;
    this.#alarm.stop();
    this.#slots.leave(this);
    for (let w = this.#line.first; w !== undefined; w = this.#line.first) {
      this.#remove(w);
      w.reject(error(w.req.ctx));
    }
  }

  #watch(w: Waiter): void {
    const { signal } = w.req;
    const timeoutMs = this.#deps.queueTimeoutMs;
    if (!signal && !Number.isFinite(timeoutMs)) return;
    const stop = Number.isFinite(timeoutMs) ? new AbortController() : undefined;
    // One listener on a signal shared by many waiting calls, not one each.
    const unwatch = signal ? onAbort(signal, () => this.#leave(w, abortReason(signal))) : undefined;
    if (stop) {
      this.#deps.clock
        .sleep(timeoutMs, stop.signal)
        .then(() => this.#leave(w, new QueueTimeoutError(timeoutMs, w.req.ctx)), noop);
    }
    w.cleanup = () => {
      unwatch?.();
      stop?.abort();
    };
  }

  #leave(w: Waiter, error: unknown): void {
    if (!this.#isQueued(w)) return;
    this.#remove(w);
    w.reject(error);
    if (this.#line.size === 0) this.#alarm.stop();
    else this.kick();
  }

  #isQueued(w: Waiter): boolean {
    return this.#line.has(w);
  }

  #insert(w: Waiter): void {
    this.#line.add(w, w.req.priority);
    this.#slots.queued++;
    if (this.#line.size === 1) this.#endWait = this.#deps.keepAlive();
  }

  #remove(w: Waiter): void {
    this.#line.remove(w);
    this.#slots.queued--;
    if (this.#line.size === 0) {
      this.#endWait?.();
      this.#endWait = undefined;
    }
    w.cleanup?.();
    w.cleanup = undefined;
  }

  async #drain(): Promise<void> {
    if (this.#draining) {
      this.#again = true;
      return;
    }
    this.#draining = true;
    try {
      do {
        this.#again = false;
        await this.#drainOnce();
      } while (this.#again);
    } finally {
      this.#draining = false;
    }
  }

  async #drainOnce(): Promise<void> {
    for (
      let w = this.#line.first;
      w !== undefined && this.#slots.inFlight < this.#slots.cap;
      w = this.#line.first
    ) {
      this.#take();
      let result: AdmitResult;
      try {
        result = await this.#deps.tryAdmit(
          w.req.cost,
          w.req.firstAttempt,
          this.#deps.clock.now(),
          w.req.flightTtlMs,
        );
      } catch (error) {
        this.#untake();
        this.#leave(w, error);
        continue;
      }
      if (!this.#isQueued(w)) {
        // It left (abort, timeout) while the store answered: give the admission back.
        this.#untake();
        if (result.ok) {
          try {
            await this.#deps.giveBack(result.ticket, w.req.ctx);
          } catch {
            // Nothing to do: the request is gone, and the line must move on.
          }
        }
        continue;
      }
      if (result.ok) {
        this.#remove(w);
        w.resolve(result.ticket);
        continue;
      }
      this.#untake();
      const refusal = refusalOf(result, w.req, this.#deps.reasons.serverWaits);
      if (refusal) {
        this.#remove(w);
        w.reject(refusal);
        continue;
      }
      // An attempt waits for a rule of the host; `budget` and `circuit-open` answer other requests.
      const reason = result.reason as WaitReason;
      // A reason no rule declared has no bit: reported at each look rather than never.
      const bit = this.#deps.reasons.heldBits.get(reason) ?? 0;
      if (bit === 0 || (w.held & bit) === 0) {
        w.held |= bit;
        this.#deps.onHeld(w.req.ctx, reason, result.waitMs, result.policy);
      }
      this.#alarm.set(result.waitMs ?? POLL_MS);
      return;
    }
  }
}

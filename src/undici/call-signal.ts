/**
 * The abort signal an intercepted call hands the pipeline.
 *
 * The pipeline takes a call's signal to stop its waits (the queue, a hold, a backoff) and its
 * attempt. Of `AbortSignal` it uses `aborted`, `reason`, and one listener on `'abort'` added and
 * removed (see `client/signals.ts`); this class is that much and no more. An `AbortSignal` would
 * do, but on Node 20 making one costs about 5 µs and a listener on it about 3 µs, more than the
 * rest of the interceptor together, for every request, when hardly any is ever aborted.
 *
 * It never reaches fetch or undici (which would refuse it): the pipeline hands an attempt's
 * signal only to the send function of the call, which watches it as the pipeline does. The tests
 * abort calls in every place the pipeline waits, so a use of another member would show there.
 *
 * @module
 */

type AbortListener = EventListenerOrEventListenerObject;

/** See the module comment. */
export class CallSignal {
  aborted = false;
  reason: unknown = undefined;
  /** Few: the pipeline coalesces its watchers into one listener per signal. */
  #listeners: AbortListener[] | undefined;

  /** Adds an `'abort'` listener (once: a signal aborts once); other event types are ignored. */
  addEventListener(type: string, listener: AbortListener | null): void {
    if (type !== 'abort' || listener === null || this.aborted) return;
    if (this.#listeners === undefined) this.#listeners = [listener];
    else if (!this.#listeners.includes(listener)) this.#listeners.push(listener);
  }

  /** Removes an `'abort'` listener. */
  removeEventListener(type: string, listener: AbortListener | null): void {
    if (type !== 'abort' || listener === null || this.#listeners === undefined) return;
    const index = this.#listeners.indexOf(listener);
    if (index !== -1) this.#listeners.splice(index, 1);
  }

  /** Throws the reason when aborted, as `AbortSignal.throwIfAborted` does. */
  throwIfAborted(): void {
    if (this.aborted) throw this.reason;
  }

  /**
   * Aborts with `reason` (a `DOMException` named `AbortError` when undefined), once; calls every
   * listener. A listener that throws is reported as an uncaught error, as `EventTarget` does.
   */
  abort(reason?: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason ?? new DOMException('This operation was aborted', 'AbortError');
    const listeners = this.#listeners ?? [];
    this.#listeners = undefined;
    const event = new Event('abort');
    for (const listener of listeners) {
      try {
        if (typeof listener === 'function') listener(event);
        else listener.handleEvent(event);
      } catch (error) {
        queueMicrotask(() => {
          throw error;
        });
      }
    }
  }

  /** This signal, typed as what the pipeline takes (see the module comment). */
  asAbortSignal(): AbortSignal {
    return this as unknown as AbortSignal;
  }
}

/**
 * A small typed event emitter. `on` returns a disposer; emitting to an event nobody listens to costs
 * one property read, and callers check {@link Emitter.has} before building a payload, so a quiet
 * client pays nothing for its events.
 *
 * A listener that throws does not break the pipeline: the error is reported with `queueMicrotask`
 * (an uncaught exception, as an `EventTarget` would), or to the `onListenerError` given (the mock
 * server and the Redis store warn instead: a listener's mistake must not take a server down), and
 * the other listeners still run. The one emitter of the package: the client's, the mock server's
 * and the Redis store's events all go through it.
 *
 * @module
 */

/** A map from event name to its payload type. */
export type EventMap = object;

/** A listener for one event. */
export type Listener<T> = (event: T) => void;

/** A typed emitter; see the module comment. */
export class Emitter<E extends EventMap> {
  // Null-prototype: a name from JavaScript callers (`'__proto__'`) is a name like any other.
  readonly #listeners: { [K in keyof E]?: Listener<E[K]>[] } = Object.create(null);
  readonly #onListenerError: ((error: unknown, name: keyof E) => void) | undefined;

  /** @param onListenerError what a listener's error goes to; by default, an uncaught exception. */
  constructor(onListenerError?: (error: unknown, name: keyof E) => void) {
    this.#onListenerError = onListenerError;
  }

  /**
   * Adds a listener. Returns a function that removes it (idempotent).
   * @example const dispose = client.on('retry', (e) => log(e)); dispose();
   */
  on<K extends keyof E>(name: K, listener: Listener<E[K]>): () => void {
    const list = this.#listeners[name];
    // Copy on write: an emit in progress keeps iterating the array it started with.
    this.#listeners[name] = list ? [...list, listener] : [listener];
    return () => this.off(name, listener);
  }

  /** Removes a listener added with {@link on}; removing one that is not there does nothing. */
  off<K extends keyof E>(name: K, listener: Listener<E[K]>): void {
    const list = this.#listeners[name];
    if (!list) return;
    const index = list.indexOf(listener);
    if (index === -1) return;
    const next = list.filter((_, i) => i !== index);
    if (next.length > 0) this.#listeners[name] = next;
    else delete this.#listeners[name];
  }

  /** Whether anyone listens to `name`. Check it before building a payload. */
  has(name: keyof E): boolean {
    return this.#listeners[name] !== undefined;
  }

  /** Calls every listener of `name` with `event`. */
  emit<K extends keyof E>(name: K, event: E[K]): void {
    const list = this.#listeners[name];
    if (!list) return;
    for (const listener of list) {
      try {
        listener(event);
      } catch (error) {
        if (this.#onListenerError) this.#onListenerError(error, name);
        else
          queueMicrotask(() => {
            throw error;
          });
      }
    }
  }

  /** Removes every listener. */
  clear(): void {
    for (const name of Object.keys(this.#listeners)) delete this.#listeners[name as keyof E];
  }
}

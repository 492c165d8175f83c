/**
 * Time and chance, injected. Every algorithm and policy in this package takes a {@link Clock}
 * instead of calling `Date.now()`, `setTimeout` or `Math.random()` itself, so tests run on fake
 * time and a fleet's jitter can be made deterministic.
 *
 * @module
 */

/** The source of time and randomness used by every algorithm and policy. */
export interface Clock {
  /** Current time in epoch milliseconds. May move backwards (NTP); callers must tolerate it. */
  now(): number;
  /**
   * Resolves after `ms` milliseconds (0 and negative values resolve on the next macrotask).
   * Rejects with the signal's reason as soon as `signal` aborts, and clears its timer.
   * The timer never keeps a Node process alive on its own.
   */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** A uniformly distributed number in [0, 1). */
  random(): number;
}

/** True for what a `clock` option accepts: an object with `now`, `sleep` and `random` functions. */
export function isClock(value: unknown): value is Clock {
  const c = value as Clock | null;
  return (
    typeof c === 'object' &&
    c !== null &&
    typeof c.now === 'function' &&
    typeof c.sleep === 'function' &&
    typeof c.random === 'function'
  );
}

/** What a `clock` option must be, as an `InvalidOptionError` says it. */
export const CLOCK_PROBLEM = 'must be a Clock (an object with now(), sleep() and random())';

/** Longest single `setTimeout` the platforms accept (about 24.8 days), in milliseconds. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Sleeps on real timers. The timer is `unref`'d where the platform supports it, so a pending sleep
 * does not hold a Node process open; an `AbortSignal` cancels it at once.
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(abortReason(signal));
  return new Promise<void>((resolve, reject) => {
    const delay = Number.isFinite(ms) ? Math.min(Math.max(0, ms), MAX_TIMER_MS) : MAX_TIMER_MS;
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortReason(signal as AbortSignal));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, delay);
    unrefTimer(timer);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** The real clock: `Date.now()`, {@link sleep} and `Math.random()`. */
export const systemClock: Clock = Object.freeze({
  now: () => Date.now(),
  sleep,
  random: () => Math.random(),
});

/** Lets a timer not keep the process alive, on runtimes whose timers support `unref`. */
export function unrefTimer(timer: unknown): void {
  if (typeof timer === 'object' && timer !== null && 'unref' in timer) {
    const unref = (timer as { unref?: unknown }).unref;
    if (typeof unref === 'function') unref.call(timer);
  }
}

/** The reason an aborted signal carries, or a DOMException named AbortError when it has none. */
export function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

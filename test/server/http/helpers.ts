/**
 * Test helpers for the mock server: a clock whose time and sleeps the test drives, and small
 * waits on events (never on elapsed time).
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Clock } from '../../../src/shared/clock.js';

interface Sleeper {
  until: number;
  ms: number;
  resolve: () => void;
}

/**
 * A {@link Clock} on fake time. `sleep` resolves only when {@link FakeClock.advance} moves time past
 * its deadline (or rejects when its signal aborts); `random()` returns `randomValue`.
 */
export class FakeClock implements Clock {
  #now: number;
  #sleepers: Sleeper[] = [];
  /** What `random()` returns. */
  randomValue = 0;
  /** Every duration ever passed to `sleep`, in order. */
  readonly slept: number[] = [];

  constructor(now = Date.UTC(2026, 10, 30, 12, 0, 0)) {
    this.#now = now;
  }

  now(): number {
    return this.#now;
  }

  random(): number {
    return this.randomValue;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    this.slept.push(ms);
    return new Promise<void>((resolve, reject) => {
      const sleeper: Sleeper = { until: this.#now + Math.max(0, ms), ms, resolve };
      this.#sleepers.push(sleeper);
      signal?.addEventListener(
        'abort',
        () => {
          this.#sleepers = this.#sleepers.filter((s) => s !== sleeper);
          reject(signal.reason);
        },
        { once: true },
      );
    });
  }

  /** Durations of the sleeps still pending. */
  get pending(): number[] {
    return this.#sleepers.map((s) => s.ms);
  }

  /** Moves time forward and wakes the sleeps that are due, earliest first. */
  advance(ms: number): void {
    this.#now += ms;
    const due = this.#sleepers.filter((s) => s.until <= this.#now);
    this.#sleepers = this.#sleepers.filter((s) => s.until > this.#now);
    for (const s of due.sort((a, b) => a.until - b.until)) s.resolve();
  }
}

/**
 * Resolves once `condition()` holds, checking after each turn of the event loop (then every
 * millisecond, for conditions that wait on another process). Gives up after 10 s, a safety net for
 * a broken test rather than a measurement.
 */
export async function until(condition: () => boolean, what = 'condition'): Promise<void> {
  const giveUpAt = Date.now() + 10_000;
  for (let turn = 0; !condition(); turn++) {
    if (Date.now() > giveUpAt) throw new Error(`gave up waiting for ${what}`);
    await new Promise((resolve) => (turn < 1000 ? setImmediate(resolve) : setTimeout(resolve, 1)));
  }
}

let gc: (() => void) | undefined;

/**
 * Runs a full garbage collection, so that memory measured next is what is still referenced. Works
 * without `--expose-gc` (the flag is set at run time and `gc` fetched from a fresh context).
 */
export function collectGarbage(): void {
  if (gc === undefined) {
    setFlagsFromString('--expose-gc');
    gc = runInNewContext('gc') as () => void;
  }
  gc();
  gc();
}

/** Bytes of memory this process holds in JS objects and buffers (heap used plus array buffers). */
export function heldBytes(): number {
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.arrayBuffers;
}

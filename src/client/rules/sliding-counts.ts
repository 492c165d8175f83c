/**
 * Counts over a sliding window, in ten slots: what the retry budget (requests and retries) and the
 * circuit breaker (successes and failures) keep. Plain JSON, for a shared store; pure functions,
 * the caller passes `now`. A clock that goes back moves nothing.
 *
 * @module
 */

/** How many slots the window is cut into. */
export const SLOTS = 10;

/** Counts of the series `K` over a sliding window: one ring of {@link SLOTS} counts per series. */
export type SlidingCounts<K extends string> = { slot: number } & { [series in K]: number[] };

/** Empty counts of `series`, with the window at `now`. */
export function newCounts<K extends string>(
  series: readonly K[],
  windowMs: number,
  now: number,
): SlidingCounts<K> {
  const counts = { slot: Math.floor(now / (windowMs / SLOTS)) } as SlidingCounts<K>;
  for (const name of series)
    (counts as Record<K, number[]>)[name] = new Array<number>(SLOTS).fill(0);
  return counts;
}

/** Moves the window to `now`, clearing the slots that fell out; returns the current slot's index. */
export function advance<K extends string>(
  counts: SlidingCounts<K>,
  series: readonly K[],
  windowMs: number,
  now: number,
): number {
  const current = Math.floor(now / (windowMs / SLOTS));
  if (current > counts.slot) {
    const steps = Math.min(SLOTS, current - counts.slot);
    for (let i = 1; i <= steps; i++) {
      const index = (counts.slot + i) % SLOTS;
      for (const name of series) (counts[name] as number[])[index] = 0;
    }
    counts.slot = current;
  }
  return counts.slot % SLOTS;
}

/** Adds one to `name` at `now` (after moving the window). */
export function count<K extends string>(
  counts: SlidingCounts<K>,
  series: readonly K[],
  name: K,
  windowMs: number,
  now: number,
): void {
  const index = advance(counts, series, windowMs, now);
  const ring = counts[name] as number[];
  ring[index] = (ring[index] ?? 0) + 1;
}

/** The total of `name` over the window (as last moved). */
export function total<K extends string>(counts: SlidingCounts<K>, name: K): number {
  let sum = 0;
  for (const n of counts[name] as number[]) sum += n;
  return sum;
}

/** Clears every count. */
export function clear<K extends string>(counts: SlidingCounts<K>, series: readonly K[]): void {
  for (const name of series) (counts[name] as number[]).fill(0);
}

/**
 * What the overhead benchmarks report for a contender run in rounds next to a baseline (plain
 * fetch, a bare undici Agent): its rate and CPU time, and its ratios to the baseline's in the
 * same rounds, as the median and the spread; and the load loop they all run.
 */

/** The median of `values` (the upper one of an even count); NaN for none. */
export function median(values: readonly number[]): number {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;
}

/** A contender's cells, over the rounds. */
export interface PairedCells {
  /** Median requests per second (wall clock). */
  requestsPerSecond: number;
  /** Median of each round's rate over the baseline's. */
  ratio: number;
  /** Lowest and highest of those ratios. */
  ratioMin: number;
  ratioMax: number;
  /** Median CPU time of this process per request, in microseconds (client and server). */
  cpuMicrosPerRequest: number;
  /** Median of each round's baseline CPU time per request over this one's. */
  cpuRatio: number;
}

/** The cells from each round's rate, ratio, CPU microseconds per request and CPU ratio. */
export function pairedCells(
  rates: readonly number[],
  ratios: readonly number[],
  cpus: readonly number[],
  cpuRatios: readonly number[],
): PairedCells {
  return {
    requestsPerSecond: Math.round(median(rates)),
    ratio: median(ratios),
    ratioMin: Math.min(...ratios),
    ratioMax: Math.max(...ratios),
    cpuMicrosPerRequest: Math.round(median(cpus)),
    cpuRatio: median(cpuRatios),
  };
}

/**
 * Runs `requests` calls of `one` with `concurrency` in flight (each worker starts the next when its
 * call settles): [requests per second, CPU microseconds per request] of the whole process.
 */
export async function underLoad(
  requests: number,
  concurrency: number,
  one: () => Promise<unknown>,
): Promise<[number, number]> {
  let next = 0;
  const cpu = process.cpuUsage();
  const start = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < requests) {
        next++;
        await one();
      }
    }),
  );
  const elapsed = performance.now() - start;
  const used = process.cpuUsage(cpu);
  return [requests / (elapsed / 1000), (used.user + used.system) / requests];
}

/**
 * `items` rotated left by `round` (modulo their count): over as many rounds as items, each item
 * runs once in each position, so none is always first (cold) or last (after the others' garbage).
 */
export function rotated<T>(items: readonly T[], round: number): T[] {
  const k = items.length === 0 ? 0 : round % items.length;
  return [...items.slice(k), ...items.slice(0, k)];
}

/**
 * The declared-policy sweep of the goodput benchmark (issue 23, section 2): LimitedClient over
 * real HTTP against the mock server's own IETF fields, for every algorithm, over a grid of rates
 * and bursts. Per cell: elapsed over the least time and the 429s received, side by side per
 * algorithm.
 *
 *   npm run bench:goodput -- --sweep [--rates 0.5,2.5,10,50,200] [--bursts 1,5,20,100]
 *     [--seconds 10] [--c 16]
 *
 * Each cell sends N = B + R * seconds calls (at least B + 2), `c` in flight, against its own
 * server: B at once, then R per second. A cell whose burst takes longer than `seconds` to refill
 * (B / R > seconds: its run is one window long, and a window past `maxRetryAfterMs` is refused
 * by design) is left out, `-` in the table. The least time is (N - B) / R, or for a leaky bucket
 * (its answers leave at R from the first) (N - 1) / R. Where the algorithm itself allows no less
 * than 2 % more than that (a sliding-window counter weighs a burst in for a window; a fixed window
 * aligned to the epoch gives the first burst only what is left of the current window), the cell
 * also shows elapsed over that least time (computed on fake time by `leastTime`, from the run's
 * start, with 0.25 ms each way). A concurrency limit is its own row: 4 slots, 50 ms per request, least time
 * ceil(N / 4) * 50 ms, and beside it elapsed over plain fetch with 4 in flight against the same
 * limit, run just before (the floor over loopback at the moment's load).
 */
import { LimitedClient } from '../../src/index.js';
import { createMockServer, type LimitConfig } from '../../src/server/index.js';
import { leastTime, RATE_ALGORITHMS, serverFor } from '../client/rules/simulate.js';
import { fixed, markdownTable } from './lib/table.js';

/** The sweep's parameters. */
export interface SweepOptions {
  rates: number[];
  bursts: number[];
  /** Seconds of the rate each cell runs for, beyond its burst. */
  seconds: number;
  /** Calls in flight. */
  concurrency: number;
  /** Only these algorithms (all when absent). */
  algorithms?: string[];
}

/** One cell's figures. */
export interface SweepCell {
  algorithm: string;
  rate: number;
  burst: number;
  calls: number;
  ok: number;
  elapsedMs: number;
  /** (N - B) / R, or (N - 1) / R for a leaky bucket; milliseconds. */
  minimumMs: number;
  /** What the algorithm itself allows (fake time), milliseconds. */
  ownMinimumMs: number;
  /**
   * The concurrency row only: plain fetch with exactly as many in flight as there are slots,
   * against a server of its own, run just before, milliseconds: the floor over loopback at the
   * moment's load (it knows the limit, and needs no ramp).
   */
  floorMs?: number;
  received429: number;
}

async function runCell(
  limit: LimitConfig,
  calls: number,
  concurrency: number,
  latencyMs?: number,
  plain = false,
): Promise<{ ok: number; elapsedMs: number; received429: number; startEpoch: number }> {
  const server = await createMockServer({
    routes: [
      {
        path: '/items/:id',
        limits: [{ ...limit, key: 'global', name: 'p' }],
        ...(latencyMs === undefined ? {} : { faults: { latencyMs } }),
      },
    ],
  });
  const client = new LimitedClient(server.url);
  const get = plain
    ? (path: string) => fetch(new URL(path, server.url))
    : (path: string) => client.get(path);
  let next = 0;
  let ok = 0;
  // Windows are aligned to the epoch: the least time depends on where in one the run starts.
  const startEpoch = Date.now();
  const start = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < calls) {
        // A call the client refuses (a wait past maxRetryAfterMs) counts as failed.
        const response = await get(`/items/${next++}`).catch(() => undefined);
        await response?.arrayBuffer();
        if (response?.status === 200) ok++;
      }
    }),
  );
  const elapsedMs = performance.now() - start;
  const received429 = server.stats().rejected;
  await client.close();
  await server.close();
  return { ok, elapsedMs, received429, startEpoch };
}

/** Runs every cell, one at a time (timing is the measure), printing each as it ends. */
export async function declaredSweep(options: SweepOptions): Promise<SweepCell[]> {
  const cells: SweepCell[] = [];
  for (const algorithm of RATE_ALGORITHMS) {
    if (options.algorithms && !options.algorithms.includes(algorithm)) continue;
    for (const rate of options.rates) {
      for (const burst of options.bursts) {
        // A burst that takes longer than the run to refill makes it one window long: left out.
        if (burst / rate > options.seconds) continue;
        const server = serverFor(algorithm, rate, burst);
        const calls = Math.max(burst + 2, burst + Math.round(rate * options.seconds));
        const leaky = algorithm === 'leaky-bucket';
        const minimumMs = (((leaky ? calls - 1 : calls - burst) / rate) * 1000) as number;
        const run = await runCell(server.limit, calls, options.concurrency);
        const ownMinimumMs = leastTime({
          server,
          calls,
          concurrency: options.concurrency,
          latencyMs: 0.25,
          start: run.startEpoch,
        });
        const cell = { algorithm, rate, burst, calls, minimumMs, ownMinimumMs, ...run };
        cells.push(cell);
        console.log(
          `  ${algorithm} ${rate}/s burst ${burst}: ${fixed(run.elapsedMs / minimumMs)}x, ${run.received429} x 429, ${run.ok}/${calls} ok`,
        );
      }
    }
  }
  const slots = 4;
  const latency = 50;
  const calls = Math.max(8, Math.round(options.seconds * (slots / (latency / 1000)) * 0.1));
  const limit: LimitConfig = { algorithm: 'concurrency', limit: slots };
  const floor = await runCell(limit, calls, slots, latency, true);
  const run = await runCell(limit, calls, 16, latency);
  const minimumMs = Math.ceil(calls / slots) * latency;
  cells.push({
    algorithm: 'concurrency',
    rate: slots / (latency / 1000),
    burst: slots,
    calls,
    minimumMs,
    ownMinimumMs: minimumMs,
    floorMs: floor.elapsedMs,
    ...run,
  });
  console.log(
    `  concurrency ${slots} slots, ${latency} ms each: ${fixed(run.elapsedMs / minimumMs)}x (${fixed(run.elapsedMs / floor.elapsedMs)}x of fetch with ${slots} at once, ${fixed(floor.elapsedMs / minimumMs)}x), ${run.received429} x 429`,
  );
  return cells;
}

/** The sweep as markdown: one row per algorithm and rate, one column per burst. */
export function sweepTable(cells: SweepCell[], bursts: number[]): string {
  const rows = new Map<string, SweepCell[]>();
  for (const cell of cells) {
    const key =
      cell.algorithm === 'concurrency'
        ? 'concurrency (4 slots, 50 ms)'
        : `${cell.algorithm} ${cell.rate}/s`;
    rows.set(key, [...(rows.get(key) ?? []), cell]);
  }
  const show = (c: SweepCell | undefined) => {
    if (c === undefined) return '-';
    const failed = c.calls - c.ok;
    const ratio = `${fixed(c.elapsedMs / c.minimumMs)}x`;
    const own =
      Math.abs(c.ownMinimumMs - c.minimumMs) > 0.02 * c.minimumMs
        ? ` (${fixed(c.elapsedMs / c.ownMinimumMs)}x of its own)`
        : '';
    const floor =
      c.floorMs === undefined
        ? ''
        : ` (${fixed(c.elapsedMs / c.floorMs)}x of fetch with ${c.burst} at once)`;
    return `${failed > 0 ? `${failed} failed` : `${ratio}${own}${floor}`} / ${c.received429}`;
  };
  return markdownTable(
    ['algorithm, rate', ...bursts.map((b) => `burst ${b}`)],
    [...rows].map(([key, row]) => [
      key,
      ...bursts.map((b) => show(row.find((c) => c.burst === b || c.algorithm === 'concurrency'))),
    ]),
  );
}

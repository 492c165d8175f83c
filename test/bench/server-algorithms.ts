/**
 * Decisions per second of each server algorithm, on the memory store.
 *
 *   npm run bench:server             (or: npx tsx test/bench/server-algorithms.ts [decisions])
 *
 * Two columns per algorithm, measured in one process one after the other:
 * - `decide()`: the pure arithmetic alone, synchronous, state kept in a plain Map;
 * - `take()`: the public call, through the MemoryStore (async, namespaced keys, idle-key sweep).
 * Traffic: 1000 keys in turn, fake time advancing 1 ms every 150 decisions, so each key asks 150
 * times a second of limits of 100 per second (windows of 100, buckets of 10 refilled at 100/s):
 * about two in three are admitted, so both paths (admit, reject) are measured. Concurrency takes
 * and releases a slot per request. Rates are medians of five runs; the last column compares each algorithm's
 * `take()` with the fixed window's, the cheapest.
 */
import { performance } from 'node:perf_hooks';
import { concurrencyLimit } from '../../src/server/algorithms/concurrency-limit.js';
import { fixedWindow } from '../../src/server/algorithms/fixed-window.js';
import { gcra } from '../../src/server/algorithms/gcra.js';
import { leakyBucket } from '../../src/server/algorithms/leaky-bucket.js';
import { type AlgorithmLogic, decide } from '../../src/server/algorithms/logic.js';
import { slidingLog } from '../../src/server/algorithms/sliding-log.js';
import { slidingWindowCounter } from '../../src/server/algorithms/sliding-window-counter.js';
import { tokenBucket } from '../../src/server/algorithms/token-bucket.js';
import {
  ConcurrencyLimit,
  FixedWindow,
  Gcra,
  LeakyBucket,
  type RateLimiter,
  SlidingLog,
  SlidingWindowCounter,
  TokenBucket,
} from '../../src/server/index.js';

const DECISIONS = Number(process.argv[2]) || 200_000;
const KEYS = 1000;
const RUNS = 5;
const START = 1_764_500_000_000;

interface Contender {
  name: string;
  logic: AlgorithmLogic<unknown, unknown>;
  config: unknown;
  make(): RateLimiter;
}

const contenders: Contender[] = [
  {
    name: 'fixed-window',
    logic: fixedWindow as AlgorithmLogic<unknown, unknown>,
    config: { limit: 100, windowMs: 1000 },
    make: () => new FixedWindow({ limit: 100, windowMs: 1000 }),
  },
  {
    name: 'sliding-log',
    logic: slidingLog as AlgorithmLogic<unknown, unknown>,
    config: { limit: 100, windowMs: 1000 },
    make: () => new SlidingLog({ limit: 100, windowMs: 1000 }),
  },
  {
    name: 'sliding-window-counter',
    logic: slidingWindowCounter as AlgorithmLogic<unknown, unknown>,
    config: { limit: 100, windowMs: 1000 },
    make: () => new SlidingWindowCounter({ limit: 100, windowMs: 1000 }),
  },
  {
    name: 'token-bucket',
    logic: tokenBucket as AlgorithmLogic<unknown, unknown>,
    config: { capacity: 10, refillPerSecond: 100 },
    make: () => new TokenBucket({ capacity: 10, refillPerSecond: 100 }),
  },
  {
    name: 'gcra',
    logic: gcra as AlgorithmLogic<unknown, unknown>,
    config: { rate: 100, burst: 9 },
    make: () => new Gcra({ rate: 100, burst: 9 }),
  },
  {
    name: 'leaky-bucket',
    logic: leakyBucket as AlgorithmLogic<unknown, unknown>,
    config: { rate: 100, capacity: 10 },
    make: () => new LeakyBucket({ rate: 100, capacity: 10 }),
  },
  {
    name: 'concurrency',
    logic: concurrencyLimit as AlgorithmLogic<unknown, unknown>,
    config: { limit: 100, retryAfterMs: 1000 },
    make: () => new ConcurrencyLimit({ limit: 100 }),
  },
];

const keys = Array.from({ length: KEYS }, (_, i) => `client-${i}`);
const nowAt = (i: number) => START + Math.floor(i / 150);

/** Pure decisions per second, and the share admitted. */
function runDecide(c: Contender): { rate: number; admitted: number } {
  const states = new Map<string, unknown>();
  let admitted = 0;
  const started = performance.now();
  for (let i = 0; i < DECISIONS; i++) {
    const key = keys[i % KEYS] as string;
    const d = decide(c.logic, c.config, states.get(key), nowAt(i), 1);
    if (d.result.allowed) {
      admitted += 1;
      // Concurrency: every request ends before the next one of its key.
      states.set(key, c.name === 'concurrency' ? undefined : d.state);
    }
  }
  const seconds = (performance.now() - started) / 1000;
  return { rate: DECISIONS / seconds, admitted: admitted / DECISIONS };
}

/** `take()` (or `acquire()` and its release, for concurrency) per second through the store. */
async function runTake(c: Contender): Promise<number> {
  const limiter = c.make();
  const started = performance.now();
  for (let i = 0; i < DECISIONS; i++) {
    const options = { now: nowAt(i) };
    if (c.name === 'concurrency') {
      const a = await limiter.acquire(keys[i % KEYS] as string, options);
      await a.refund();
    } else await limiter.take(keys[i % KEYS] as string, options);
  }
  return DECISIONS / ((performance.now() - started) / 1000);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

const format = (n: number) => `${(n / 1e6).toFixed(2)} M/s`.padStart(11);

async function main(): Promise<void> {
  console.log(
    `server algorithms, ${DECISIONS.toLocaleString('en')} decisions over ${KEYS} keys, median of ${RUNS} runs (Node ${process.version})\n`,
  );
  // Warm up every path once, so the first contender is not penalised by the JIT.
  for (const c of contenders) {
    runDecide(c);
    await runTake(c);
  }
  const rows = [];
  for (const c of contenders) {
    const pure: number[] = [];
    const store: number[] = [];
    let admitted = 0;
    for (let r = 0; r < RUNS; r++) {
      const d = runDecide(c);
      pure.push(d.rate);
      admitted = d.admitted;
      store.push(await runTake(c));
    }
    rows.push({ name: c.name, pure: median(pure), store: median(store), admitted });
  }
  const base = rows[0]?.store ?? 1;
  console.log(
    `${'algorithm'.padEnd(24)}${'decide()'.padStart(11)}${'take()'.padStart(13)}${'admitted'.padStart(10)}${'vs fixed'.padStart(10)}`,
  );
  for (const row of rows) {
    console.log(
      `${row.name.padEnd(24)}${format(row.pure)}  ${format(row.store)}${`${(row.admitted * 100).toFixed(0)}%`.padStart(10)}${`${(row.store / base).toFixed(2)}x`.padStart(10)}`,
    );
  }
}

await main();

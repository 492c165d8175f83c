/**
 * The mock server's speed: decisions per second of each algorithm on the memory store, then
 * requests per second over HTTP next to express and fastify with their rate limiters.
 *
 *   npm run bench:server      (or: npx tsx test/bench/server-algorithms.ts [decisions]
 *                                  [--http-only | --no-http] [--rounds n] [--seconds s]
 *                                  [--warmup s])
 *
 * Algorithms: two columns per algorithm, measured in one process one after the other:
 * - `decide()`: the pure arithmetic alone, synchronous, state kept in a plain Map;
 * - `take()`: the public call, through the MemoryStore (async, namespaced keys, idle-key sweep).
 * Traffic: 1000 keys in turn, fake time advancing 1 ms every 150 decisions, so each key asks 150
 * times a second of limits of 100 per second (windows of 100, buckets of 10 refilled at 100/s):
 * about two in three are admitted, so both paths (admit, reject) are measured. Concurrency takes
 * and releases a slot per request. Rates are medians of five runs; the last column compares each algorithm's
 * `take()` with the fixed window's, the cheapest.
 *
 * HTTP: each server runs in a process of its own (test/bench/lib/http-contender.ts) and answers
 * `GET /x` with `{"ok":true}`: the mock server with a fixed window of 1e9 per minute per IP and
 * without a limit, express + express-rate-limit and fastify + @fastify/rate-limit with the same
 * limit (so everything is admitted and the limiter's cost is what differs). autocannon drives each
 * with 50 connections for `--seconds` (default 5) after `--warmup` seconds (default 3: after one
 * second, the optimising compiler's threads still spent 15-20 µs per request of the limited server's
 * CPU, 8-10 µs without a limit, so the round measured the warm-up's tail); `--rounds` rounds
 * (default 3), the order reversed every other round. Prints requests/s per round, the median, the
 * spread, each server's CPU time per request (steadier than the rate on a shared machine), the
 * ratios of the medians, and the mock server's ratio to itself without a limit within each round
 * (the two run side by side), as a median and a range.
 */
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
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
import { CONTENDERS, type ContenderName } from './lib/http-contender.js';

const { values: flags, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    'http-only': { type: 'boolean', default: false },
    'no-http': { type: 'boolean', default: false },
    rounds: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '5' },
    warmup: { type: 'string', default: '3' },
  },
});
const DECISIONS = Number(positionals[0]) || 200_000;
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

async function algorithms(): Promise<void> {
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

// ---- HTTP ----------------------------------------------------------------------------------------

const CONTENDER_SCRIPT = fileURLToPath(new URL('./lib/http-contender.ts', import.meta.url));

/** One contender's run: requests per second, and its server's CPU time per request. */
interface HttpRun {
  rate: number;
  cpuMicrosPerRequest: number;
}

/**
 * Requests per second of one contender, in a process of its own: 50 connections, after
 * `warmupSeconds` of the same load (none for 0); and the CPU time its process spent per request
 * meanwhile, which a shared machine disturbs less than the rate.
 */
async function runContender(
  name: ContenderName,
  seconds: number,
  warmupSeconds: number,
): Promise<HttpRun> {
  const child = fork(CONTENDER_SCRIPT, [name], { execArgv: ['--import', 'tsx'] });
  const exited = once(child, 'exit');
  try {
    const [{ port }] = (await once(child, 'message')) as [{ port: number }];
    const url = `http://127.0.0.1:${port}/x`;
    if (warmupSeconds > 0) await autocannon({ url, connections: 50, duration: warmupSeconds });
    child.send('measure');
    const result = await autocannon({ url, connections: 50, duration: seconds });
    if (result.non2xx > 0 || result.errors > 0 || result.timeouts > 0) {
      throw new Error(
        `${name}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts`,
      );
    }
    child.send('stop');
    const [{ cpuMicros }] = (await once(child, 'message')) as [{ cpuMicros: number }];
    return {
      rate: result.requests.total / seconds,
      cpuMicrosPerRequest: cpuMicros / result.requests.total,
    };
  } finally {
    if (child.exitCode === null) child.kill();
    await exited;
  }
}

async function http(): Promise<void> {
  const rounds = Number(flags.rounds);
  const seconds = Number(flags.seconds);
  const warmupSeconds = Number(flags.warmup);
  for (const [flag, value, least] of [
    ['--rounds', rounds, 1],
    ['--seconds', seconds, 1],
    ['--warmup', warmupSeconds, 0],
  ] as const) {
    if (!Number.isFinite(value) || value < least) {
      throw new Error(`${flag} must be a number of at least ${least}`);
    }
  }
  console.log(
    `\nHTTP: GET /x, 50 connections (autocannon), ${seconds} s each after ${warmupSeconds} s of warm-up, ${rounds} rounds, order reversed every other round; every server in its own process (Node ${process.version})\n`,
  );
  const runs = new Map<ContenderName, HttpRun[]>(CONTENDERS.map((name) => [name, []]));
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? [...CONTENDERS] : [...CONTENDERS].reverse();
    const line: string[] = [];
    for (const name of order) {
      const run = await runContender(name, seconds, warmupSeconds);
      runs.get(name)?.push(run);
      line.push(`${name} ${Math.round(run.rate)}/s ${run.cpuMicrosPerRequest.toFixed(0)} µs`);
    }
    console.log(`round ${round + 1}: ${line.join(', ')}`);
  }
  const rateOf = (name: ContenderName) => median((runs.get(name) ?? []).map((r) => r.rate));
  const cpuOf = (name: ContenderName) =>
    median((runs.get(name) ?? []).map((r) => r.cpuMicrosPerRequest));
  console.log(
    `\n${'server'.padEnd(32)}${'median req/s'.padStart(14)}${'min-max'.padStart(18)}${'CPU µs/request'.padStart(17)}`,
  );
  for (const name of CONTENDERS) {
    const rates = (runs.get(name) ?? []).map((r) => r.rate);
    const spread = `${Math.round(Math.min(...rates))}-${Math.round(Math.max(...rates))}`;
    console.log(
      `${name.padEnd(32)}${String(Math.round(rateOf(name))).padStart(14)}${spread.padStart(18)}${cpuOf(name).toFixed(0).padStart(17)}`,
    );
  }
  const ratios = (a: ContenderName, b: ContenderName) =>
    `${(rateOf(a) / rateOf(b)).toFixed(2)}x in req/s, ${(cpuOf(b) / cpuOf(a)).toFixed(2)}x in CPU per request`;
  console.log(
    `\nmock server / express + express-rate-limit: ${ratios('mock server', 'express + express-rate-limit')} (target at least 1.5x)`,
  );
  console.log(
    `mock server / fastify + @fastify/rate-limit: ${ratios('mock server', 'fastify + @fastify/rate-limit')}`,
  );
  console.log(
    `mock server / itself without a limit: ${ratios('mock server', 'mock server, no limit')} (target at least 0.9x)`,
  );
  // The two mock servers run next to each other in every round, so the ratio within a round is
  // disturbed less by the machine's load drifting between rounds than the ratio of the medians.
  const paired = (a: ContenderName, b: ContenderName, of: (r: HttpRun) => number) => {
    const as = runs.get(a) ?? [];
    const bs = runs.get(b) ?? [];
    const each = as.map((run, i) => of(run) / of(bs[i] as HttpRun));
    return `${median(each).toFixed(2)}x (${Math.min(...each).toFixed(2)}-${Math.max(...each).toFixed(2)})`;
  };
  console.log(
    `  per round, paired: ${paired('mock server', 'mock server, no limit', (r) => r.rate)} in req/s, ${paired('mock server, no limit', 'mock server', (r) => r.cpuMicrosPerRequest)} in CPU per request (median, min-max)`,
  );
}

if (!flags['http-only']) await algorithms();
if (!flags['no-http']) await http();

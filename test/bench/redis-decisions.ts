/**
 * Decisions per second of each server algorithm on Redis (`RedisStore`, one `EVALSHA` per
 * decision), next to rate-limiter-flexible's `RateLimiterRedis` (a fixed window of `INCRBY` and
 * `PEXPIRE` in one `EVAL`) on the same Redis, through the same node-redis v5 connection, in one run.
 *
 *   REDIS_URL=redis://127.0.0.1:6379 npm run bench:redis    (or: npx tsx test/bench/redis-decisions.ts [decisions])
 *
 * Traffic: 100 keys in turn against limits of 100 per second per key (buckets of 10 refilled at
 * 100/s), so a share of the decisions is rejected and both paths are measured; rejections cost
 * rate-limiter-flexible a thrown `RateLimiterRes`, which is part of its API. Concurrency takes a
 * slot and releases it (two calls per decision). Two columns: one decision in flight at a time
 * (bound by the round trip), and 32 in flight (node-redis pipelines them). Contenders alternate
 * within each run; rates are medians of five runs; the ratio is each algorithm over
 * rate-limiter-flexible in the same column. Without `REDIS_URL` it prints why and exits.
 */

import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { createClient } from 'redis';
import { RedisStore } from '../../src/redis/index.js';
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
import { markdownTable } from './lib/table.js';

const DECISIONS = Number(process.argv[2]) || 20_000;
const KEYS = 100;
const RUNS = 5;
const IN_FLIGHT = [1, 32] as const;

const url = process.env.REDIS_URL;
if (!url) {
  console.log('bench:redis skipped: REDIS_URL is not set (e.g. REDIS_URL=redis://127.0.0.1:6379).');
  process.exit(0);
}

const client = createClient({ url });
client.on('error', (error: Error) => console.error(`redis: ${error.message}`));
await client.connect();
const prefix = `lc-bench:${randomUUID().slice(0, 8)}:`;
const store = new RedisStore(client, { prefix, timeoutMs: 10_000 });
const keys = Array.from({ length: KEYS }, (_, i) => `client-${i}`);

/** One decision for the key `i`; resolves whether it was admitted. */
type Decide = (i: number) => Promise<boolean>;

function ours(limiter: RateLimiter): Decide {
  if (limiter instanceof ConcurrencyLimit) {
    return async (i) => {
      const slot = await limiter.acquire(keys[i % KEYS] as string);
      await slot.refund();
      return slot.result.allowed;
    };
  }
  return async (i) => (await limiter.take(keys[i % KEYS] as string)).allowed;
}

const flexible = new RateLimiterRedis({
  storeClient: client,
  useRedisPackage: true,
  keyPrefix: `${prefix}rlf`,
  points: 100,
  duration: 1,
});

const contenders: { name: string; decide: Decide }[] = [
  {
    name: 'rate-limiter-flexible (fixed window)',
    decide: async (i) => {
      try {
        await flexible.consume(keys[i % KEYS] as string);
        return true;
      } catch (error) {
        if (error instanceof RateLimiterRes) return false;
        throw error;
      }
    },
  },
  { name: 'fixed-window', decide: ours(new FixedWindow({ limit: 100, windowMs: 1000, store })) },
  { name: 'sliding-log', decide: ours(new SlidingLog({ limit: 100, windowMs: 1000, store })) },
  {
    name: 'sliding-window-counter',
    decide: ours(new SlidingWindowCounter({ limit: 100, windowMs: 1000, store })),
  },
  {
    name: 'token-bucket',
    decide: ours(new TokenBucket({ capacity: 10, refillPerSecond: 100, store })),
  },
  { name: 'gcra', decide: ours(new Gcra({ rate: 100, burst: 9, store })) },
  { name: 'leaky-bucket', decide: ours(new LeakyBucket({ rate: 100, capacity: 10, store })) },
  {
    name: 'concurrency (take and release)',
    decide: ours(new ConcurrencyLimit({ limit: 100, store })),
  },
];

/** Decisions per second with `inFlight` decisions outstanding at a time, and the share admitted. */
async function measure(decide: Decide, inFlight: number, decisions: number) {
  let next = 0;
  let admitted = 0;
  const worker = async () => {
    while (next < decisions) {
      if (await decide(next++)) admitted += 1;
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: inFlight }, worker));
  const seconds = (performance.now() - started) / 1000;
  return { rate: decisions / seconds, admitted: admitted / decisions };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

async function main(): Promise<void> {
  const [seconds] = await client.time();
  const info = await client.info('server');
  const version = /redis_version:(\S+)/.exec(info)?.[1];
  console.log(
    `Redis ${version} at ${url}; ${DECISIONS.toLocaleString('en')} decisions over ${KEYS} keys per run, median of ${RUNS} runs (Node ${process.version}, Redis time ${seconds})\n`,
  );
  // Warm up: load every script and let the JIT settle.
  for (const c of contenders) await measure(c.decide, 8, 2000);

  const rates = new Map<string, number[]>();
  const admitted = new Map<string, number>();
  for (let run = 0; run < RUNS; run++) {
    for (const inFlight of IN_FLIGHT) {
      for (const c of contenders) {
        const m = await measure(c.decide, inFlight, DECISIONS);
        const id = `${c.name}@${inFlight}`;
        rates.set(id, [...(rates.get(id) ?? []), m.rate]);
        if (inFlight === 1) admitted.set(c.name, m.admitted);
      }
    }
  }
  const rate = (name: string, inFlight: number) => median(rates.get(`${name}@${inFlight}`) ?? []);
  const base = contenders[0]?.name as string;
  const k = (n: number) => `${(n / 1000).toFixed(1)} k/s`;
  const rows = contenders.map((c) => [
    c.name,
    ...IN_FLIGHT.flatMap((inFlight) => [
      k(rate(c.name, inFlight)),
      `${(rate(c.name, inFlight) / rate(base, inFlight)).toFixed(2)}x`,
    ]),
    `${Math.round((admitted.get(c.name) ?? 0) * 100)}%`,
  ]);
  console.log(
    markdownTable(
      ['contender', '1 in flight', 'vs rlf', '32 in flight', 'vs rlf', 'admitted'],
      rows,
    ),
  );
}

try {
  await main();
} finally {
  for await (const batch of client.scanIterator({ MATCH: `${prefix}*`, COUNT: 1000 })) {
    if (batch.length > 0) await client.del(batch);
  }
  client.destroy();
}

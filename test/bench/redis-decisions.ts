/**
 * Decisions per second of each server algorithm on Redis (`RedisStore`, one `EVALSHA` per
 * decision), next to rate-limiter-flexible's `RateLimiterRedis` (a fixed window of `INCRBY` and
 * `PEXPIRE` in one `EVAL`) on the same Redis, through the same connection, in one run: node-redis
 * 5's, or with `--client ioredis` an ioredis (6) connection for both (rate-limiter-flexible then
 * runs its ioredis path).
 *
 *   REDIS_URL=redis://127.0.0.1:6379 npm run bench:redis    (or: npx tsx test/bench/redis-decisions.ts [decisions])
 *
 * Flags for a quicker look (the published table uses none): `--runs N` (default 5), `--only
 * fixed,gcra` (contenders whose name contains one of these; rate-limiter-flexible always runs, it
 * is the base of the ratios), `--in-flight 32` (one column only), `--before <dir>` (a second
 * checkout of this repository, e.g. `git worktree add /tmp/before main`: each of our contenders
 * runs twice, this checkout's and that one's, `(before)`, alternating in the same runs, each on
 * its own store and its own Redis functions).
 *
 * Traffic: 100 keys in turn against limits of 100 per second per key (buckets of 10 refilled at
 * 100/s), so a share of the decisions is rejected and both paths are measured; rejections cost
 * rate-limiter-flexible a thrown `RateLimiterRes`, which is part of its API. Concurrency takes a
 * slot and releases it (two calls per decision). Two columns: one decision in flight at a time
 * (bound by the round trip), and 32 in flight (node-redis pipelines them). Contenders alternate
 * within each run; rates are medians of five runs; the ratio is each algorithm over
 * rate-limiter-flexible in the same column, and "runs" the lowest and highest of each run's own
 * ratio (the spread). Without `REDIS_URL` it prints why and exits.
 *
 * Next to each rate, the CPU per decision in microseconds (medians of the runs): Node's
 * (`process.cpuUsage()`), Redis's main thread (`INFO cpu`: the commands and their network I/O),
 * and the time Redis spent in the scripts and functions themselves (`INFO commandstats`: `FCALL`,
 * `EVALSHA`, `EVAL`, nested commands included). Redis's figures count everything the server did
 * meanwhile: run it on a Redis nobody else is using.
 */

import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { createClient } from 'redis';
import { RedisStore } from '../../src/redis/index.js';
import type { RateLimiter } from '../../src/server/index.js';
import * as server from '../../src/server/index.js';
import { median } from './lib/paired.js';
import { markdownTable } from './lib/table.js';

/** The value after `--name` on the command line, if any. */
function flag(name: string): string | undefined {
  const at = process.argv.indexOf(`--${name}`);
  return at < 0 ? undefined : process.argv[at + 1];
}
const DECISIONS = Number(process.argv[2]) || 20_000;
const KEYS = 100;
const RUNS = Number(flag('runs')) || 5;
const ONLY = flag('only')?.split(',');
const IN_FLIGHT: readonly number[] = flag('in-flight') ? [Number(flag('in-flight'))] : [1, 32];
const BEFORE = flag('before');
const CLIENT = flag('client') ?? 'node-redis';
if (CLIENT !== 'node-redis' && CLIENT !== 'ioredis') {
  console.error(`--client: 'node-redis' or 'ioredis', got ${JSON.stringify(CLIENT)}`);
  process.exit(2);
}

const url = process.env.REDIS_URL;
if (!url) {
  console.log('bench:redis skipped: REDIS_URL is not set (e.g. REDIS_URL=redis://127.0.0.1:6379).');
  process.exit(0);
}

const client = createClient({ url });
client.on('error', (error: Error) => console.error(`redis: ${error.message}`));
await client.connect();
/** The connection the contenders decide through (`client` reads Redis's statistics). */
const io = CLIENT === 'ioredis' ? new Redis(url, { lazyConnect: true }) : undefined;
await io?.connect();
const storeClient = io ?? client;
const prefix = `lc-bench:${randomUUID().slice(0, 8)}:`;
const keys = Array.from({ length: KEYS }, (_, i) => `client-${i}`);

/** One decision for the key `i`; resolves whether it was admitted. */
type Decide = (i: number) => Promise<boolean>;

/** What the contenders need of a checkout: its store and its algorithms. */
interface Checkout {
  RedisStore: typeof RedisStore;
  server: typeof server;
}

function ours(limiter: RateLimiter): Decide {
  if (limiter.algorithm === 'concurrency') {
    return async (i) => {
      const slot = await limiter.acquire(keys[i % KEYS] as string);
      await slot.refund();
      return slot.result.allowed;
    };
  }
  return async (i) => (await limiter.take(keys[i % KEYS] as string)).allowed;
}

/** Our contenders on `checkout`'s code, their keys under `keyPrefix`, names ending with `suffix`. */
function ourContenders(checkout: Checkout, keyPrefix: string, suffix: string) {
  const s = checkout.server;
  const store = new checkout.RedisStore(storeClient, { prefix: keyPrefix, timeoutMs: 10_000 });
  return [
    {
      name: 'fixed-window',
      decide: ours(new s.FixedWindow({ limit: 100, windowMs: 1000, store })),
    },
    { name: 'sliding-log', decide: ours(new s.SlidingLog({ limit: 100, windowMs: 1000, store })) },
    {
      name: 'sliding-window-counter',
      decide: ours(new s.SlidingWindowCounter({ limit: 100, windowMs: 1000, store })),
    },
    {
      name: 'token-bucket',
      decide: ours(new s.TokenBucket({ capacity: 10, refillPerSecond: 100, store })),
    },
    { name: 'gcra', decide: ours(new s.Gcra({ rate: 100, burst: 9, store })) },
    { name: 'leaky-bucket', decide: ours(new s.LeakyBucket({ rate: 100, capacity: 10, store })) },
    {
      name: 'concurrency (take and release)',
      decide: ours(new s.ConcurrencyLimit({ limit: 100, store })),
    },
  ].map((c) => ({ ...c, name: c.name + suffix }));
}

const flexible = new RateLimiterRedis({
  storeClient,
  useRedisPackage: io === undefined,
  keyPrefix: `${prefix}rlf`,
  points: 100,
  duration: 1,
});

const before: Checkout | undefined =
  BEFORE === undefined
    ? undefined
    : {
        RedisStore: (await import(`${BEFORE}/src/redis/index.ts`)).RedisStore,
        server: await import(`${BEFORE}/src/server/index.ts`),
      };
const now =
  before === undefined
    ? ourContenders({ RedisStore, server }, prefix, '')
    : ourContenders({ RedisStore, server }, `${prefix}after:`, ' (after)');
const then = before === undefined ? [] : ourContenders(before, `${prefix}before:`, ' (before)');

const everyContender: { name: string; decide: Decide }[] = [
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
  // Each algorithm's before and after next to each other, so that they run at the same moment.
  ...now.flatMap((c, i) => (then[i] === undefined ? [c] : [then[i], c])),
];

const contenders = everyContender.filter(
  (c, i) => i === 0 || ONLY === undefined || ONLY.some((part) => c.name.includes(part)),
);

/** Redis's CPU so far: its main thread's, and the time spent in scripts and functions, in µs. */
async function redisCpu(): Promise<{ cpu: number; scripts: number }> {
  const info = await client.info('cpu');
  const seconds = (name: string) => Number(new RegExp(`${name}:([\\d.]+)`).exec(info)?.[1] ?? 0);
  const cpu = (seconds('used_cpu_user_main_thread') + seconds('used_cpu_sys_main_thread')) * 1e6;
  const stats = await client.info('commandstats');
  let scripts = 0;
  for (const command of ['fcall', 'evalsha', 'eval']) {
    scripts += Number(
      new RegExp(`cmdstat_${command}:calls=\\d+,usec=(\\d+)`).exec(stats)?.[1] ?? 0,
    );
  }
  return { cpu, scripts };
}

/**
 * Decisions per second with `inFlight` decisions outstanding at a time, the share admitted, and
 * the CPU per decision (µs): Node's, Redis's main thread's, Redis's in scripts.
 */
async function measure(decide: Decide, inFlight: number, decisions: number) {
  let next = 0;
  let admitted = 0;
  const worker = async () => {
    while (next < decisions) {
      if (await decide(next++)) admitted += 1;
    }
  };
  const redisBefore = await redisCpu();
  const nodeBefore = process.cpuUsage();
  const started = performance.now();
  await Promise.all(Array.from({ length: inFlight }, worker));
  const seconds = (performance.now() - started) / 1000;
  const node = process.cpuUsage(nodeBefore);
  const redisAfter = await redisCpu();
  return {
    rate: decisions / seconds,
    admitted: admitted / decisions,
    nodeUs: (node.user + node.system) / decisions,
    redisUs: (redisAfter.cpu - redisBefore.cpu) / decisions,
    scriptUs: (redisAfter.scripts - redisBefore.scripts) / decisions,
  };
}

async function main(): Promise<void> {
  const [seconds] = await client.time();
  const info = await client.info('server');
  const version = /redis_version:(\S+)/.exec(info)?.[1];
  console.log(
    `Redis ${version} at ${url}, through ${CLIENT}; ${DECISIONS.toLocaleString('en')} decisions over ${KEYS} keys per run, median of ${RUNS} runs (Node ${process.version}, Redis time ${seconds})\n`,
  );
  // Warm up: load every script and let the JIT settle.
  for (const c of contenders) await measure(c.decide, 8, 2000);

  type Sample = Awaited<ReturnType<typeof measure>>;
  const samples = new Map<string, Sample[]>();
  const admitted = new Map<string, number>();
  for (let run = 0; run < RUNS; run++) {
    for (const inFlight of IN_FLIGHT) {
      for (const c of contenders) {
        const m = await measure(c.decide, inFlight, DECISIONS);
        const id = `${c.name}@${inFlight}`;
        samples.set(id, [...(samples.get(id) ?? []), m]);
        if (inFlight === IN_FLIGHT[0]) admitted.set(c.name, m.admitted);
      }
    }
  }
  const of = (name: string, inFlight: number, field: Exclude<keyof Sample, 'admitted'>) =>
    median((samples.get(`${name}@${inFlight}`) ?? []).map((m) => m[field]));
  const base = contenders[0]?.name as string;
  const k = (n: number) => `${(n / 1000).toFixed(1)} k/s`;
  const us = (n: number) => n.toFixed(1);
  /** Lowest and highest of each run's rate over rate-limiter-flexible's in the same run. */
  const spread = (name: string, inFlight: number) => {
    const ours = samples.get(`${name}@${inFlight}`) ?? [];
    const theirs = samples.get(`${base}@${inFlight}`) ?? [];
    const ratios = ours.map((m, run) => m.rate / (theirs[run]?.rate ?? Number.NaN));
    return `${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}`;
  };
  const columns = IN_FLIGHT.flatMap((inFlight) => [
    `${inFlight} in flight`,
    'vs rlf',
    'runs',
    'CPU µs: Node / Redis / scripts',
  ]);
  const rows = contenders.map((c) => [
    c.name,
    ...IN_FLIGHT.flatMap((inFlight) => [
      k(of(c.name, inFlight, 'rate')),
      `${(of(c.name, inFlight, 'rate') / of(base, inFlight, 'rate')).toFixed(2)}x`,
      spread(c.name, inFlight),
      `${us(of(c.name, inFlight, 'nodeUs'))} / ${us(of(c.name, inFlight, 'redisUs'))} / ${us(of(c.name, inFlight, 'scriptUs'))}`,
    ]),
    `${Math.round((admitted.get(c.name) ?? 0) * 100)}%`,
  ]);
  console.log(markdownTable(['contender', ...columns, 'admitted'], rows));
  console.log(
    '\n"vs rlf": median rate over rate-limiter-flexible\'s median rate; "runs": the lowest and highest of each run\'s ratio (same run). CPU per decision in µs (medians): Node process / Redis main thread (INFO cpu) / Redis in FCALL, EVALSHA, EVAL (INFO commandstats).',
  );
}

try {
  await main();
} finally {
  for await (const batch of client.scanIterator({ MATCH: `${prefix}*`, COUNT: 1000 })) {
    if (batch.length > 0) await client.del(batch);
  }
  client.destroy();
  io?.disconnect();
}

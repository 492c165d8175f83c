/**
 * Goodput benchmark (issue 4): N requests at concurrency C through LimitedClient against the
 * in-repo mock server limiting to R requests per second with a burst of B. Prints, per scenario,
 * elapsed / ((N - B) / R) (the theoretical minimum: the burst is free, the rest comes at R/s) and
 * the 429s the client received. Both should be close to 1 and to 0.
 *
 *   npm run bench:goodput -- --help
 *   npm run bench:goodput -- [--n 200] [--c 16] [--rate 20] [--burst 20] [--json out.json]
 *   npm run bench:goodput -- --sweep [--rates 0.5,2.5,10,50,200] [--bursts 1,5,20,100]
 *     [--seconds 10] [--algorithms gcra,...]  (every algorithm over a grid, IETF fields: see
 *     declared-sweep.ts)
 *
 * Loopback only, bounded in requests and time; it stops by itself.
 */
import { writeFileSync } from 'node:fs';
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { LimitedClient } from '../../src/index.js';
import {
  createMockServer,
  type HeaderFamily,
  type LimitConfig,
  type RetryAfterFormat,
} from '../../src/server/index.js';
import { declaredSweep, sweepTable } from './declared-sweep.js';
import { markdownTable } from './lib/table.js';

const { values } = parseCommandLine({
  options: {
    n: { type: 'string', default: '200' },
    c: { type: 'string', default: '16' },
    rate: { type: 'string', default: '20' },
    burst: { type: 'string', default: '20' },
    json: { type: 'string' },
    only: { type: 'string' },
    sweep: { type: 'boolean', default: false },
    rates: { type: 'string', default: '0.5,2.5,10,50,200' },
    bursts: { type: 'string', default: '1,5,20,100' },
    seconds: { type: 'string', default: '10' },
    algorithms: { type: 'string' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});

/** `parseArgs`, with a bad flag reported as one line and exit code 2 rather than a stack trace. */
function parseCommandLine<T extends ParseArgsConfig>(config: T) {
  try {
    return parseArgs(config);
  } catch (error) {
    console.error(`bench:goodput: ${(error as Error).message} (--help lists the options)`);
    process.exit(2);
  }
}

if (values.help) {
  console.log(`npm run bench:goodput -- [options]

  N calls at concurrency C through LimitedClient against the mock server limiting to R/s with a
  burst of B, per algorithm and header family: elapsed / ((N - B) / R) and the 429s received.

  --n 200            calls
  --c 16             calls in flight
  --rate 20          the server's rate, per second
  --burst 20         the server's burst (a window holds B per B / R seconds)
  --only <text>      only the scenarios whose name contains it (e.g. gcra, ietf)
  --json <file>      also write the results as JSON

  --sweep            every algorithm over a grid of rates and bursts, IETF fields, one cell at a
                     time, plus a concurrency limit (4 slots, 50 ms): declared-sweep.ts
  --rates 0.5,2.5,10,50,200   the sweep's rates, per second
  --bursts 1,5,20,100         the sweep's bursts
  --seconds 10       seconds of the rate each cell runs beyond its burst
  --algorithms a,b   only these (fixed-window, sliding-log, sliding-window-counter, token-bucket,
                     gcra, leaky-bucket)
  -h, --help         this text`);
  process.exit(0);
}

if (values.sweep) {
  const list = (s: string) => s.split(',').map(Number);
  const options = {
    rates: list(values.rates),
    bursts: list(values.bursts),
    seconds: Number(values.seconds),
    concurrency: Number(values.c),
    algorithms: values.algorithms?.split(','),
  };
  console.log(
    `goodput sweep: IETF fields, ${options.concurrency} in flight, ${options.seconds} s of each rate beyond the burst`,
  );
  const cells = await declaredSweep(options);
  console.log('\nelapsed / least time (or the calls that failed) / 429s received');
  console.log(sweepTable(cells, options.bursts));
  if (values.json) writeFileSync(values.json, `${JSON.stringify({ options, cells }, null, 2)}\n`);
  process.exit(0);
}
const N = Number(values.n);
const C = Number(values.c);
const R = Number(values.rate);
const B = Number(values.burst);

interface Scenario {
  name: string;
  limit: LimitConfig;
  headers: HeaderFamily;
  retryAfter?: RetryAfterFormat;
}

// Window algorithms get a window of B / R seconds holding B requests: the same R and B.
const windowMs = Math.round((B / R) * 1000);
const limits: Record<string, LimitConfig> = {
  'token-bucket': { algorithm: 'token-bucket', capacity: B, refillPerSecond: R, name: 'tb' },
  // GCRA's `burst` is the tolerance beyond the first request: a key at rest admits burst + 1.
  gcra: { algorithm: 'gcra', rate: R, burst: B - 1, name: 'gcra' },
  'fixed-window': { algorithm: 'fixed-window', limit: B, windowMs, name: 'fw' },
  'sliding-window-counter': {
    algorithm: 'sliding-window-counter',
    limit: B,
    windowMs,
    name: 'swc',
  },
};
const scenarios: Scenario[] = [];
for (const [name, limit] of Object.entries(limits)) {
  for (const headers of ['ietf', 'draft-7', 'x-ratelimit'] as HeaderFamily[]) {
    scenarios.push({ name: `${name} / ${headers}`, limit, headers });
  }
  scenarios.push({ name: `${name} / Retry-After only`, limit, headers: 'none' });
}

interface Result {
  scenario: string;
  requests: number;
  ok: number;
  elapsedMs: number;
  theoreticalMs: number;
  ratio: number;
  received429: number;
  attemptsPerRequest: number;
}

async function run(s: Scenario): Promise<Result> {
  const server = await createMockServer({
    routes: [
      { path: '/work/:id', limits: [s.limit], headers: s.headers, retryAfter: s.retryAfter },
    ],
  });
  const client = new LimitedClient(server.url);
  let next = 0;
  let ok = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: C }, async () => {
      while (next < N) {
        const i = next++;
        const r = await client.get(`/work/${i}`);
        await r.arrayBuffer();
        if (r.status === 200) ok++;
      }
    }),
  );
  const elapsedMs = performance.now() - start;
  const host = client.stats().totals;
  await client.close();
  await server.close();
  const theoreticalMs = ((N - B) / R) * 1000;
  return {
    scenario: s.name,
    requests: N,
    ok,
    elapsedMs: Math.round(elapsedMs),
    theoreticalMs,
    ratio: Number((elapsedMs / theoreticalMs).toFixed(3)),
    received429: host.rateLimited,
    attemptsPerRequest: Number((host.attempts / host.requests).toFixed(3)),
  };
}

const results: Result[] = [];
console.log(`goodput: N=${N} requests, concurrency ${C}, server R=${R}/s, burst B=${B}`);
for (const s of scenarios) {
  if (values.only && !s.name.includes(values.only)) continue;
  const r = await run(s);
  results.push(r);
  process.stdout.write(`  ${r.scenario}: ${r.ratio} x, ${r.received429} 429s\n`);
}
console.log(
  markdownTable(
    [
      'scenario',
      'ok',
      'elapsed ms',
      'theoretical ms',
      'elapsed / theoretical',
      '429s received',
      'attempts / request',
    ],
    results.map((r) => [
      r.scenario,
      `${r.ok}/${r.requests}`,
      r.elapsedMs,
      r.theoreticalMs,
      r.ratio,
      r.received429,
      r.attemptsPerRequest,
    ]),
  ),
);
if (values.json)
  writeFileSync(values.json, `${JSON.stringify({ N, C, R, B, results }, null, 2)}\n`);

/**
 * What the pipeline costs per call, without a network: a fetch double that answers at once with a
 * fresh 200 (three ordinary headers, no body), called directly and through the client, side by
 * side in one run.
 *
 *   npx tsx test/bench/pipeline-micro.ts [--calls 200000] [--rounds 7]
 *
 * Each round runs every contender once (in a rotating order, after a warm-up); the table gives the
 * median nanoseconds per call over the rounds and the overhead over the bare double. Calls are
 * sequential (one await each), so the numbers are latency per call on one core, which is what the
 * loopback overhead benchmark (`npm run bench -- --only overhead`) turns into a throughput ratio.
 * Numbers only: nothing here asserts a duration.
 */
import { parseArgs } from 'node:util';
import { LimitedClient, wrapFetch } from '../../src/index.js';
import { markdownTable } from './lib/table.js';

const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '200000' },
    rounds: { type: 'string', default: '7' },
  },
});
const calls = Number(values.calls);
const rounds = Number(values.rounds);

const HEADERS = {
  'content-type': 'application/json',
  server: 'bench',
  date: new Date().toUTCString(),
};
/** The double: a fresh response per call, as a real fetch gives. */
const double = (async () => new Response(null, { status: 200, headers: HEADERS })) as typeof fetch;
const URL_ = 'http://h.test/x';

const wrapped = wrapFetch(double);
const wrappedCold = wrapFetch(double, { coldStart: false });
const client = new LimitedClient('http://h.test', { fetch: double });
const bare = wrapFetch(double, {
  learnLimits: false,
  retry: false,
  retryBudget: false,
  circuitBreaker: false,
});

const contenders: [string, () => Promise<Response>][] = [
  ['fetch double', () => double(URL_)],
  ['wrapFetch (defaults)', () => wrapped(URL_)],
  ['wrapFetch (coldStart: false)', () => wrappedCold(URL_)],
  ['LimitedClient.get (defaults)', () => client.get('/x')],
  ['wrapFetch (every policy off)', () => bare(URL_)],
];

async function time(f: () => Promise<Response>, n: number): Promise<number> {
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await f();
  return ((performance.now() - t0) * 1e6) / n;
}

for (const [, f] of contenders) await time(f, Math.min(calls, 20_000));
const samples = contenders.map(() => [] as number[]);
for (let r = 0; r < rounds; r++) {
  for (let k = 0; k < contenders.length; k++) {
    const i = (k + r) % contenders.length;
    const [, f] = contenders[i] as [string, () => Promise<Response>];
    samples[i]?.push(await time(f, calls));
  }
}
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? Number.NaN;
};
const base = median(samples[0] ?? []);
console.log(
  markdownTable(
    ['contender', 'ns per call (median)', 'over the double'],
    contenders.map(([name], i) => {
      const ns = median(samples[i] ?? []);
      return [name, ns.toFixed(0), i === 0 ? '-' : `+${(ns - base).toFixed(0)}`];
    }),
  ),
);
console.log(
  `\n${calls} sequential calls per contender per round, ${rounds} rounds, node ${process.version}`,
);
await Promise.all([wrapped.close(), wrappedCold.close(), client.close(), bare.close()]);

/**
 * What the pipeline costs per call, without a network: a fetch double that answers at once with a
 * fresh 200 (three ordinary headers, no body), called directly and through the client, side by
 * side in one run.
 *
 *   npx tsx test/bench/pipeline-micro.ts [--calls 200000] [--rounds 7] [--before <dir>/index.ts]
 *     [--lib <dir>/index.js] [--subscribed]
 *
 * `--before` loads a second copy of the package (another checkout's `src/index.ts`, say `main`'s)
 * and adds its contenders to the same rounds, marked `(before)`, for a side-by-side comparison,
 * and a second table: each contender's CPU per call over its `(before)` twin's, round by round.
 * `--subscribed` adds a client timed with a no-op subscriber on every `diagnostics_channel` of the
 * client (docs/observability.md): what an APM tool that listens to everything costs per call.
 * `--lib` measures another copy instead of these sources (a bundle, to compare two bundles).
 *
 * Each round runs every contender once (in a rotating order, after a warm-up); the table gives the
 * median CPU nanoseconds per call over the rounds (`process.cpuUsage()`, which other processes on
 * a shared machine disturb far less than the wall clock) and the overhead over the bare double.
 * Calls are sequential (one await each), so the numbers are the cost per call on one core, which is
 * what the loopback overhead benchmark (`npm run bench -- --only overhead`) turns into a throughput
 * ratio. A second double answers with the IETF fields of a generous declared policy, as the mock
 * server does (the remaining count going down), for the cost of a host that declares its limits.
 * A third double answers with a two-byte body, which every call reads (`text()`): through the
 * client with its defaults, and with a `concurrency` cap, under which the call's slot lasts until
 * the body is read (the response is watched: `src/client/call/body-watch.ts`).
 * The last column is the memory each call allocates over its double, in bytes: V8's sampling heap
 * profiler (through `node:inspector`, every 64 bytes on average, objects later collected included)
 * over a tenth of `--calls`, after the rounds. Unlike the CPU time it hardly moves with the load
 * of the machine, and every byte is work for the garbage collector and a cache line to fill.
 * Numbers only: nothing here asserts a duration.
 */
import diagnostics from 'node:diagnostics_channel';
import { Session } from 'node:inspector/promises';
import { parseArgs } from 'node:util';
import { CHANNEL_NAMES } from '../../src/client/host/diag-channels.js';
import { LimitedClient, wrapFetch } from '../../src/index.js';
import { markdownTable } from './lib/table.js';

const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '200000' },
    rounds: { type: 'string', default: '7' },
    before: { type: 'string' },
    lib: { type: 'string' },
    subscribed: { type: 'boolean' },
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
let remaining = 1_000_000_000;
/** The declaring double: a generous policy, the count going down by one per call. */
const declaring = (async () =>
  new Response(null, {
    status: 200,
    headers: {
      ...HEADERS,
      'ratelimit-policy': '"generous";q=1000000000;w=3600',
      ratelimit: `"generous";r=${--remaining};t=1800`,
    },
  })) as typeof fetch;
/** The body double: a fresh response with a two-byte body, read by every call that uses it. */
const withBody = (async () =>
  new Response('ok', { status: 200, headers: HEADERS })) as typeof fetch;
/** Calls `f` and reads the body of what it answers. */
const reading = (f: () => Promise<Response>) => async () => {
  const response = await f();
  await response.text();
  return response;
};
type Lib = { LimitedClient: typeof LimitedClient; wrapFetch: typeof wrapFetch };
type Entry = [string, () => Promise<Response>, number];
const closers: (() => Promise<void>)[] = [];

/** The contenders made with one copy of the package; `tag` marks their names. */
function clients(lib: Lib, tag: string): Entry[] {
  const declared = lib.wrapFetch(declaring);
  const wrapped = lib.wrapFetch(double);
  const wrappedCold = lib.wrapFetch(double, { coldStart: false });
  const client = new lib.LimitedClient('http://h.test', { fetch: double });
  const bare = lib.wrapFetch(double, {
    learnLimits: false,
    retry: false,
    retryBudget: false,
    circuitBreaker: false,
  });
  const bodies = lib.wrapFetch(withBody);
  const capped = lib.wrapFetch(withBody, { concurrency: 16 });
  closers.push(wrapped.close, wrappedCold.close, () => client.close(), bare.close, declared.close);
  closers.push(bodies.close, capped.close);
  return [
    [`wrapFetch (defaults)${tag}`, () => wrapped(URL_), 0],
    [`wrapFetch (coldStart: false)${tag}`, () => wrappedCold(URL_), 0],
    [`LimitedClient.get (defaults)${tag}`, () => client.get('/x'), 0],
    [`wrapFetch (every policy off)${tag}`, () => bare(URL_), 0],
    [`wrapFetch (defaults), declaring double${tag}`, () => declared(URL_), 1],
    [`wrapFetch (defaults), body read${tag}`, reading(() => bodies(URL_)), 2],
    [`wrapFetch (concurrency: 16), body read${tag}`, reading(() => capped(URL_)), 2],
  ];
}

/** [name, the call, the index of the double it is compared with]. */
const contenders: Entry[] = [
  ['fetch double', () => double(URL_), 0],
  ['declaring double', () => declaring(URL_), 1],
  ['body double, body read', reading(() => withBody(URL_)), 2],
];
/** A copy of the package named on the command line (relative to the working directory). */
const load = async (at: string) =>
  (await import(new URL(at, `file://${process.cwd()}/`).href)) as Lib;
const lib = values.lib ? await load(values.lib) : { LimitedClient, wrapFetch };
const current = clients(lib, '');
/** Where the current copy's contenders start; with `--before`, its own follow them in order. */
const firstCurrent = contenders.length;
contenders.push(...current);
if (values.before) contenders.push(...clients(await load(values.before), ' (before)'));
/** Contenders timed with a no-op subscriber on every diagnostics channel (`--subscribed`). */
const subscribed = new Set<number>();
if (values.subscribed) {
  const watched = lib.wrapFetch(double);
  closers.push(watched.close);
  subscribed.add(contenders.length);
  contenders.push(['wrapFetch (defaults), every channel subscribed', () => watched(URL_), 0]);
}
/** Runs `work`, with a no-op subscriber on every channel while it runs if contender `i` wants one. */
async function watching<T>(i: number, work: () => Promise<T>): Promise<T> {
  if (!subscribed.has(i)) return work();
  const noop = () => {};
  for (const name of Object.values(CHANNEL_NAMES)) diagnostics.subscribe(name, noop);
  try {
    return await work();
  } finally {
    for (const name of Object.values(CHANNEL_NAMES)) diagnostics.unsubscribe(name, noop);
  }
}

/** CPU nanoseconds per call of `f`, called `n` times one after the other. */
async function time(f: () => Promise<Response>, n: number): Promise<number> {
  const cpu = process.cpuUsage();
  for (let i = 0; i < n; i++) await f();
  const used = process.cpuUsage(cpu);
  return ((used.user + used.system) * 1000) / n;
}

for (const [i, [, f]] of contenders.entries())
  await watching(i, () => time(f, Math.min(calls, 20_000)));
const samples = contenders.map(() => [] as number[]);
for (let r = 0; r < rounds; r++) {
  for (let k = 0; k < contenders.length; k++) {
    const i = (k + r) % contenders.length;
    const [, f] = contenders[i] as (typeof contenders)[number];
    samples[i]?.push(await watching(i, () => time(f, calls)));
  }
}
/** Bytes allocated per call of `f` over `n` calls, as V8's sampling heap profiler estimates them. */
async function allocated(session: Session, f: () => Promise<Response>, n: number) {
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: 64,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  for (let i = 0; i < n; i++) await f();
  const { profile } = await session.post('HeapProfiler.stopSampling');
  // Each node's `selfSize` is V8's estimate of all it allocated, its samples scaled up by the
  // chance that an object of their size is sampled at all (a sample's own `size` is not).
  let bytes = 0;
  const nodes = [profile.head];
  for (let node = nodes.pop(); node !== undefined; node = nodes.pop()) {
    bytes += node.selfSize;
    nodes.push(...node.children);
  }
  return bytes / n;
}
const session = new Session();
session.connect();
const bytesPerCall: number[] = [];
for (const [i, [, f]] of contenders.entries()) {
  const n = Math.max(1000, Math.floor(calls / 10));
  bytesPerCall.push(await watching(i, () => allocated(session, f, n)));
}
session.disconnect();

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? Number.NaN;
};
console.log(
  markdownTable(
    ['contender', 'CPU ns per call (median)', 'over its double', 'bytes allocated over its double'],
    contenders.map(([name, , of], i) => {
      const ns = median(samples[i] ?? []);
      const base = median(samples[of] ?? []);
      const bytes = (bytesPerCall[i] ?? 0) - (bytesPerCall[of] ?? 0);
      return i === of
        ? [name, ns.toFixed(0), '-', `(${(bytesPerCall[i] ?? 0).toFixed(0)})`]
        : [name, ns.toFixed(0), `+${(ns - base).toFixed(0)}`, `+${bytes.toFixed(0)}`];
    }),
  ),
);
if (values.before) {
  // Each round's two copies ran a few seconds apart: their ratio, round by round, cancels most of
  // what the machine's load did to both, which the medians above do not.
  const ratios = current.map(([name], k) => {
    const now = samples[firstCurrent + k] ?? [];
    const then = samples[firstCurrent + current.length + k] ?? [];
    const perRound = now.map((ns, r) => ns / (then[r] ?? Number.NaN)).sort((a, b) => a - b);
    const range = `${perRound[0]?.toFixed(3)}-${perRound.at(-1)?.toFixed(3)}`;
    return [name, median(perRound).toFixed(3), range];
  });
  console.log(
    `\n${markdownTable(['contender', 'CPU per call, this / before (median of rounds)', 'range'], ratios)}`,
  );
}
console.log(
  `\n${calls} sequential calls per contender per round, ${rounds} rounds, node ${process.version}`,
);
await Promise.all(closers.map((close) => close()));

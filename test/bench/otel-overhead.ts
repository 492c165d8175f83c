/**
 * What metrics cost, measured side by side in one run (numbers only; nothing here asserts a speed).
 * Issue 27's targets: with metrics on, the client's overhead against a quiet host within 3 % of
 * metrics off, and off unchanged; the mock server's requests/s with metrics on within 10 % of off.
 *
 * The client's contenders, each one warm client made once:
 * - `bare`: a `LimitedClient` nobody instruments (metrics off, the default);
 * - `noop`: the same passed to `instrument()` with no provider: the API's global one, which does
 *   nothing until the application registers an SDK (the entry installed, metrics not collected);
 * - `on`: the same instrumented onto a real SDK `MeterProvider` (its reader collects once a part);
 * - `before` (with `--before <dir>/src/index.ts`): another checkout's client, say the tree before
 *   issue 27 (`git archive 30c136e^1 src | tar -x -C test/bench/results/before`): "bare" against
 *   it says whether a client without metrics changed (other work in between counts too).
 *
 * 0. The pipeline alone: a fetch double that answers at once, `--calls` sequential calls per run,
 *    CPU nanoseconds per call; the paired differences to `bare` are the metrics' own cost per call.
 * 1. End to end: calls over loopback to a quiet mock server in this process (one route, a fixed
 *    window so high that nothing is refused), at concurrency 1 and 50, plain fetch beside them. The
 *    contenders' order rotates each round (each runs first, second... equally often); each round
 *    gives every contender's requests/s and CPU per request over `bare`'s in that round. CPU is of
 *    this whole process (client and server both run here): the less disturbed of the two measures
 *    on a shared machine.
 * 2. The mock server with `metrics: true` against one without, the same route, driven by an undici
 *    Pool at concurrency 50 from this process; rotated rounds, on over off.
 *
 * Each ratio: the median over the rounds, the middle half (25th-75th percentile) and the extremes.
 * Prints the load average before and after.
 *
 *   npm run bench:otel -- [--rounds 12] [--requests 2000] [--calls 50000] [--built]
 *     [--before test/bench/results/before/src/index.ts]
 *
 * @module
 */
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { Pool } from 'undici';
import * as sources from '../../src/index.js';
import { instrument as instrumentSources } from '../../src/otel/index.js';
import { createMockServer } from '../../src/server/index.js';
import { median, rotated, underLoad } from './lib/paired.js';

type Lib = Pick<typeof sources, 'LimitedClient'>;
type Client = Pick<sources.LimitedClient, 'get' | 'close'>;

const { values } = parseArgs({
  options: {
    rounds: { type: 'string' },
    requests: { type: 'string' },
    before: { type: 'string' },
    calls: { type: 'string' },
    built: { type: 'boolean' },
  },
});
/**
 * `--built`: the package as published (`dist/`, after `npm run build`) for bare, noop and on; tsx
 * names every closure made at run time (esbuild's `keepNames`), a cost the published code has not.
 */
const lib: Lib = values.built
  ? ((await import(new URL('../../dist/index.js', import.meta.url).href)) as Lib)
  : sources;
const instrument: typeof instrumentSources = values.built
  ? (
      (await import(new URL('../../dist/otel/index.js', import.meta.url).href)) as {
        instrument: typeof instrumentSources;
      }
    ).instrument
  : instrumentSources;
const before: Lib | undefined = values.before
  ? ((await import(new URL(values.before, `file://${process.cwd()}/`).href)) as Lib)
  : undefined;
const ROUNDS = Number(values.rounds ?? 12);
const REQUESTS = Number(values.requests ?? 2000);
const CALLS = Number(values.calls ?? 50_000);

/** A reader that collects only when asked (as a pull exporter would between scrapes). */
class PullReader extends MetricReader {
  protected override async onForceFlush() {}
  protected override async onShutdown() {}
}

const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
console.log(
  `${new Date().toISOString()}  load average ${load()}  (${ROUNDS} rounds, ${REQUESTS} requests per run, ${values.built ? 'dist/' : 'sources'})`,
);

/** The `p` quantile of `values` (nearest rank). */
const quantile = (values: readonly number[], p: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(p * values.length))] ??
  Number.NaN;
const fmt = (x: number) => x.toFixed(3);
/** `median (p25-p75; min-max)` of ratios. */
const spread = (v: readonly number[]) =>
  `${fmt(median(v))} (${fmt(quantile(v, 0.25))}-${fmt(quantile(v, 0.75))}; ${fmt(Math.min(...v))}-${fmt(Math.max(...v))})`;

const reader = new PullReader();
const meterProvider = new MeterProvider({ readers: [reader] });

/** The client contenders on `origin` (and a `fetch` for it): bare, noop, on, before. */
function clients(origin: string, fetchImpl?: typeof fetch) {
  const make = (l: Lib) =>
    new l.LimitedClient(origin, fetchImpl ? { fetch: fetchImpl } : {}) as Client;
  const bare = make(lib);
  const noop = make(lib);
  const on = make(lib);
  const handles = [
    instrument(noop as sources.LimitedClient),
    instrument(on as sources.LimitedClient, { meterProvider }),
  ];
  const list: [string, Client][] = [
    ['bare', bare],
    ['noop', noop],
    ['on', on],
  ];
  if (before) list.push(['before', make(before)]);
  return {
    list,
    async close() {
      for (const handle of handles) handle.stop();
      for (const [, client] of list) await client.close();
    },
  };
}

/** Per contender, a list of values per round. */
class Cells {
  readonly #cells = new Map<string, number[]>();
  push(name: string, value: number): void {
    this.#cells.set(name, [...(this.#cells.get(name) ?? []), value]);
  }
  get(name: string): number[] {
    return this.#cells.get(name) ?? [];
  }
}

// 0. The pipeline alone: a fetch double answering at once, sequential calls, CPU per call.
{
  const double = (async () => new Response(null, { status: 200 })) as typeof fetch;
  const { list, close } = clients('http://double.test', double);
  const run = async (client: Client, n: number) => {
    const cpu = process.cpuUsage();
    for (let i = 0; i < n; i++) await client.get('/x');
    const used = process.cpuUsage(cpu);
    return ((used.user + used.system) * 1000) / n;
  };
  for (const [, client] of list) await run(client, CALLS / 5);
  const ns = new Cells();
  const diffs = new Cells();
  for (let round = 0; round < ROUNDS; round++) {
    const got = new Map<string, number>();
    for (const [name, client] of rotated(list, round)) got.set(name, await run(client, CALLS));
    for (const [name, v] of got) {
      ns.push(name, v);
      diffs.push(name, v - (got.get('bare') as number));
    }
  }
  console.log(
    `\n0. the pipeline alone (a fetch double, ${CALLS} sequential calls per run): CPU ns per call`,
  );
  for (const [name] of list) {
    const v = ns.get(name);
    const d = name === 'bare' ? '' : `  ${name} - bare ${Math.round(median(diffs.get(name)))} ns`;
    console.log(
      `  ${name.padEnd(8)} ${String(Math.round(median(v))).padStart(6)} ns (${Math.round(Math.min(...v))}-${Math.round(Math.max(...v))})${d}`,
    );
  }
  await close();
}

// 1. End to end: a quiet mock server on loopback.
const quiet = await createMockServer({
  routes: [{ path: '/x', limits: [{ algorithm: 'fixed-window', limit: 1e9, windowMs: 60_000 }] }],
});
for (const concurrency of [1, 50]) {
  const { list, close } = clients(quiet.url);
  const plain = async () => (await fetch(`${quiet.url}/x`)).arrayBuffer();
  const contenders: [string, () => Promise<unknown>][] = [
    ['fetch', plain],
    ...list.map(([name, client]): [string, () => Promise<unknown>] => [
      name,
      async () => (await client.get('/x')).arrayBuffer(),
    ]),
  ];
  // Warm up every contender (the cold start, the JIT).
  for (const [, one] of contenders) await underLoad(500, concurrency, one);
  const rates = new Cells();
  const cpus = new Cells();
  const rateRatios = new Cells();
  const cpuRatios = new Cells();
  for (let round = 0; round < ROUNDS; round++) {
    const got = new Map<string, [number, number]>();
    for (const [name, one] of rotated(contenders, round)) {
      got.set(name, await underLoad(REQUESTS, concurrency, one));
    }
    const [bareRate, bareCpu] = got.get('bare') as [number, number];
    for (const [name, [rate, cpu]] of got) {
      rates.push(name, rate);
      cpus.push(name, cpu);
      rateRatios.push(name, rate / bareRate);
      cpuRatios.push(name, cpu / bareCpu);
    }
  }
  await reader.collect(); // the metrics were recorded
  console.log(
    `\n1. end to end, a quiet mock server on loopback, concurrency ${concurrency}: per round over bare, median (p25-p75; min-max)`,
  );
  for (const [name] of contenders) {
    const rel = name === 'bare' ? '' : `  req/s ${spread(rateRatios.get(name))}`;
    const cpuRel = name === 'bare' ? '' : `  CPU ${spread(cpuRatios.get(name))}`;
    console.log(
      `  ${name.padEnd(7)} ${String(Math.round(median(rates.get(name)))).padStart(6)} req/s ${String(Math.round(median(cpus.get(name)))).padStart(4)} µs CPU/req${rel}${cpuRel}`,
    );
  }
  await close();
}
await quiet.close();
await meterProvider.shutdown();

// 2. The mock server, metrics on against off.
const config = (metrics: boolean) => ({
  metrics,
  routes: [
    {
      path: '/x',
      limits: [{ algorithm: 'fixed-window' as const, limit: 1e9, windowMs: 60_000 }],
    },
  ],
});
const servers = {
  off: await createMockServer(config(false)),
  on: await createMockServer(config(true)),
};
const pools = {
  off: new Pool(servers.off.url, { connections: 50 }),
  on: new Pool(servers.on.url, { connections: 50 }),
};
const hit = (pool: Pool) => async () => {
  const r = await pool.request({ path: '/x', method: 'GET' });
  await r.body.dump();
};
for (const name of ['off', 'on'] as const) await underLoad(2000, 50, hit(pools[name]));
const rates = new Cells();
const cpus = new Cells();
const ratios: number[] = [];
const cpuRatios: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  const got = new Map<string, [number, number]>();
  for (const name of rotated(['off', 'on'] as const, round)) {
    got.set(name, await underLoad(REQUESTS * 2, 50, hit(pools[name])));
  }
  const [offRate, offCpu] = got.get('off') as [number, number];
  const [onRate, onCpu] = got.get('on') as [number, number];
  rates.push('off', offRate);
  rates.push('on', onRate);
  cpus.push('off', offCpu);
  cpus.push('on', onCpu);
  ratios.push(onRate / offRate);
  cpuRatios.push(onCpu / offCpu);
}
console.log('\n2. mock server, concurrency 50 (undici Pool in this process)');
for (const name of ['off', 'on']) {
  console.log(
    `  metrics ${name.padEnd(4)} ${Math.round(median(rates.get(name)))} req/s  ${Math.round(median(cpus.get(name)))} µs CPU/req`,
  );
}
console.log(`  on / off: req/s ${spread(ratios)}  CPU ${spread(cpuRatios)}`);
for (const pool of Object.values(pools)) await pool.close();
await servers.off.close();
await servers.on.close();
console.log(`\nload average after ${load()}`);

/**
 * What metrics cost, measured side by side in one run (numbers only; nothing here asserts a speed):
 *
 * 1. The client against a quiet loopback host (a bare `node:http` server answering 200 with two
 *    bytes): plain fetch, a warm `LimitedClient` without metrics ("off"), and a warm one
 *    instrumented with `instrument()` onto a real SDK `MeterProvider` ("on"), at concurrency 1 and
 *    50. In every round fetch runs first and last, off and on in between (their order alternates);
 *    each round gives on/off and each contender's ratio to the mean of that round's fetch runs.
 *    `--before <dir>/src/index.ts` adds another checkout's client (say main's) as "off (before)":
 *    "off" against it says whether a client without metrics changed.
 * 2. The mock server with `metrics: true` against one without, the same route (a fixed window so
 *    high that nothing is refused), driven by an undici Pool at concurrency 50 from this process;
 *    rounds alternate which goes first.
 *
 * Medians over the rounds with the lowest and highest ratio; CPU microseconds per request of this
 * process (client and server both run here). Prints the load average before and after.
 *
 * 0. First, the pipeline alone: a fetch double that answers at once, `--calls` sequential calls
 *    per run, CPU nanoseconds per call off and on (and before): the on - off difference is the
 *    metrics' own cost per call, which the loopback rounds below cannot resolve on a busy machine.
 *
 *   npm run bench:otel -- [--rounds 7] [--requests 3000] [--calls 50000] [--built]
 *     [--before /work/main/src/index.ts]
 *
 * @module
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { Pool } from 'undici';
import * as sources from '../../src/index.js';
import { instrument as instrumentSources } from '../../src/otel/index.js';
import { createMockServer } from '../../src/server/index.js';
import { median, underLoad } from './lib/paired.js';

type Lib = Pick<typeof sources, 'LimitedClient'>;

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
 * `--built`: the package as published (`dist/`, after `npm run build`) for "off" and "on"; tsx
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
const ROUNDS = Number(values.rounds ?? 7);
const REQUESTS = Number(values.requests ?? 3000);

/** A reader that collects only when asked (as a pull exporter would between scrapes). */
class PullReader extends MetricReader {
  protected override async onForceFlush() {}
  protected override async onShutdown() {}
}

const before: Lib | undefined = values.before
  ? ((await import(new URL(values.before, `file://${process.cwd()}/`).href)) as Lib)
  : undefined;

const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
console.log(
  `${new Date().toISOString()}  load average ${load()}  (${ROUNDS} rounds, ${REQUESTS} requests per run)`,
);

const quiet = createServer((_req, res) => res.end('ok'));
await new Promise<void>((resolve) => quiet.listen(0, '127.0.0.1', resolve));
const quietUrl = `http://127.0.0.1:${(quiet.address() as AddressInfo).port}`;

const fmt = (x: number) => x.toFixed(3);
function summary(name: string, ratios: number[], rates: number[], cpus: number[]) {
  return `${name.padEnd(22)} ${String(Math.round(median(rates))).padStart(6)} req/s  ratio ${fmt(median(ratios))} (${fmt(Math.min(...ratios))}-${fmt(Math.max(...ratios))})  ${Math.round(median(cpus))} µs CPU/req`;
}

// 0. The pipeline alone: a fetch double answering at once, sequential calls, CPU per call.
const reader = new PullReader();
const meterProvider = new MeterProvider({ readers: [reader] });
{
  const CALLS = Number(values.calls ?? 50_000);
  const double = (async () => new Response(null, { status: 200 })) as typeof fetch;
  const make = (lib: Lib) => new lib.LimitedClient('http://double.test', { fetch: double });
  const off = make(lib);
  const on = make(lib);
  const handle = instrument(on, { meterProvider });
  const contenders: [string, sources.LimitedClient][] = [
    ['off', off],
    ['on', on],
  ];
  if (before) contenders.push(['off (before)', make(before) as sources.LimitedClient]);
  const run = async (client: sources.LimitedClient, n: number) => {
    const cpu = process.cpuUsage();
    for (let i = 0; i < n; i++) await client.get('/x');
    const used = process.cpuUsage(cpu);
    return ((used.user + used.system) * 1000) / n;
  };
  for (const [, client] of contenders) await run(client, CALLS / 5);
  const ns = new Map<string, number[]>();
  const diffs: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? contenders : [...contenders].reverse();
    const got = new Map<string, number>();
    for (const [name, client] of order) got.set(name, await run(client, CALLS));
    for (const [name, v] of got) ns.set(name, [...(ns.get(name) ?? []), v]);
    diffs.push((got.get('on') as number) - (got.get('off') as number));
  }
  console.log(
    `\n0. the pipeline alone (a fetch double, ${CALLS} sequential calls per run): CPU ns per call`,
  );
  for (const [name, v] of ns) {
    console.log(
      `  ${name.padEnd(14)} ${Math.round(median(v))} ns (${Math.round(Math.min(...v))}-${Math.round(Math.max(...v))})`,
    );
  }
  console.log(`  on - off: ${Math.round(median(diffs))} ns per call (paired per round)`);
  handle.stop();
  for (const [, client] of contenders) await client.close();
}

// 1. The client.
for (const concurrency of [1, 50]) {
  const off = new lib.LimitedClient(quietUrl);
  const on = new lib.LimitedClient(quietUrl);
  const handle = instrument(on, { meterProvider });
  const offBefore = before ? new before.LimitedClient(quietUrl) : undefined;
  const get = (client: { get(path: string): Promise<Response> }) => async () =>
    (await client.get('/x')).arrayBuffer();
  const plain = async () => (await fetch(`${quietUrl}/x`)).arrayBuffer();
  const contenders: [string, () => Promise<unknown>][] = [
    ['off', get(off)],
    ['on', get(on)],
  ];
  if (offBefore) contenders.push(['off (before)', get(offBefore)]);
  // Warm up every contender (the cold start, the JIT).
  for (const [, one] of contenders) await underLoad(500, concurrency, one);
  await underLoad(500, concurrency, plain);
  const cells = new Map<string, { ratios: number[]; rates: number[]; cpus: number[] }>();
  const onOff: number[] = [];
  const onOffCpu: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const [fetchA] = await underLoad(REQUESTS, concurrency, plain);
    const order = round % 2 === 0 ? contenders : [...contenders].reverse();
    const got = new Map<string, [number, number]>();
    for (const [name, one] of order) got.set(name, await underLoad(REQUESTS, concurrency, one));
    const [fetchB] = await underLoad(REQUESTS, concurrency, plain);
    const base = (fetchA + fetchB) / 2;
    for (const [name, [rate, cpu]] of got) {
      const cell = cells.get(name) ?? { ratios: [], rates: [], cpus: [] };
      cell.ratios.push(rate / base);
      cell.rates.push(rate);
      cell.cpus.push(cpu);
      cells.set(name, cell);
    }
    const [onRate, onCpu] = got.get('on') as [number, number];
    const [offRate, offCpu] = got.get('off') as [number, number];
    onOff.push(onRate / offRate);
    onOffCpu.push(offCpu / onCpu);
  }
  await reader.collect(); // the metrics were recorded
  console.log(
    `\n1. client, quiet host, concurrency ${concurrency} (ratio: to plain fetch in the same round)`,
  );
  for (const [name, cell] of cells)
    console.log(`  ${summary(name, cell.ratios, cell.rates, cell.cpus)}`);
  console.log(
    `  on / off: ${fmt(median(onOff))} (${fmt(Math.min(...onOff))}-${fmt(Math.max(...onOff))}); CPU off/on ${fmt(median(onOffCpu))}`,
  );
  handle.stop();
  await off.close();
  await on.close();
  await offBefore?.close();
}
await meterProvider.shutdown();

// 2. The mock server.
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
const rates = { off: [] as number[], on: [] as number[] };
const cpus = { off: [] as number[], on: [] as number[] };
const ratios: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  const order = round % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const);
  const got = { off: [0, 0], on: [0, 0] };
  for (const name of order) got[name] = await underLoad(REQUESTS * 2, 50, hit(pools[name]));
  for (const name of order) {
    rates[name].push(got[name][0] as number);
    cpus[name].push(got[name][1] as number);
  }
  ratios.push((got.on[0] as number) / (got.off[0] as number));
}
console.log('\n2. mock server, concurrency 50 (undici Pool in this process)');
console.log(
  `  metrics off  ${Math.round(median(rates.off))} req/s  ${Math.round(median(cpus.off))} µs CPU/req`,
);
console.log(
  `  metrics on   ${Math.round(median(rates.on))} req/s  ${Math.round(median(cpus.on))} µs CPU/req`,
);
console.log(
  `  on / off: ${fmt(median(ratios))} (${fmt(Math.min(...ratios))}-${fmt(Math.max(...ratios))})`,
);
for (const pool of Object.values(pools)) await pool.close();
await servers.off.close();
await servers.on.close();
quiet.close();
console.log(`\nload average after ${load()}`);

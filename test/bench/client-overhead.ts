/**
 * What the client costs on a healthy host: requests per second through `LimitedClient` and
 * `wrapFetch` (defaults) next to plain `fetch`, against two loopback hosts that never refuse:
 *
 * - quiet: a bare `node:http` server that answers 200 with two bytes and no rate-limit header (the
 *   cheapest server there is, so the client's own cost weighs the most);
 * - declared: the in-repo mock server with a fixed window declared in IETF headers, its limit set
 *   so high that nothing is refused (the client learns and tracks a quota it never reaches).
 *
 * For each host and each concurrency (1, 16, 50, 200 calls in flight), every contender sends the
 * same number of GETs and reads every body. A fresh client is made (and closed) for each round, so
 * its round includes the cold start; a warm client is made once, warmed up, and reused. The
 * contenders run one at a time (the benchmark is CPU-bound), after a warm-up run each; in every
 * round plain fetch runs before and after each contender (whose order rotates from round to
 * round), and the contender's rate is divided by the mean of those two runs of fetch. The table
 * gives the median of those ratios over the rounds and their spread (lowest and highest). It also
 * gives the CPU time of this process per request (client and server: both run here), from
 * `process.cpuUsage()` deltas, and its ratio to fetch's paired the same way: other processes on a
 * shared machine disturb it less than the wall clock. Numbers only: nothing here asserts a speed.
 *
 * Before the rounds, one fresh client per host is sent the largest concurrency through a fetch that
 * counts the requests in flight: the table below the ratios says how many answers came back before
 * the client had that many requests in flight (the cold-start ramp adds one per answer).
 *
 *   npm run bench -- --only overhead [--quick] [--built] [--concurrency 1,16] [--host quiet]
 *     [--before <dir>/index.ts]
 *
 * `--before` loads a second copy of the package (another checkout's `src/index.ts` or built
 * `dist/index.js`, say `main`'s) and adds its four contenders, marked `(before)`, to the same
 * rounds: a change measured against what it replaces in one run, on the same machine load.
 *
 * `--built` measures the package as published (`dist/`, after `npm run build`) instead of the
 * sources compiled on the fly by tsx (see {@link loadBuilt}).
 *
 * @module
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as sources from '../../src/index.js';
import { createMockServer } from '../../src/server/index.js';
import { median, type PairedCells, pairedCells, underLoad } from './lib/paired.js';

/** The client under test: the sources (as tsx runs them), or the built package (`--built`). */
type Library = Pick<typeof sources, 'LimitedClient' | 'wrapFetch'>;
let lib: Library = sources;
/** The copy of the package `--before` names, if any. */
let before: Library | undefined;

/**
 * Loads the built package (`dist/`, made by `npm run build`) instead of the sources. tsx compiles
 * the sources with esbuild's `keepNames`, which names every closure made at run time through a
 * call to `Object.defineProperty`: a cost the published package does not have.
 */
async function loadBuilt(): Promise<Library> {
  const path = new URL('../../dist/index.js', import.meta.url).href;
  try {
    return (await import(path)) as Library;
  } catch (error) {
    throw new Error(`--built: cannot load ${path} (run npm run build first)`, { cause: error });
  }
}

/** The hosts the overhead is measured against. */
export type OverheadHost = 'quiet' | 'declared';

/** One contender at one concurrency against one host. */
export interface OverheadResult extends PairedCells {
  host: OverheadHost;
  concurrency: number;
  client: string;
}

/** How a fresh client ramps up to the largest concurrency. */
export interface RampResult {
  host: OverheadHost;
  concurrency: number;
  /** Answers received before `concurrency` requests were first in flight; -1 if never. */
  answersBeforeFull: number;
  /**
   * The round trip in which that happened: 1 for requests sent before any answer, n + 1 for those
   * sent once an answer of round trip n came back; -1 if never.
   */
  roundTripsToFull: number;
  /** Milliseconds from the first call to that moment; -1 if never. */
  msToFull: number;
  /** The median time an answer took until then, in milliseconds (the round trip of the moment). */
  medianAnswerMs: number;
  /** The most requests in flight at once. */
  peakInFlight: number;
}

export interface OverheadOptions {
  quick: boolean;
  /** Measure the built package (`dist/`) rather than the sources. */
  built?: boolean;
  concurrencies?: number[];
  hosts?: OverheadHost[];
  /** A second copy of the package to measure in the same rounds (a path to its index module). */
  before?: string;
}

type Get = (url: string) => Promise<Response>;
/** One run: [requests per second, CPU µs per request]. */
type Run = [number, number];
/** A contender's run next to fetch's: [rate ratio, CPU ratio, requests/s, CPU µs per request]. */
type Sample = [number, number, number, number];

/** A contender hands out a call function per round, and cleans up after the round. */
interface Contender {
  name: string;
  open(): { get: Get; done(): Promise<void> };
  close(): Promise<void>;
}

const nothing = async () => {};

function fresh(name: string, make: () => { get: Get; close(): Promise<void> }): Contender {
  return {
    name,
    open() {
      const c = make();
      return { get: c.get, done: () => c.close() };
    },
    close: nothing,
  };
}

function warm(name: string, made: { get: Get; close(): Promise<void> }): Contender {
  return { name, open: () => ({ get: made.get, done: nothing }), close: () => made.close() };
}

const limitedClient = (fetchImpl?: typeof fetch, from: Library = lib) => {
  const client = new from.LimitedClient('http://127.0.0.1', fetchImpl ? { fetch: fetchImpl } : {});
  return { get: (url: string) => client.request(url), close: () => client.close() };
};
const wrapped = (from: Library = lib) => {
  const f = from.wrapFetch();
  return { get: (url: string) => f(url), close: () => f.close() };
};

/** The four clients of one copy of the package; `tag` marks their names. */
function clientsOf(from: Library, tag: string): Contender[] {
  return [
    fresh(`LimitedClient, fresh${tag}`, () => limitedClient(undefined, from)),
    warm(`LimitedClient, warm${tag}`, limitedClient(undefined, from)),
    fresh(`wrapFetch, fresh${tag}`, () => wrapped(from)),
    warm(`wrapFetch, warm${tag}`, wrapped(from)),
  ];
}

function contenders(): Contender[] {
  return [
    { name: 'fetch', open: () => ({ get: (url) => fetch(url), done: nothing }), close: nothing },
    ...clientsOf(lib, ''),
    ...(before ? clientsOf(before, ' (before)') : []),
  ];
}

async function quietHost(): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' });
    res.end('ok');
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/free`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function declaredHost(): Promise<{ url: string; close(): Promise<void> }> {
  const server = await createMockServer({
    routes: [
      {
        path: '/free',
        // Far more than any run sends: the quota is declared, tracked, and never reached.
        limits: [
          {
            algorithm: 'fixed-window',
            limit: 1_000_000_000,
            windowMs: 3_600_000,
            key: 'global',
            name: 'generous',
          },
        ],
        headers: 'ietf',
      },
    ],
  });
  return { url: `${server.url}/free`, close: () => server.close() };
}

/** Sends `requests` GETs of `url` with `concurrency` in flight; [requests/s, CPU µs/request]. */
async function measure(get: Get, url: string, requests: number, concurrency: number): Promise<Run> {
  let failed = 0;
  const run = await underLoad(requests, concurrency, async () => {
    const response = await get(url);
    await response.arrayBuffer();
    if (response.status !== 200) failed++;
  });
  if (failed > 0) throw new Error(`${failed} of ${requests} requests were not answered 200`);
  return run;
}

/** A fresh client at `concurrency` in flight, through a fetch that counts requests in flight. */
async function rampProbe(host: OverheadHost, url: string, concurrency: number) {
  let inFlight = 0;
  let answers = 0;
  let peak = 0;
  let answersBeforeFull = -1;
  let msToFull = -1;
  let roundTripsToFull = -1;
  // A request sent before any answer is of round trip 1; one sent after an answer of round trip n
  // came back is of round trip n + 1 (at most).
  let answeredRound = 0;
  const answerTimes: number[] = [];
  const start = performance.now();
  const counting = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const round = answeredRound + 1;
    inFlight++;
    peak = Math.max(peak, inFlight);
    if (inFlight >= concurrency && answersBeforeFull < 0) {
      answersBeforeFull = answers;
      msToFull = performance.now() - start;
      roundTripsToFull = round;
    }
    const sent = performance.now();
    try {
      return await fetch(input, init);
    } finally {
      inFlight--;
      answers++;
      answeredRound = Math.max(answeredRound, round);
      if (msToFull < 0) answerTimes.push(performance.now() - sent);
    }
  }) as typeof fetch;
  const client = limitedClient(counting);
  await measure(client.get, url, concurrency * 10, concurrency);
  await client.close();
  return {
    host,
    concurrency,
    answersBeforeFull,
    roundTripsToFull,
    msToFull: Math.round(msToFull),
    medianAnswerMs: Number(median(answerTimes).toFixed(1)),
    peakInFlight: peak,
  } satisfies RampResult;
}

/** Runs the comparison; `quick` runs fewer requests and rounds. */
export async function clientOverhead(
  options: OverheadOptions,
): Promise<{ results: OverheadResult[]; ramps: RampResult[] }> {
  const { quick } = options;
  if (options.built) lib = await loadBuilt();
  if (options.before) {
    before = (await import(new URL(options.before, `file://${process.cwd()}/`).href)) as Library;
  }
  const concurrencies = options.concurrencies ?? [1, 16, 50, 200];
  const hosts = options.hosts ?? ['quiet', 'declared'];
  const requests = quick ? 1000 : 2000;
  const rounds = quick ? 3 : 7;
  const results: OverheadResult[] = [];
  const ramps: RampResult[] = [];

  for (const host of hosts) {
    const server = host === 'quiet' ? await quietHost() : await declaredHost();
    ramps.push(await rampProbe(host, server.url, Math.max(...concurrencies)));
    for (const concurrency of concurrencies) {
      const [plain, ...others] = contenders() as [Contender, ...Contender[]];
      const round = async (c: Contender) => {
        const { get, done } = c.open();
        try {
          return await measure(get, server.url, requests, concurrency);
        } finally {
          await done();
        }
      };
      for (const c of [plain, ...others]) await round(c); // connections, JIT, the warm clients
      const fetchRuns: Run[] = [];
      // Per contender and round: [rate ratio, CPU ratio, rate, CPU µs per request].
      const samples = others.map(() => [] as Sample[]);
      for (let r = 0; r < rounds; r++) {
        // fetch, A, fetch, B, fetch...: each run of a contender sits between two runs of fetch,
        // and is compared with their mean, so a burst of load elsewhere on the machine weighs on
        // both sides of the ratio. The contenders' order rotates from round to round.
        let before = await round(plain);
        fetchRuns.push(before);
        for (let k = 0; k < others.length; k++) {
          const i = (k + r) % others.length;
          const mine = await round(others[i] as Contender);
          const after = await round(plain);
          fetchRuns.push(after);
          const rate = (before[0] + after[0]) / 2;
          const cpu = (before[1] + after[1]) / 2;
          samples[i]?.push([mine[0] / rate, cpu / mine[1], mine[0], mine[1]]);
          before = after;
        }
      }
      await Promise.all([plain, ...others].map((c) => c.close()));
      results.push({
        host,
        concurrency,
        client: plain.name,
        requestsPerSecond: Math.round(median(fetchRuns.map(([rate]) => rate))),
        ratio: 1,
        ratioMin: 1,
        ratioMax: 1,
        cpuMicrosPerRequest: Math.round(median(fetchRuns.map(([, cpu]) => cpu))),
        cpuRatio: 1,
      });
      others.forEach((c, i) => {
        const mine = samples[i] as Sample[];
        const ratios = mine.map(([ratio]) => ratio);
        results.push({
          host,
          concurrency,
          client: c.name,
          ...pairedCells(
            mine.map(([, , rate]) => rate),
            ratios,
            mine.map(([, , , cpu]) => cpu),
            mine.map(([, cpuRatio]) => cpuRatio),
          ),
        });
      });
      const line = results
        .slice(-others.length)
        .map((r) => `${r.client} ${r.ratio.toFixed(2)}x (CPU ${r.cpuRatio.toFixed(2)}x)`)
        .join(', ');
      console.log(`  ${host}, ${concurrency} in flight: ${line}`);
    }
    await server.close();
  }
  return { results, ramps };
}

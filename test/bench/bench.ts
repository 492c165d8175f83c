/**
 * The comparison users choose a client by: LimitedClient next to ky, got, undici's RetryAgent and
 * a p-retry loop over fetch, against the same in-repo mock server scenarios, in one run.
 *
 *   npm run bench -- [results.json] [--quick] [--only peers|overhead|goodput|outage|wild|undici|scopes]
 *     [--concurrency 1,16,50,200] [--host quiet,declared] [--built] [--before <dir>/index.ts]
 *     (the overhead and undici sections; `--before`: a second copy of the package in the same
 *     rounds; in goodput and wild, a comma-separated list: each copy's LimitedClient beside this
 *     one's, at the same time) [--mine] (goodput, wild: LimitedClient and `--before` copies only)
 *     [--scenario <name part>] (the wild and scopes sections: only the scenarios whose name contains it)
 *     [--split] (the undici section: also `limited()` with each policy off in turn, what each costs)
 *
 * Sections (each prints a markdown table of ratios; the raw numbers go to the JSON file):
 * 1. peers: requests per second of every contender against an unlimited loopback endpoint,
 *    relative to plain fetch (alternating rounds, median ratio; CPU-bound, so contenders run one
 *    at a time);
 *    overhead: LimitedClient and wrapFetch, fresh and warm, next to plain fetch at concurrency 1,
 *    16, 50 and 200, against a host that sends no rate-limit header and one that declares a
 *    generous quota; ratio, spread, CPU per request, and how fast a fresh client ramps up (see
 *    client-overhead.ts);
 * 2. goodput: N requests at concurrency C against token-bucket, fixed-window and GCRA limits, for
 *    each header family, and (4.) for a server that sends only Retry-After: elapsed over the
 *    theoretical minimum (N - B) / R, 429s received, attempts per request, requests that failed.
 *    The contenders of one scenario run side by side, each against its own server;
 * 3. outage: a stream of requests at a fixed rate while the server answers 503 for a while:
 *    attempts that reached the server per request started during the outage, and the time from
 *    the end of the outage to the first success;
 * 5. wild: limiters nobody here wrote (real nginx limit_req with 429 and with 503, koa-ratelimit,
 *    real HAProxy's stick table that counts the requests it refuses) and providers' dialects (a secondary limit's 429 + Retry-After beside a declared quota,
 *    GitHub's 403 + retry-after, Reddit's decimal counts); same cells as goodput (see wild.ts).
 * 6. undici: requests per second through `undici.request` with a bare undici Agent, the Agent
 *    composed with a no-op interceptor, with undici's `interceptors.retry()`, with `limited()`
 *    from limited-client/undici, and with `limited()` with every policy off, at 16 and 50 in
 *    flight (ratio to the bare Agent, alternating rounds; see undici-overhead.ts).
 * 7. scopes (only when asked: `--only scopes`): eight providers' shapes of many budgets per host
 *    (test/peers/provider-shapes.ts), LimitedClient, ky, @octokit/plugin-throttling and
 *    @discordjs/rest (see scopes.ts; `--scenario github` runs one shape; `--apart` runs each
 *    contender and its server in a child process of its own, one at a time, instead of all the
 *    contenders of a shape side by side in this process; `--rounds n` repeats the shapes n times,
 *    alternating, and the table shows each cell's median run).
 *
 * Loopback only; every run is bounded in requests and time and the script stops by itself.
 */
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { parseArgs } from 'node:util';
import type { LimitedClient, LimitedClientOptions } from '../../src/index.js';
import {
  createMockServer,
  type HeaderFamily,
  type LimitConfig,
  type MockServer,
} from '../../src/server/index.js';
import { clientOverhead, type OverheadHost } from './client-overhead.js';
import { type OutageFigures, runOutage } from './lib/outage.js';
import {
  type Contender,
  gotRetry,
  kyRetry,
  limitedClientContender,
  plainFetch,
  pRetryLoop,
  RETRIES,
  undiciRetryAgent,
} from './lib/peers.js';
import { fixed, markdownTable } from './lib/table.js';
import { type ScopesResult, scopes } from './scopes.js';
import { undiciOverhead } from './undici-overhead.js';
import { type WildResult, wild } from './wild.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    json: { type: 'string' },
    quick: { type: 'boolean', default: false },
    only: { type: 'string' },
    concurrency: { type: 'string' },
    host: { type: 'string' },
    built: { type: 'boolean', default: false },
    before: { type: 'string' },
    scenario: { type: 'string' },
    apart: { type: 'boolean', default: false },
    mine: { type: 'boolean', default: false },
    rounds: { type: 'string', default: '1' },
    split: { type: 'boolean', default: false },
  },
});
const jsonPath = values.json ?? positionals[0];
const quick = values.quick;
const sections = new Set(
  (values.only ?? 'peers,overhead,goodput,outage,wild,undici').split(',').map((s) => s.trim()),
);
const known = ['peers', 'overhead', 'goodput', 'outage', 'wild', 'undici', 'scopes'];
for (const s of sections) {
  if (!known.includes(s)) throw new Error(`--only: unknown section ${s} (${known.join(', ')})`);
}

const limitedClient = (name?: string, options?: LimitedClientOptions): Contender =>
  limitedClientContender(name, options);

type Factory = () => Contender;
// `--before a/index.ts,b/index.ts` in the goodput and wild sections: LimitedClient of each copy
// beside this one's, in the same scenarios at the same time, named by the copy's directory.
const copies: Factory[] = [];
for (const path of values.before?.split(',') ?? []) {
  const href = new URL(path.trim(), `file://${process.cwd()}/`).href;
  const copy = (await import(href)) as { LimitedClient: typeof LimitedClient };
  const dir = path.trim().split('/').slice(0, -2).pop() ?? path;
  copies.push(() => limitedClientContender(`LimitedClient (${dir})`, {}, copy.LimitedClient));
}
const peers: Factory[] = values.mine
  ? [limitedClient, ...copies]
  : [limitedClient, ...copies, () => kyRetry, () => gotRetry, undiciRetryAgent, () => pRetryLoop];

const timeout = <T>(ms: number, promise: Promise<T>, what: string): Promise<T> =>
  Promise.race([
    promise,
    new Promise<T>((_, reject) =>
      setTimeout(() => reject(new Error(`${what} exceeded ${ms} ms`)), ms).unref(),
    ),
  ]);

// ---------------------------------------------------------------- 1. peers
interface PeersResult {
  client: string;
  requestsPerSecond: number;
  ratioToFetch: number;
}

async function peersOverhead(): Promise<PeersResult[]> {
  const server = await createMockServer({ routes: [{ path: '/free' }] });
  const url = `${server.url}/free`;
  const requests = quick ? 1000 : 3000;
  const concurrency = 16;
  const rounds = quick ? 3 : 5;
  const contenders = [plainFetch, ...peers.map((make) => make())];
  const rates = new Map<string, number[]>(contenders.map((c) => [c.name, []]));

  async function measure(contender: Contender): Promise<number> {
    let next = 0;
    const start = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < requests) {
          next++;
          await contender.get(url);
        }
      }),
    );
    return requests / ((performance.now() - start) / 1000);
  }

  for (const contender of contenders) await measure(contender); // warm up connections and JIT
  for (let round = 0; round < rounds; round++) {
    for (const contender of contenders) rates.get(contender.name)?.push(await measure(contender));
  }
  await Promise.all(contenders.map((c) => c.close?.()));
  await server.close();

  const median = (xs: number[]) =>
    [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
  const fetchRates = rates.get(plainFetch.name) as number[];
  return contenders.map((c) => {
    const mine = rates.get(c.name) as number[];
    // Per round, ratio to the fetch run of the same round; then the median of those ratios.
    const ratios = mine.map((r, i) => r / (fetchRates[i] as number));
    return {
      client: c.name,
      requestsPerSecond: Math.round(median(mine)),
      ratioToFetch: median(ratios),
    };
  });
}

// ---------------------------------------------------------------- 2 and 4. goodput
const N = quick ? 30 : 60;
const C = 10;
const R = 10;
const B = 10;
const minimumMs = ((N - B) / R) * 1000;

interface GoodputResult {
  scenario: string;
  client: string;
  ok: number;
  elapsedMs: number;
  ratio: number;
  received429: number;
  attemptsPerRequest: number;
}

const algorithms: Record<string, LimitConfig> = {
  'token-bucket': {
    algorithm: 'token-bucket',
    capacity: B,
    refillPerSecond: R,
    key: 'global',
    name: 'tb',
  },
  'fixed-window': {
    algorithm: 'fixed-window',
    limit: B,
    windowMs: (B / R) * 1000,
    key: 'global',
    name: 'fw',
  },
  gcra: { algorithm: 'gcra', rate: R, burst: B - 1, key: 'global', name: 'gcra' },
};
const families: (HeaderFamily | 'retry-after only')[] = quick
  ? ['ietf', 'retry-after only']
  : ['ietf', 'draft-7', 'draft-6', 'x-ratelimit', 'retry-after only'];

async function goodputRun(
  limit: LimitConfig,
  family: HeaderFamily | 'retry-after only',
  make: Factory,
) {
  const server: MockServer = await createMockServer({
    routes: [
      {
        path: '/items/:id',
        limits: [limit],
        headers: family === 'retry-after only' ? 'none' : family,
        retryAfter: 'seconds',
      },
    ],
  });
  const contender = make();
  let next = 0;
  let ok = 0;
  const start = performance.now();
  await timeout(
    120_000,
    Promise.all(
      Array.from({ length: C }, async () => {
        while (next < N) {
          const i = next++;
          if ((await contender.get(`${server.url}/items/${i}`)) === 200) ok++;
        }
      }),
    ),
    contender.name,
  );
  const elapsedMs = performance.now() - start;
  const stats = server.stats();
  await contender.close?.();
  await server.close();
  return {
    client: contender.name,
    ok,
    elapsedMs: Math.round(elapsedMs),
    ratio: elapsedMs / minimumMs,
    received429: stats.rejected,
    attemptsPerRequest: (stats.admitted + stats.rejected) / N,
  };
}

async function goodput(): Promise<GoodputResult[]> {
  const results: GoodputResult[] = [];
  for (const [algorithm, limit] of Object.entries(algorithms)) {
    for (const family of families) {
      const scenario = `${algorithm} / ${family}`;
      const runs = await Promise.all(peers.map((make) => goodputRun(limit, family, make)));
      for (const run of runs) results.push({ scenario, ...run });
      const mine = runs[0];
      console.log(
        `  ${scenario}: LimitedClient ${fixed(mine?.ratio)}x, ${mine?.received429} x 429; ` +
          runs
            .slice(1)
            .map((r) => `${r.client} ${fixed(r.ratio)}x, ${r.received429} x 429`)
            .join('; '),
      );
    }
  }
  return results;
}

// ---------------------------------------------------------------- 3. outage
const RATE = 20;
const BEFORE_MS = 1000;
const OUTAGE_MS = quick ? 2000 : 3000;
const AFTER_MS = 3000;

interface OutageResult extends OutageFigures {
  client: string;
}

async function outageRun(make: Factory): Promise<OutageResult> {
  const contender = make();
  try {
    const figures = await runOutage({
      start: (unavailable) =>
        createMockServer({ routes: [{ path: '/data/:id', faults: { unavailable } }] }),
      get: (url) => contender.get(url),
      rate: RATE,
      beforeMs: BEFORE_MS,
      outageMs: OUTAGE_MS,
      afterMs: AFTER_MS,
      label: contender.name,
    });
    return { client: contender.name, ...figures };
  } finally {
    await contender.close?.();
  }
}

// ---------------------------------------------------------------- run
const report: Record<string, unknown> = {
  date: new Date().toISOString(),
  node: process.version,
  cores: os.cpus().length,
  retriesGivenToPeers: RETRIES,
};
console.log(
  `limited-client bench: Node ${process.version}, ${os.cpus().length} cores${quick ? ', quick' : ''}\n`,
);

if (sections.has('peers')) {
  console.log(
    '1. Next to the peers, against an unlimited loopback endpoint (median of alternating rounds)',
  );
  const results = await peersOverhead();
  report.peers = results;
  console.log(
    markdownTable(
      ['client', 'requests/s', 'relative to fetch'],
      results.map((r) => [r.client, r.requestsPerSecond, fixed(r.ratioToFetch)]),
    ),
    '\n',
  );
}

if (sections.has('overhead')) {
  console.log(
    "1b. The client's overhead on healthy hosts. fetch: requests/s, CPU µs per request (client and server, one process); the others: requests/s relative to fetch (median of the rounds, lowest-highest), CPU µs per request (fetch's over this, median)",
  );
  const list = (s: string | undefined) => s?.split(',').map((x) => x.trim());
  const { results, ramps } = await clientOverhead({
    quick,
    built: values.built,
    before: values.before,
    concurrencies: list(values.concurrency)?.map(Number),
    hosts: list(values.host) as OverheadHost[] | undefined,
  });
  report.overhead = { results, ramps };
  const clients = [...new Set(results.map((r) => r.client))];
  const cells = [...new Set(results.map((r) => `${r.host}|${r.concurrency}`))];
  console.log(
    markdownTable(
      ['host', 'in flight', ...clients],
      cells.map((cell) => {
        const [host, concurrency] = cell.split('|');
        return [
          host as string,
          concurrency as string,
          ...clients.map((client) => {
            const r = results.find(
              (x) => `${x.host}|${x.concurrency}` === cell && x.client === client,
            );
            if (!r) return '-';
            return client === 'fetch'
              ? `${r.requestsPerSecond}/s, ${r.cpuMicrosPerRequest} µs`
              : `${fixed(r.ratio)} (${fixed(r.ratioMin)}-${fixed(r.ratioMax)}), ${r.cpuMicrosPerRequest} µs (${fixed(r.cpuRatio)})`;
          }),
        ];
      }),
    ),
    '\n',
  );
  console.log('A fresh LimitedClient sent the largest concurrency at once:');
  console.log(
    markdownTable(
      [
        'host',
        'in flight asked',
        'answers before all in flight',
        'longest chain of round trips',
        'ms to all in flight',
        'median answer ms until then',
        'peak in flight',
      ],
      ramps.map((r) => [
        r.host,
        r.concurrency,
        r.answersBeforeFull,
        r.roundTripsToFull,
        r.msToFull,
        r.medianAnswerMs,
        r.peakInFlight,
      ]),
    ),
    '\n',
  );
}

if (sections.has('goodput')) {
  console.log(
    `2. Goodput: ${N} requests at concurrency ${C}; server ${R}/s with a burst of ${B}; minimum ${minimumMs / 1000} s`,
  );
  const results = await goodput();
  report.goodput = { N, C, R, B, minimumMs, results };
  const names = [...new Set(results.map((r) => r.client))];
  const scenarios = [...new Set(results.map((r) => r.scenario))];
  // A contender that gave up on some requests did not finish the job: no elapsed ratio for it.
  const cell = (r: GoodputResult | undefined) =>
    r
      ? `${r.ok < N ? `${N - r.ok} failed` : `${fixed(r.ratio)}x`} / ${r.received429} / ${fixed(r.attemptsPerRequest)}`
      : '-';
  console.log(
    '\nelapsed / minimum (or the requests that failed), 429s received, attempts per request',
  );
  console.log(
    markdownTable(
      ['scenario', ...names],
      scenarios.map((s) => [
        s,
        ...names.map((n) => cell(results.find((r) => r.scenario === s && r.client === n))),
      ]),
    ),
    '\n',
  );
}

if (sections.has('outage')) {
  console.log(
    `3. Outage: ${RATE} requests/s; 503s from ${BEFORE_MS} ms for ${OUTAGE_MS} ms, then healthy`,
  );
  // The breaker trades recovery time (up to one cool-down) for silence during the outage; the
  // second row shows the retry budget alone.
  const noBreaker = () => limitedClient('LimitedClient, no breaker', { circuitBreaker: false });
  const results = await Promise.all([...peers, noBreaker].map((make) => outageRun(make)));
  report.outage = { RATE, BEFORE_MS, OUTAGE_MS, AFTER_MS, results };
  console.log(
    markdownTable(
      [
        'client',
        'requests started during the outage',
        'attempts per request during it',
        'recovery (ms)',
        'failed after it',
      ],
      results.map((r) => [
        r.client,
        r.startedDuringOutage,
        fixed(r.attemptsPerRequestDuringOutage),
        r.recoveryMs ?? '-',
        r.failedAfterOutage,
      ]),
    ),
    '\n',
  );
}

if (sections.has('wild')) {
  console.log(
    "5. In the wild: limiters nobody here wrote, and providers' dialects (each contender on its own instance, all at once)",
  );
  const { results, skipped } = await wild(peers, quick, values.scenario);
  report.wild = { results, skipped };
  const names = [...new Set(results.map((r) => r.client))];
  const scenarios = [...new Set(results.map((r) => r.scenario))];
  const cell = (r: WildResult | undefined) =>
    r
      ? `${r.ok < r.requests ? `${r.requests - r.ok} failed` : `${fixed(r.ratio)}x`} / ${r.rejections} / ${fixed(r.attemptsPerRequest)}`
      : '-';
  console.log(
    '\nelapsed / minimum (or the calls that failed), rejections received, attempts per request',
  );
  console.log(
    markdownTable(
      ['scenario (requests, minimum)', ...names],
      scenarios.map((s) => {
        const first = results.find((r) => r.scenario === s);
        return [
          `${s} (${first?.requests}, ${fixed((first?.minimumMs ?? 0) / 1000, 1)} s)`,
          ...names.map((n) => cell(results.find((r) => r.scenario === s && r.client === n))),
        ];
      }),
    ),
    '\n',
  );
  for (const line of skipped) console.log(`skipped: ${line}`);
}

if (sections.has('undici')) {
  console.log(
    '6. The undici interceptor: undici.request against an unlimited loopback endpoint (alternating rounds; ratios to the bare Agent, median and spread)',
  );
  const results = await undiciOverhead(quick, values.before, values.split);
  report.undici = results;
  console.log(
    markdownTable(
      [
        'dispatcher',
        'in flight',
        'requests/s',
        'relative to the bare Agent (min-max)',
        'CPU µs per request',
        'CPU relative',
      ],
      results.map((r) => [
        r.client,
        r.concurrency,
        r.requestsPerSecond,
        `${fixed(r.ratio)} (${fixed(r.ratioMin)}-${fixed(r.ratioMax)})`,
        r.cpuMicrosPerRequest,
        fixed(r.cpuRatio),
      ]),
    ),
    '\n',
  );
}

if (sections.has('scopes')) {
  console.log(
    `7. Many budgets per host (issue 26): eight providers' shapes, ${values.apart ? 'each contender and its server in a child process of its own, one at a time' : 'each contender on its own instance, all at once'}; load ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  const all = await scopes(
    values.scenario,
    values.apart ? 'apart' : 'together',
    Number(values.rounds),
  );
  report.scopes = all;
  // Each cell's median run by elapsed (the only run with one round).
  const results = medianRuns(all);
  const names = [...new Set(results.map((r) => r.client))];
  const shapes = [...new Set(results.map((r) => r.shape))];
  const cell = (r: ScopesResult | undefined) =>
    r
      ? `${r.failed > 0 ? `${r.failed} failed` : r.leastMs > 0 ? `${fixed(r.ratio)}x` : `${fixed(r.elapsedMs / 1000)} s`} / ${r.refusals} / ${fixed(r.attemptsPerCall)}`
      : '-';
  console.log(
    '\nelapsed / least time (seconds where the least time is nil; or the calls that failed: not ended on a 2xx, or THROTTLED handed back), refusals, attempts per call',
  );
  console.log(
    markdownTable(
      ['shape (calls, least time)', ...names],
      shapes.map((s) => {
        const first = results.find((r) => r.shape === s);
        return [
          `${s} (${first?.calls}, ${fixed((first?.leastMs ?? 0) / 1000, 1)} s)`,
          ...names.map((n) => cell(results.find((r) => r.shape === s && r.client === n))),
        ];
      }),
    ),
    '\n',
  );
  console.log('Each worker: elapsed s (least s), calls failed');
  for (const r of results) {
    console.log(
      `  ${r.shape} / ${r.client}: ` +
        r.workers
          .map(
            (w) =>
              `${w.name} ${fixed(w.elapsedMs / 1000, 1)} (${fixed(w.leastMs / 1000, 1)})${w.failed ? `, ${w.failed} failed` : ''}`,
          )
          .join('; ') +
        (r.failed > 0 ? `; failed by status: ${JSON.stringify(r.failedByStatus)}` : '') +
        (r.problems ? `; rejected: ${JSON.stringify(r.problems)}` : ''),
    );
  }
  githubTargets(all);
  console.log(
    `load ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}\n`,
  );
}

function median(xs: number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** Of each shape and contender's runs, the one of median elapsed (the lower of the middle two). */
function medianRuns(all: ScopesResult[]): ScopesResult[] {
  const cells = new Map<string, ScopesResult[]>();
  for (const r of all) {
    const key = `${r.shape}\u0000${r.client}`;
    cells.set(key, [...(cells.get(key) ?? []), r]);
  }
  return [...cells.values()].map((runs) => {
    const sorted = [...runs].sort((a, b) => a.elapsedMs - b.elapsedMs);
    return sorted[Math.floor((sorted.length - 1) / 2)] as ScopesResult;
  });
}

/**
 * Issue 26's GitHub targets per contender and round: the ordinary calls' time beside the searches
 * over their time alone in the same round (target 1.1x), the searches' time over their least
 * (1.15x), refusals in the mix (at most 2); then the median of each over the rounds.
 */
function githubTargets(all: ScopesResult[]): void {
  const mixes = all.filter((r) => r.shape.startsWith('GitHub (core'));
  if (mixes.length === 0) return;
  const worker = (r: ScopesResult | undefined, name: string) =>
    r?.workers.find((w) => w.name === name);
  console.log('GitHub: ordinary beside searches / alone (same round); searches / least; refusals');
  const byClient = new Map<string, { ordinary: number[]; search: number[]; refusals: number[] }>();
  for (const r of mixes) {
    const alone = all.find(
      (a) =>
        a.shape.startsWith('GitHub, the ordinary') && a.client === r.client && a.round === r.round,
    );
    const beside = worker(r, 'ordinary')?.elapsedMs ?? Number.NaN;
    const aloneMs = worker(alone, 'ordinary')?.elapsedMs ?? Number.NaN;
    const search = worker(r, 'search');
    const searchRatio = (search?.elapsedMs ?? Number.NaN) / (search?.leastMs ?? Number.NaN);
    const figures = byClient.get(r.client) ?? { ordinary: [], search: [], refusals: [] };
    figures.ordinary.push(beside / aloneMs);
    if (!search?.failed) figures.search.push(searchRatio);
    figures.refusals.push(r.refusals);
    byClient.set(r.client, figures);
    console.log(
      `  round ${r.round ?? 1}, ${r.client}: ordinary ${fixed(beside / 1000)} s / ${fixed(aloneMs / 1000)} s = ` +
        `${fixed(beside / aloneMs)}x; searches ${fixed((search?.elapsedMs ?? Number.NaN) / 1000)} s / ` +
        `${fixed((search?.leastMs ?? Number.NaN) / 1000, 1)} s = ${fixed(searchRatio)}x` +
        `${search?.failed ? ` (${search.failed} failed)` : ''}; refusals ${r.refusals}`,
    );
  }
  for (const [client, f] of byClient) {
    console.log(
      `  median of ${f.ordinary.length}, ${client}: ordinary ${fixed(median(f.ordinary))}x ` +
        `(${fixed(Math.min(...f.ordinary))}-${fixed(Math.max(...f.ordinary))}); searches ` +
        `${f.search.length > 0 ? `${fixed(median(f.search))}x` : '-'}; refusals ${Math.min(...f.refusals)}-${Math.max(...f.refusals)}`,
    );
  }
}

if (jsonPath) {
  writeFileSync(jsonPath, `${JSON.stringify(report, null, 2)}\n`);
  console.log(`Raw numbers: ${jsonPath}`);
}

/**
 * The main job: the same burst of requests against a rate-limited server, once through
 * LimitedClient and once through fetch with the retry loop people write first. Prints a table and
 * writes an SVG chart (requests per 100 ms over time, for both, against the server's limit).
 *
 *   npm run demo -- [--n 120] [--rate 20] [--burst 20] [--svg path/to/chart.svg] [--keep] [--help]
 *   npm run demo -- --scopes github|ietf [--n 120] [--rate 20]   (two budgets on one host)
 *
 * The mock server runs in this process on loopback, with a token bucket per contender that
 * declares its policy in the IETF RateLimit fields, and its dashboard on: the demo prints its URL
 * and the page shows both contenders live; `--keep` leaves it up after the table, until Ctrl-C.
 * Bounded: N requests per contender, about (N - B) / R seconds each.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { LimitedClient } from '../../src/index.js';
import { createMockServer } from '../../src/server/index.js';
import { renderChart } from './lib/chart.js';
import {
  DEMO_USAGE,
  elapsedOverLeast,
  leastTimeMs,
  parseDemoArgs,
  progressLine,
} from './lib/demo-report.js';
import { runScopedDemo } from './lib/demo-scoped-run.js';
import {
  DEMO_PREFIXES,
  type DemoContender,
  demoRouteLabel,
  demoServerConfig,
} from './lib/demo-server.js';
import { RETRIES } from './lib/peers.js';
import { fixed, markdownTable } from './lib/table.js';
import { Timeline } from './lib/timeline.js';

const parsed = parseDemoArgs(process.argv.slice(2));
if ('help' in parsed) {
  console.log(parsed.help);
  process.exit(0);
}
if ('error' in parsed) {
  console.error(`${parsed.error}\n\n${DEMO_USAGE}`);
  process.exit(2);
}
const { n: N, rate: R, burst: B, svg: svgOption, keep } = parsed.options;
const BIN_MS = 100;
const minimumMs = leastTimeMs(N, R, B);

interface Outcome {
  name: string;
  timeline: Timeline;
  ok: number;
  elapsedMs: number;
  serverRejected: number;
}

/** Calls answered so far: succeeded (2xx) and failed (anything else, or no response). */
interface Tally {
  succeeded: number;
  failed: number;
}

/** A fetch that records every attempt it makes on the timeline (status 0 for a network error). */
function recordingFetch(timeline: Timeline): typeof fetch {
  return async (input, init) => {
    const at = timeline.elapsed();
    try {
      const response = await fetch(input, init);
      timeline.record(response.status, at);
      return response;
    } catch (error) {
      timeline.record(0, at);
      throw error;
    }
  };
}

/** Rewrites one status line while a contender runs (only on a terminal). */
function progress(name: string, tally: Tally, timeline: Timeline): () => void {
  const tty = process.stdout.isTTY;
  const draw = () => {
    const line = progressLine({
      name,
      calls: N,
      ...tally,
      attempts: timeline.attempts.length,
      rejected: timeline.rejected,
      elapsedMs: timeline.elapsed(),
    });
    if (tty) process.stdout.write(`\r${line.padEnd(78)}`);
    else console.log(line);
  };
  const timer = setInterval(draw, tty ? 200 : 1000);
  return () => {
    clearInterval(timer);
    draw();
    if (tty) process.stdout.write('\n');
  };
}

interface Contender {
  /** One logical GET; resolves to the final status. */
  send(path: string): Promise<number>;
  close?(): Promise<void>;
}

async function runContender(
  name: string,
  route: DemoContender,
  create: (origin: string, record: typeof fetch) => Contender,
): Promise<Outcome> {
  const timeline = new Timeline();
  const contender = create(server.url, recordingFetch(timeline));
  const tally: Tally = { succeeded: 0, failed: 0 };
  const stop = progress(name, tally, timeline);
  const statuses = await Promise.all(
    Array.from({ length: N }, (_, i) =>
      contender.send(`${DEMO_PREFIXES[route]}/orders/${i}`).then(
        (status) => {
          if (status >= 200 && status < 300) tally.succeeded++;
          else tally.failed++;
          return status;
        },
        () => {
          tally.failed++;
          return 0;
        },
      ),
    ),
  );
  const elapsedMs = timeline.elapsed();
  stop();
  const serverRejected = server.stats().routes[demoRouteLabel(route)]?.rejected ?? 0;
  await contender.close?.();
  return {
    name,
    timeline,
    ok: statuses.filter((status) => status >= 200 && status < 300).length,
    elapsedMs,
    serverRejected,
  };
}

/** LimitedClient, one client as an application holds one; its fetch records every attempt. */
function limitedClient(origin: string, record: typeof fetch): Contender {
  const client = new LimitedClient(origin, { fetch: record });
  return {
    async send(path) {
      const response = await client.get(path);
      await response.arrayBuffer();
      return response.status;
    },
    close: () => client.close(),
  };
}

/** The retry loop people write first: every 100 ms, up to RETRIES times. */
function naiveLoop(origin: string, record: typeof fetch): Contender {
  return {
    async send(path) {
      let status = 0;
      for (let attempt = 0; attempt <= RETRIES; attempt++) {
        const response = await record(`${origin}${path}`);
        await response.arrayBuffer();
        status = response.status;
        if (status !== 429 && status < 500) return status;
        await new Promise((r) => setTimeout(r, 100));
      }
      return status;
    },
  };
}

const NAIVE = `fetch + naive retry (100 ms, up to ${RETRIES} retries)`;

if (parsed.options.scopes !== undefined) {
  // The scoped route set: its own run and table, then done (the default run below is unchanged).
  await runScopedDemo(parsed.options.scopes, N, R, [
    { name: 'LimitedClient', create: limitedClient },
    { name: NAIVE, create: naiveLoop },
  ]);
  process.exit(0);
}

// One server for both contenders, a route (and a bucket) each: its dashboard shows them side by side.
const server = await createMockServer(demoServerConfig(R, B));

console.log(
  `Server: token bucket, ${R} requests/s with a burst of ${B}, declared in the IETF RateLimit fields.`,
);
console.log(
  `Each contender sends ${N} GETs at once; the fastest possible is (N - B) / R = ${fixed(minimumMs / 1000, 1)} s.`,
);
console.log(
  `Dashboard: ${server.url}/__dashboard (live while the demo runs${keep ? '' : '; --keep leaves it up after'})\n`,
);

const outcomes: Outcome[] = [];

outcomes.push(await runContender('LimitedClient', 'client', limitedClient));
outcomes.push(await runContender(NAIVE, 'naive', naiveLoop));

// Each contender's time against the least time for the calls it completed: a loop that gave up on
// most of them is not fast for having stopped early.
console.log(
  `\n${markdownTable(
    [
      'client',
      'requests',
      'succeeded',
      'failed',
      '429s received',
      'attempts',
      'elapsed (s)',
      'elapsed / least time for those that succeeded',
    ],
    outcomes.map((o) => [
      o.name,
      N,
      o.ok,
      N - o.ok,
      o.timeline.rejected,
      o.timeline.attempts.length,
      fixed(o.elapsedMs / 1000, 2),
      elapsedOverLeast(o.elapsedMs, o.ok, R, B),
    ]),
  )}`,
);

const untilMs = Math.max(...outcomes.map((o) => o.elapsedMs));
const svg = renderChart({
  title: `${N} requests against ${R}/s (burst ${B}): LimitedClient vs fetch with a naive retry loop`,
  binMs: BIN_MS,
  ratePerSecond: R,
  burst: B,
  panels: outcomes.map((o) => ({ label: o.name, bins: o.timeline.bins(BIN_MS, untilMs) })),
});
const svgPath = resolve(svgOption);
mkdirSync(dirname(svgPath), { recursive: true });
writeFileSync(svgPath, svg);
console.log(`\nChart: ${svgPath}`);

if (keep) {
  console.log(`Dashboard still up at ${server.url}/__dashboard: Ctrl-C to stop.`);
  await new Promise<void>((done) => {
    process.once('SIGINT', done);
    process.once('SIGTERM', done);
  });
}
await server.close();

/**
 * The outage benchmark over a spread of outage lengths, because one length measures one phase of
 * the circuit breaker's cool-down: recovery is the time from the outage's end to the breaker's
 * next probe, anywhere from 0 to the cool-down it is in (1 s, then 2 s, 4 s ... after failed
 * probes) depending on when the breaker opened. 20 GETs a second against the mock server, which
 * answers 503 from 1 s for each length in turn, then 5 s of health. Prints, per length and on
 * average: recovery (ms to the first success after the outage), calls that failed after it, and
 * attempts per request during it.
 *
 *   npx tsx test/bench/outage-sweep.ts [--root <checkout>]
 *
 * `--root` runs another checkout's sources (its `src/`) instead of these, to compare versions
 * under the same conditions (run the two one after the other).
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { type OutageFigures, runOutage } from './lib/outage.js';
import { markdownTable } from './lib/table.js';

const { values } = parseArgs({ options: { root: { type: 'string' } } });
const root = resolve(values.root ?? new URL('../..', import.meta.url).pathname);
const src = (path: string) => pathToFileURL(`${root}/src/${path}`).href;
const { LimitedClient } = (await import(src('index.ts'))) as typeof import('../../src/index.js');
const { createMockServer } = (await import(
  src('server/index.ts')
)) as typeof import('../../src/server/index.js');

const RATE = 20;
const BEFORE_MS = 1000;
const AFTER_MS = 5000;
/** Outage lengths, ms: spread over one 2 s cool-down. */
const LENGTHS = [2600, 2800, 3000, 3200, 3400, 3600, 3800, 4000, 4200, 4400];

interface Row extends OutageFigures {
  outageMs: number;
}

async function run(outageMs: number): Promise<Row> {
  const client = new LimitedClient('http://127.0.0.1');
  try {
    const figures = await runOutage({
      start: (unavailable) =>
        createMockServer({ routes: [{ path: '/data/:id', faults: { unavailable } }] }),
      get: (url) =>
        client.get(url).then(
          async (response) => {
            // An old checkout may hand back a body it cancelled: count the status, not the body.
            await response.arrayBuffer().catch(() => undefined);
            return response.status;
          },
          () => 0,
        ),
      rate: RATE,
      beforeMs: BEFORE_MS,
      outageMs,
      afterMs: AFTER_MS,
      label: `outage of ${outageMs} ms`,
    });
    return { outageMs, ...figures };
  } finally {
    await client.close();
  }
}

const rows: Row[] = [];
for (const length of LENGTHS) rows.push(await run(length));
const mean = (f: (r: Row) => number) => rows.reduce((a, r) => a + f(r), 0) / rows.length;
console.log(`outage sweep: ${root}, ${RATE} GETs/s, 503s from ${BEFORE_MS} ms`);
console.log(
  markdownTable(
    ['outage (ms)', 'recovery (ms)', 'failed after it', 'attempts per request during it'],
    [
      ...rows.map((r) => [
        String(r.outageMs),
        r.recoveryMs === null ? 'none' : String(r.recoveryMs),
        String(r.failedAfterOutage),
        r.attemptsPerRequestDuringOutage.toFixed(2),
      ]),
      [
        'mean',
        mean((r) => r.recoveryMs ?? Number.NaN).toFixed(0),
        mean((r) => r.failedAfterOutage).toFixed(1),
        mean((r) => r.attemptsPerRequestDuringOutage).toFixed(3),
      ],
    ],
  ),
);

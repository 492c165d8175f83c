/**
 * Slow bodies against a server that limits concurrent requests (issue 24, item 6): six calls
 * through `wrapFetch` against the mock server's concurrency limit of 2 (declared in the IETF
 * fields), each body sent one byte every 40 ms (12 bytes: about half a second), every body read.
 * The least time is three waves of two bodies. For each configuration, the median over the rounds
 * of the elapsed time over that least, and the 429s the server answered in all (the client
 * retries them). Numbers only: nothing here asserts a duration.
 *
 *   npx tsx test/bench/body-slots.ts [--rounds 5] [--before <dir>/index.ts]
 *
 * `--before` runs the same configurations with another copy of the package (another checkout's
 * `src/index.ts`), marked `(before)`, in the same rounds.
 *
 * @module
 */
import { parseArgs } from 'node:util';
import * as sources from '../../src/index.js';
import { createMockServer } from '../../src/server/index.js';
import { markdownTable } from './lib/table.js';

const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '5' }, before: { type: 'string' } },
});
const rounds = Number(values.rounds);
const CALLS = 6;
const SLOTS = 2;
const BODY = 'abcdefghij'; // sent as JSON: 12 bytes
const INTERVAL_MS = 40;
const leastMs = Math.ceil(CALLS / SLOTS) * (JSON.stringify(BODY).length - 1) * INTERVAL_MS;

type Lib = Pick<typeof sources, 'wrapFetch'>;
const configurations: [string, sources.LimitedClientOptions][] = [
  ['concurrency: 2', { concurrency: 2 }],
  ['no cap (the declared limit only)', {}],
  ['concurrency: 2, learnLimits: false', { concurrency: 2, learnLimits: false }],
];
const libs: [string, Lib][] = [['', sources]];
if (values.before) {
  const at = new URL(values.before, `file://${process.cwd()}/`).href;
  libs.push([' (before)', (await import(at)) as Lib]);
}

const server = await createMockServer({
  routes: [
    {
      path: '*',
      limits: [{ algorithm: 'concurrency', limit: SLOTS, key: 'global', name: 'slots' }],
      response: { body: BODY },
      faults: { slowBody: { chunkBytes: 1, intervalMs: INTERVAL_MS } },
    },
  ],
});

/** One round of a configuration: [elapsed ms, 429s]. */
async function round(lib: Lib, options: sources.LimitedClientOptions): Promise<[number, number]> {
  const f = lib.wrapFetch(fetch, options);
  const refused = server.stats().rejected;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: CALLS }, async (_, i) => (await f(`${server.url}/x/${i}`)).text()),
  );
  const elapsed = performance.now() - start;
  await f.close();
  return [elapsed, server.stats().rejected - refused];
}

const rows: [string, number[], number][] = [];
for (const [tag] of libs) {
  for (const [name] of configurations) rows.push([`${name}${tag}`, [], 0]);
}
for (let r = 0; r < rounds; r++) {
  let k = 0;
  for (const [, lib] of libs) {
    for (const [, options] of configurations) {
      const row = rows[k++] as [string, number[], number];
      const [elapsed, refused] = await round(lib, options);
      row[1].push(elapsed / leastMs);
      row[2] += refused;
    }
  }
}
await server.close();

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
console.log(
  markdownTable(
    ['configuration', 'elapsed over the least (median)', `429s in ${rounds} rounds`],
    rows.map(([name, ratios, refused]) => [name, median(ratios).toFixed(2), refused]),
  ),
);
console.log(
  `\n${CALLS} calls per round, ${rounds} rounds, least ${leastMs} ms, node ${process.version}`,
);

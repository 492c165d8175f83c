/**
 * A provider shape of test/peers/provider-shapes.ts over loopback HTTP on the real clock, with
 * `wrapFetch()` (defaults) of this copy of the package and of other copies side by side: each on
 * its own instance of the shape's server, all at the same time, for a number of rounds whose order
 * rotates. A change measured against what it replaces on the same machine load (the shapes' own
 * bench, `npm run bench -- --only scopes`, runs ky and the dialects' libraries beside one copy).
 * Prints, per copy, each round's refusals and elapsed over the least time, then the median and
 * range.
 *
 *   npx tsx test/bench/shape-side-by-side.ts [--shape stripe] [--rounds 5]
 *     [--before <copy>/src/index.ts,...]
 */
import { parseArgs } from 'node:util';
import * as here from '../../src/index.js';
import { leastMs, shapeScenarios } from '../peers/provider-shapes.js';

const { values } = parseArgs({
  options: {
    shape: { type: 'string', default: 'stripe' },
    rounds: { type: 'string', default: '5' },
    before: { type: 'string' },
  },
});
const scenario = shapeScenarios().find((s) => s.id === values.shape);
if (scenario === undefined) throw new Error(`--shape: no shape ${values.shape}`);
const copies: { name: string; wrapFetch: typeof here.wrapFetch }[] = [
  { name: 'this copy', wrapFetch: here.wrapFetch },
];
for (const path of values.before?.split(',') ?? []) {
  const href = new URL(path.trim(), `file://${process.cwd()}/`).href;
  const copy = (await import(href)) as typeof here;
  copies.push({
    name: path.trim().split('/').slice(0, -2).pop() ?? path,
    wrapFetch: copy.wrapFetch,
  });
}

/** One run of the shape's workload through `limited`; refusals, attempts, elapsed over least. */
async function run(wrap: typeof here.wrapFetch) {
  const server = await scenario!.start();
  const limited = wrap();
  let failed = 0;
  const start = performance.now();
  await Promise.all(
    scenario!.workers.map(async (worker) => {
      let next = 0;
      await Promise.all(
        Array.from({ length: worker.concurrency }, async () => {
          while (next < worker.calls) {
            const call = worker.call(next++);
            const response = await limited(`${server.url}${call.path}`, {
              method: call.method,
              ...(call.body === undefined
                ? {}
                : {
                    body: JSON.stringify(call.body),
                    headers: { 'content-type': 'application/json' },
                  }),
            });
            if (!scenario!.ok(response.status, await response.text())) failed++;
          }
        }),
      );
    }),
  );
  const ratio = (performance.now() - start) / Math.max(1, leastMs(scenario!));
  const figures = { refusals: server.refusals(), attempts: server.attempts(), ratio, failed };
  await limited.close();
  await server.close();
  return figures;
}

const rows = new Map(copies.map((c) => [c.name, [] as Awaited<ReturnType<typeof run>>[]]));
for (let round = 0; round < Number(values.rounds); round++) {
  const order = copies.map((_, i) => copies[(i + round) % copies.length]!);
  const runs = await Promise.all(order.map((c) => run(c.wrapFetch)));
  for (const [i, c] of order.entries()) rows.get(c.name)?.push(runs[i]!);
  console.log(
    `round ${round + 1}: ` +
      order
        .map((c, i) => `${c.name} ${runs[i]!.refusals} x 429, ${runs[i]!.ratio.toFixed(2)}x`)
        .join('; '),
  );
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log(`\n${scenario.name}, ${values.rounds} rounds: median (lowest-highest)`);
for (const [name, runs] of rows) {
  const refusals = runs.map((r) => r.refusals);
  const ratios = runs.map((r) => r.ratio);
  const failed = runs.reduce((n, r) => n + r.failed, 0);
  console.log(
    `  ${name}: ${median(refusals)} x 429 (${Math.min(...refusals)}-${Math.max(...refusals)}), ` +
      `${median(ratios).toFixed(2)}x (${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)}), ` +
      `${failed} calls failed in all`,
  );
}

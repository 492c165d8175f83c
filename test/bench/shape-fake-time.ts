/**
 * A provider shape of test/peers/provider-shapes.ts on fake time: the simulation and `wrapFetch()`
 * with its defaults share one FakeClock over loopback HTTP, and the clock moves only while nothing
 * is on the wire. A round trip then costs no fake time, so what a worker's fake elapsed time shows
 * is what the client (or the budget) made it wait, the same on a quiet machine and a loaded one;
 * and every run gives the same answers. Prints each worker's fake elapsed time against its least,
 * the refusals, and when each refused request was sent (issue 26: where Stripe's refusals come
 * from; whether anything holds GitHub's ordinary calls beside the searches).
 *
 *   npx tsx test/bench/shape-fake-time.ts [--shape stripe] [--concurrency n] [--calls n] [--log]
 *     [--rate n]
 *   (`--concurrency` and `--calls` replace those of every worker of the shape; `--rate`, Stripe's
 *   rate and bucket per second, for the cold-start ramp's crossing at other sizes: the least time
 *   printed is then the shape's own, not that rate's)
 */
import { parseArgs } from 'node:util';
import { wrapFetch } from '../../src/index.js';
import {
  countingFetch,
  datedBy,
  FakeClock,
  runOnFakeTime,
} from '../client/integration/fake-time.js';
import { shapeScenarios } from '../peers/provider-shapes.js';

const { values } = parseArgs({
  options: {
    shape: { type: 'string', default: 'stripe' },
    calls: { type: 'string' },
    concurrency: { type: 'string' },
    log: { type: 'boolean', default: false },
    rate: { type: 'string' },
  },
});
const scenario = shapeScenarios().find((s) => s.id === values.shape);
if (scenario === undefined) throw new Error(`--shape: no shape ${values.shape}`);
const clock = new FakeClock(1_800_000_000_000);
const server = await scenario.start({
  now: () => clock.now(),
  ...(values.rate === undefined ? {} : { rate: Number(values.rate) }),
});
const t0 = clock.now();
const log: string[] = [];
const wire = countingFetch(async (input, init) => {
  const sentAt = clock.now() - t0;
  const response = await fetch(input, init);
  const path = new URL(String(input)).pathname;
  log.push(`${sentAt} ms: ${response.status} ${init?.method ?? 'GET'} ${path}`);
  return datedBy(clock, response);
});
const limited = wrapFetch(wire.fetch, { clock });
const figures = scenario.workers.map((worker) => ({ worker, elapsedMs: 0, failed: 0 }));
const work = Promise.all(
  figures.map(async (f) => {
    const calls = values.calls === undefined ? f.worker.calls : Number(values.calls);
    const concurrency =
      values.concurrency === undefined ? f.worker.concurrency : Number(values.concurrency);
    let next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < calls) {
          const call = f.worker.call(next++);
          const response = await limited(`${server.url}${call.path}`, {
            method: call.method,
            ...(call.body === undefined
              ? {}
              : {
                  body: JSON.stringify(call.body),
                  headers: { 'content-type': 'application/json' },
                }),
          });
          if (!scenario.ok(response.status, await response.text())) f.failed++;
        }
      }),
    );
    f.elapsedMs = clock.now() - t0;
  }),
);
const ms = await runOnFakeTime(clock, wire, work, { stepMs: 1 });
await work; // A call that rejected ends the run here, with its error.
console.log(
  `${scenario.name}: ${ms} ms of fake time, ${server.refusals()} refusals, ${server.attempts()} attempts; ` +
    `pace at the end ${limited.stats().hosts[server.url]?.paceRate?.toFixed(2) ?? 'none'}`,
);
for (const f of figures) {
  console.log(
    `  ${f.worker.name}: ${f.elapsedMs} ms (least ${f.worker.leastMs} ms), ${f.failed} failed`,
  );
}
console.log('refused requests, by when they were sent:');
for (const line of log) if (values.log || !/: 2\d\d /.test(line)) console.log(`  ${line}`);
await limited.close();
await server.close();

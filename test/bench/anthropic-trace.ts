/**
 * Issue 26: what Anthropic's shape waits for over HTTP. Runs the shape's workload with
 * `wrapFetch()` (defaults) against `startAnthropic()` on the real clock, `--rounds` times, and
 * prints per round: the phase of the start within its second (whole-second resets land against
 * it), each worker's elapsed, and the waits (`held` reasons, policies, longest wait) and sends.
 *
 *   npx tsx test/bench/anthropic-trace.ts [--rounds n] [--log]
 */
import { parseArgs } from 'node:util';
import { wrapFetch } from '../../src/index.js';
import { shapeScenarios } from '../peers/provider-shapes.js';

const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '5' }, log: { type: 'boolean', default: false } },
});
const scenario = shapeScenarios().find((s) => s.id === 'anthropic');
if (scenario === undefined) throw new Error('no anthropic shape');
for (let round = 1; round <= Number(values.rounds); round++) {
  const server = await scenario.start();
  const limited = wrapFetch();
  const t0 = Date.now();
  const at = () => Date.now() - t0;
  const held = new Map<string, { n: number; maxMs: number }>();
  const sends: number[] = [];
  const trace: string[] = [];
  limited.on('held', (e) => {
    const k = `${e.reason} ${e.policy ?? ''}`.trim();
    const h = held.get(k) ?? { n: 0, maxMs: 0 };
    h.n++;
    h.maxMs = Math.max(h.maxMs, e.waitMs ?? 0);
    held.set(k, h);
    trace.push(`${at()} held ${k} ${e.waitMs}`);
  });
  limited.on('sent', (e) => {
    sends.push(at());
    trace.push(`${at()} sent after ${e.waitedMs} (${e.waitReason ?? '-'})`);
  });
  const elapsed = await Promise.all(
    scenario.workers.map(async (worker) => {
      let next = 0;
      await Promise.all(
        Array.from({ length: worker.concurrency }, async () => {
          while (next < worker.calls) {
            const call = worker.call(next++);
            const r = await limited(`${server.url}${call.path}`, {
              method: call.method,
              body: JSON.stringify(call.body),
              headers: { 'content-type': 'application/json' },
            });
            await r.text();
          }
        }),
      );
      return at();
    }),
  );
  const phase = t0 % 1000;
  const waits = [...held].map(([k, h]) => `${k} x${h.n} (max ${h.maxMs} ms)`).join('; ');
  console.log(
    `round ${round}: start at .${String(phase).padStart(3, '0')} s, workers ${elapsed.join(' / ')} ms ` +
      `(least ${scenario.workers[0]?.leastMs}), ${server.refusals()} refusals; sends at ` +
      `${[...new Set(sends.map((s) => Math.round(s / 50) * 50))].join(',')} ms; waits: ${waits}`,
  );
  if (values.log) for (const line of trace) console.log(`  ${line}`);
  await limited.close();
  await server.close();
}

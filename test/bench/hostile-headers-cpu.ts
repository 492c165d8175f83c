/**
 * The client's CPU time on a hostile answer, next to its time on an ordinary one, in one run: the
 * answers of test/hostile/client-answers.ts (statuses of every class, rate-limit fields of every
 * family with hostile names, numbers and dates, fresh policy names by the hundred), each handed to
 * a client by a fetch double that answers at once, so that what is measured is the client's own
 * work on the answer (the header parsing, the rules, the breaker), with no network. The baseline
 * is an ordinary 200 with the IETF fields of one policy, measured in the same rounds.
 *
 *   npx tsx test/bench/hostile-headers-cpu.ts [--answers 2000] [--repeat 20] [--seed 1]
 *
 * Each generated answer is sent `repeat` times through a new client (a fresh host, as each case of
 * the property test is), whose clock skips the waits the answers ask for, and timed by `process.cpuUsage()` around each call; a cell is per call,
 * in microseconds. Prints the median, the 99th percentile and the largest over the hostile answers,
 * the baseline's median, and their ratios. This is the measure that
 * test/hostile/client-headers.property.test.ts prints but does not assert (a CPU bound in a test
 * fails on a loaded machine); a hostile answer that cost a hundred times the ordinary one would be
 * a finding here. Numbers only: nothing here asserts a duration.
 */
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import fc from 'fast-check';
import { type Clock, LimitedClient } from '../../src/index.js';
import { type Answer, answer, renderAnswer } from '../hostile/client-answers.js';
import { fixed, markdownTable } from './lib/table.js';

const { values } = parseArgs({
  options: {
    answers: { type: 'string', default: '2000' },
    repeat: { type: 'string', default: '20' },
    seed: { type: 'string', default: '1' },
  },
});
const ANSWERS = Number(values.answers);
const REPEAT = Number(values.repeat);

const ORDINARY: Answer['lines'] = [
  ['RateLimit-Policy', '"default";q=100;w=60'],
  ['RateLimit', '"default";r=99;t=60'],
  ['Content-Type', 'application/json'],
];

/** A fetch double answering `status` with `headers` at once; `undefined` when fetch could not. */
function double(
  status: number,
  headers: [string, string][],
  body: string,
): typeof fetch | undefined {
  try {
    const empty = status === 204 || status === 205 || status === 304;
    const init = { status, headers };
    new Response(empty ? null : body, init);
    return (async () => new Response(empty ? null : body, init)) as unknown as typeof fetch;
  } catch {
    return undefined;
  }
}

/**
 * A clock whose sleeps end at once and move its time on by what they slept: a hold the answers
 * set costs the client its work, not the run's wall time.
 */
function skippingClock(): Clock {
  let skipped = 0;
  return {
    now: () => Date.now() + skipped,
    sleep: (ms) => {
      skipped += Math.max(0, ms);
      return Promise.resolve();
    },
    random: Math.random,
  };
}

/** CPU microseconds of each of `REPEAT` calls answered by `fetch`, through one new client. */
async function cpuPerCall(fetch: typeof globalThis.fetch): Promise<number[]> {
  const client = new LimitedClient('https://api.example.com', {
    fetch,
    clock: skippingClock(),
    retry: false,
    timeoutMs: 1000,
  });
  const out: number[] = [];
  for (let i = 0; i < REPEAT; i++) {
    const start = process.cpuUsage();
    try {
      const response = await client.get(`/x/${i}`);
      await response.body?.cancel();
    } catch {
      // A refusal (a hold, an open breaker) is an outcome too: its cost counts.
    }
    const used = process.cpuUsage(start);
    out.push(used.user + used.system);
  }
  await client.close();
  return out;
}

function quantile(xs: readonly number[], q: number): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

const load = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');
const before = load();
const samples = fc.sample(answer, { numRuns: ANSWERS, seed: Number(values.seed) });
const serial = { next: 0 };
const ordinary = double(200, ORDINARY, '{}') as typeof fetch;
const hostile: number[] = [];
const baseline: number[] = [];
let skipped = 0;
let worst: { us: number; answer: Answer } | undefined;
// Warm-up: the client's code optimised before the first timed call.
for (let i = 0; i < 200; i++) await cpuPerCall(ordinary);
for (const a of samples) {
  const scripted = renderAnswer(a, serial);
  const fetch = double(scripted.status, scripted.headers ?? [], scripted.body ?? '');
  if (fetch === undefined) {
    skipped++;
    continue;
  }
  // The baseline in the same rounds, so that both see the same machine.
  baseline.push(...(await cpuPerCall(ordinary)));
  const spent = await cpuPerCall(fetch);
  hostile.push(...spent);
  const most = Math.max(...spent);
  if (!worst || most > worst.us) worst = { us: most, answer: a };
}
const base = quantile(baseline, 0.5);
console.log(
  `hostile answers' CPU, ${new Date().toISOString()}, node ${process.version}, ` +
    `${samples.length - skipped} answers x ${REPEAT} calls (${skipped} that fetch itself refuses ` +
    `skipped), load average ${before} (before) ${load()} (after)`,
);
console.log(
  markdownTable(
    [
      'answers',
      'median µs',
      'p99 µs',
      'max µs',
      'median / ordinary',
      'p99 / ordinary',
      'max / ordinary',
    ],
    [
      [
        'ordinary (IETF, one policy)',
        fixed(base, 1),
        fixed(quantile(baseline, 0.99), 1),
        fixed(Math.max(...baseline), 1),
        '1.00',
        '-',
        '-',
      ],
      [
        'hostile (generated)',
        fixed(quantile(hostile, 0.5), 1),
        fixed(quantile(hostile, 0.99), 1),
        fixed(Math.max(...hostile), 1),
        fixed(quantile(hostile, 0.5) / base, 2),
        fixed(quantile(hostile, 0.99) / base, 2),
        fixed(Math.max(...hostile) / base, 2),
      ],
    ],
  ),
);
if (worst) {
  const lines = worst.answer.lines.length;
  console.log(
    `the dearest call: ${fixed(worst.us, 1)} µs, status ${worst.answer.status}, ${lines} header lines`,
  );
}

/**
 * The adaptive pace against limiters that count the requests they refuse (HAProxy's
 * `http_req_rate` with `deny`: a sliding window over two periods, the first starting at the first
 * request), over a grid of periods, limits and concurrencies, on fake time: a model run of the
 * whole client (fetch scripted, 1 to 4 ms per answer), seconds for the grid. Next to it, a loop
 * with ky's retry schedule (10 retries, 0.3 s x 2^n, no jitter) on the same model. It is how the
 * lockout's constants in `src/client/rules/pace.ts` were chosen: edit them and run it again. The
 * real HAProxy is in the wild section of `npm run bench`.
 *
 *   npx tsx test/bench/lockout-sweep.ts
 *
 * Per scenario: elapsed over the least time (period x requests / limit: the first burst fills the
 * first period), refusals, calls completed; and whether LimitedClient met issue 23's bound (every
 * call ky completes, within 1.3x, at most a quarter of ky's refusals).
 */
import { LimitedClient } from '../../src/index.js';
import { FakeClock, respond, scriptedFetch, seeded } from '../client/helpers.js';
import { markdownTable } from './lib/table.js';

/** HAProxy's counter: `limit` per `periodMs`, refused requests counted. */
function countingLimit(periodMs: number, limit: number): (now: number) => boolean {
  let start = Number.NEGATIVE_INFINITY;
  let current = 0;
  let previous = 0;
  return (now) => {
    if (now - start < periodMs) current++;
    else {
      previous = now - start < 2 * periodMs ? current : 0;
      start = now - start < 2 * periodMs ? start + periodMs : now;
      current = 1;
    }
    return current + Math.floor((previous * (start + periodMs - now)) / periodMs) <= limit;
  };
}

interface Run {
  ok: number;
  ms: number;
  refused: number;
}

async function run(
  periodMs: number,
  limit: number,
  concurrency: number,
  seed: number,
  client: 'limited' | 'ky',
): Promise<Run> {
  const requests = 3 * limit;
  const clock = new FakeClock(1_700_000_000_000, seed);
  const latency = seeded(seed * 7 + 1);
  const admit = countingLimit(periodMs, limit);
  let refused = 0;
  const fetch = scriptedFetch(clock, async () => {
    await clock.sleep(1 + Math.floor(latency() * 4));
    if (admit(clock.now())) return respond(200, {}, 'ok');
    refused++;
    return respond(429, {}, 'Too Many Requests');
  });
  const limited =
    client === 'limited' ? new LimitedClient('http://h.test', { fetch, clock }) : undefined;
  const get = async (): Promise<number> => {
    if (limited) {
      try {
        const response = await limited.get('/x');
        await response.arrayBuffer();
        return response.status;
      } catch {
        return 0;
      }
    }
    for (let retry = 0; ; retry++) {
      const response = await fetch('http://h.test/x');
      if (response.status < 300 || retry >= 10) return response.status;
      await clock.sleep(300 * 2 ** retry);
    }
  };
  let next = 0;
  let ok = 0;
  const callers = Array.from({ length: concurrency }, async () => {
    while (next < requests) {
      next++;
      if ((await get()) < 300) ok++;
    }
  });
  const ms = await clock.until(Promise.all(callers), 1_800_000, 5);
  await limited?.close();
  return { ok, ms, refused };
}

const rows: (string | number)[][] = [];
let met = 0;
let total = 0;
const grid: [periodMs: number, limit: number][] = [
  [10_000, 20],
  [4000, 20],
  [2000, 10],
  [10_000, 50],
  [30_000, 30],
  [1000, 5],
];
for (const [periodMs, limit] of grid) {
  for (const concurrency of [5, 10, 20]) {
    for (const seed of [1, 2]) {
      const least = 3 * periodMs;
      const lc = await run(periodMs, limit, concurrency, seed, 'limited');
      const ky = await run(periodMs, limit, concurrency, seed, 'ky');
      const ok = lc.ok >= ky.ok && lc.ms / least <= 1.3 && lc.refused <= ky.refused / 4;
      total++;
      if (ok) met++;
      rows.push([
        `${limit} per ${periodMs / 1000} s, ${concurrency} in flight, seed ${seed}`,
        `${(lc.ms / least).toFixed(2)}x / ${lc.refused} / ${lc.ok}`,
        `${(ky.ms / least).toFixed(2)}x / ${ky.refused} / ${ky.ok}`,
        ok ? 'yes' : 'no',
      ]);
    }
  }
}
console.log(
  markdownTable(
    [
      'scenario (3 x limit GETs)',
      'LimitedClient: elapsed / least, refusals, completed',
      'ky schedule',
      'met',
    ],
    rows,
  ),
);
const ratios = rows.map((r) => Number.parseFloat(String(r[1])));
console.log(
  `\nmet ${met} of ${total}; LimitedClient elapsed / least: mean ${(
    ratios.reduce((a, b) => a + b, 0) / ratios.length
  ).toFixed(2)}, max ${Math.max(...ratios).toFixed(2)}`,
);

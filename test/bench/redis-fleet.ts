/**
 * How closely a fleet of processes sharing one client-side rate through Redis holds that rate, in
 * real time: 3 processes sharing 40/s against a mock server allowing 40/s (the fleet of
 * test/redis/processes.test.ts), Redis up throughout, then paused for a second mid-run (the fleet
 * of test/redis/outage.test.ts). The tests check what cannot depend on the machine's speed (the
 * 429s, the rate never above the limit, every update replayed); how near the limit the fleet
 * stays is a speed, measured here, with the load average beside it.
 *
 *   REDIS_URL=redis://127.0.0.1:6379 npx tsx test/bench/redis-fleet.ts [runs] [client]
 *
 * `runs` (default 3) runs of each; `client` one of test/redis/clients.ts (default node-redis 5).
 * Prints, per run, the fleet's rate over its limit in the measured span (1 s after the start to
 * the end; 1.5 s after the pause to the end), and the 429s.
 */
import { loadavg } from 'node:os';
import { createClient } from 'redis';
import { clientKind } from '../redis/clients.js';
import { runFleet, THREE_AT_40 } from '../redis/fleet/fleet.js';
import { fixed, markdownTable } from './lib/table.js';

const REDIS_URL = process.env.REDIS_URL;
if (!REDIS_URL) {
  console.log('REDIS_URL is not set: nothing to measure.');
  process.exit(0);
}
const runs = Number(process.argv[2] ?? 3);
const client = clientKind(process.argv[3] ?? 'node-redis 5').name;
const RATE = THREE_AT_40.rate;
const load = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');

const admin = createClient({ url: REDIS_URL });
await admin.connect();
const rows: (string | number)[][] = [];
console.log(`${new Date().toISOString()}, load average ${load()}, client ${client}`);
for (let run = 1; run <= runs; run++) {
  const steady = await runFleet({
    ...THREE_AT_40,
    durationMs: 4000,
    storeTimeoutMs: 1000,
    redisUrl: REDIS_URL,
    client,
    prefix: `bench:fleet:${process.pid}:${run}:`,
  });
  const rate = steady.okPerSecond(steady.startAt + 1000, steady.endAt);
  rows.push([run, 'Redis up', fixed(rate / RATE, 3), steady.server.stats().rejected, load()]);

  const pause = { from: 0, to: 0 };
  const paused = await runFleet({
    ...THREE_AT_40,
    durationMs: 6000,
    redisUrl: REDIS_URL,
    client,
    prefix: `bench:fleet:${process.pid}:${run}:p:`,
    during: async (startAt) => {
      await new Promise((r) => setTimeout(r, startAt + 1500 - Date.now()));
      pause.from = Date.now();
      await admin.sendCommand(['CLIENT', 'PAUSE', '1000', 'ALL']);
      pause.to = pause.from + 1000;
    },
  });
  const after = paused.okPerSecond(pause.to + 1500, paused.endAt);
  rows.push([run, 'paused 1 s', fixed(after / RATE, 3), paused.server.stats().rejected, load()]);
}
console.log(markdownTable(['run', 'Redis', 'rate / limit', '429s', 'load average'], rows));
for (const pattern of [`bench:fleet:${process.pid}:*`]) {
  for await (const keys of admin.scanIterator({ MATCH: pattern, COUNT: 500 })) {
    if (keys.length > 0) await admin.del(keys);
  }
}
admin.destroy();

/**
 * What a Redis outage with many hosts costs a client process (issue 24, item 5): `wrapFetch` with a
 * `RedisStore` and a fresh partition per call (a crawler, or a partition per end user), calls made
 * while the store's connection is down, then the connection back. Prints the heap's growth over
 * the outage (after a full collection), the updates kept for replay and dropped, and, once Redis is
 * back, how long the replay took and how many Redis calls were in flight at most.
 *
 *   REDIS_URL=redis://127.0.0.1:6379 npx tsx test/bench/outage-replay.ts [--calls 20000]
 *     [--concurrency 50] [--before <dir>/src]
 *
 * `--before` runs another copy of the package too (another checkout's `src`, say `main`'s), in the
 * same process after this one, for a side-by-side table. The outage is the store's client saying
 * it is not connected (calls fail at once, as while node-redis reconnects): the shared Redis is
 * never paused. Keys go under a prefix of their own and are deleted at the end. Numbers only.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createClient } from 'redis';
import { markdownTable } from './lib/table.js';

const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '20000' },
    concurrency: { type: 'string', default: '50' },
    before: { type: 'string' },
  },
});
const calls = Number(values.calls);
const concurrency = Number(values.concurrency);
if (!process.env.REDIS_URL) throw new Error('REDIS_URL is not set (redis://127.0.0.1:6379)');
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const heap = () => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};

const server = createServer((_req, res) => res.end('ok'));
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
const real = await createClient({ url: process.env.REDIS_URL }).connect();

/** One run with the copy of the package at `src` (a URL of a directory with `index.ts`, `redis/`). */
async function run(label: string, src: URL) {
  const at = (path: string) => new URL(path, src).href;
  const { wrapFetch } = (await import(at('index.ts'))) as typeof import('../../src/index.js');
  const { RedisStore } = (await import(
    at('redis/index.ts')
  )) as typeof import('../../src/redis/index.js');
  let down = false;
  let inFlight = 0;
  let maxInFlight = 0;
  const track = (reply: Promise<unknown>) => {
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    return reply.finally(() => {
      inFlight--;
    });
  };
  const client = {
    get isReady() {
      return !down;
    },
    evalSha: (sha: string, options: { keys: string[]; arguments: string[] }) =>
      track(real.evalSha(sha, options)),
    eval: (script: string, options: { keys: string[]; arguments: string[] }) =>
      track(real.eval(script, options)),
  };
  const prefix = `lc-bench:outage-replay:${Date.now()}:`;
  const store = new RedisStore(client, { prefix, recheckMs: 0 });
  let n = 0;
  const fetch = wrapFetch(globalThis.fetch, { store, partition: () => `p${n++}` });
  await (await fetch(`${url}/warm`, { partition: 'warm' })).text();
  const before = heap();
  down = true;
  const started = performance.now();
  for (let i = 0; i < calls; i += concurrency) {
    const batch = Array.from({ length: Math.min(concurrency, calls - i) }, (_, j) =>
      fetch(`${url}/${i + j}`).then((r) => r.text()),
    );
    await Promise.all(batch);
  }
  const outageS = (performance.now() - started) / 1000;
  const grown = heap() - before;
  const during = store.health() as unknown as Record<string, number>;
  // Back: the next call finds Redis up, and the replay starts.
  down = false;
  maxInFlight = 0;
  const back = performance.now();
  await (await fetch(`${url}/back`, { partition: 'back' })).text();
  const kept = during.pending ?? during.localUpdates;
  const done = () => {
    const h = store.health() as unknown as Record<string, number>;
    return (h.replayed ?? 0) + (h.dropped ?? 0) - (during.dropped ?? 0) >= (kept ?? 0);
  };
  for (let i = 0; i < 1500 && !done(); i++) await new Promise((r) => setTimeout(r, 20));
  const after = store.health() as unknown as Record<string, number>;
  const backS = (performance.now() - back) / 1000;
  await fetch.close();
  for await (const keys of real.scanIterator({ MATCH: `${prefix}*`, COUNT: 1000 })) {
    if (keys.length > 0) await real.del(keys);
  }
  return [
    label,
    `${outageS.toFixed(1)} s`,
    `+${(grown / 1048576).toFixed(1)} MB`,
    `${Math.round(grown / calls)}`,
    String(during.localUpdates),
    during.pending === undefined ? '-' : String(during.pending),
    String(during.dropped),
    String(after.replayed),
    `${backS.toFixed(2)} s${done() ? '' : ' (not done)'}`,
    String(maxInFlight),
  ];
}

const rows = [await run('this copy', new URL('../../src/', import.meta.url))];
if (values.before) {
  rows.push(await run('before', new URL(`${values.before}/`, `file://${process.cwd()}/`)));
}
console.log(
  markdownTable(
    [
      'copy',
      'outage',
      'heap',
      'bytes a call',
      'local updates',
      'kept',
      'dropped',
      'replayed',
      'replay took',
      'most Redis calls at once',
    ],
    rows,
  ),
);
console.log(
  `\n${calls} calls, ${concurrency} in flight, each its own partition, node ${process.version}`,
);
real.destroy();
server.close();

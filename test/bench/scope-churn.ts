/**
 * A server naming a fresh budget on every answer (issue 26, "Bounds"): 100,000 calls through
 * `wrapFetch()` with its defaults to a loopback server whose every answer names a scope never
 * named before, with the heap measured after a full collection at 10,000, 50,000 and 100,000
 * calls. Prints, per adversary, the heap at each mark and what the client holds for the host:
 * scope lanes (`MAX_SCOPES`), remembered routes (`MAX_ROUTES`), distinct names (`MAX_SCOPE_NAMES`),
 * keys in the default state store.
 *
 *   npm run bench:churn -- [--calls 100000] [--concurrency 16] [--only discord-bucket,...]
 *
 * Adversaries (`--only` takes their names):
 * - `discord-bucket`: a fresh `X-RateLimit-Bucket` on every answer (a scope per major parameter);
 * - `github-resource`: a fresh `x-ratelimit-resource` on every answer;
 * - `pk`: a fresh IETF partition key (`pk`) on every answer;
 * - `discord-channel`: one bucket, the caller on a fresh channel every call (a fresh lane name
 *   per call without a fresh server name: the lanes' bound, not the names', is what holds);
 * - `names-in-bound`: 200 names in turn (under the names' cap) while the caller walks fresh
 *   route names (the routes' bound is what holds);
 * - `none`: the same server naming no scope (the reference heap).
 *
 * The server runs in this process (it holds nothing per request), so the heap is the client's plus
 * a constant. Needs `--expose-gc` (the npm script passes it).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { MAX_ROUTES, MAX_SCOPE_NAMES } from '../../src/client/scopes/route-scopes.js';
import { MAX_SCOPES } from '../../src/client/scopes/scope-lanes.js';
import { MemoryStateStore, wrapFetch } from '../../src/index.js';
import { routesSeen, watchingRoutes } from '../client/scopes/watch-routes.js';
import { markdownTable } from './lib/table.js';

const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '100000' },
    concurrency: { type: 'string', default: '16' },
    only: { type: 'string' },
  },
});
const CALLS = Number(values.calls);
const CONCURRENCY = Number(values.concurrency);
const MARKS = [10_000, 50_000, 100_000].filter((m) => m <= CALLS);
if (!MARKS.includes(CALLS)) MARKS.push(CALLS);

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with --expose-gc (npm run bench:churn)');

/** Fields of an answer that names scope `n` (or none), in an adversary's dialect. */
type Naming = (n: number) => [string, string][];

interface Adversary {
  name: string;
  naming: Naming;
  /** The path of call `i`. */
  path: (i: number) => string;
}

const generous: [string, string][] = [
  ['x-ratelimit-limit', '1000000'],
  ['x-ratelimit-remaining', '999999'],
];
const channel = (n: number) => String(1_234_567_890_123_456_00n + BigInt(n));
/** A route name that is not an identifier (letters only), fresh for each `n`. */
const word = (n: number) => n.toString(26).replace(/\d/g, (d) => 'qrstuvwxyz'[Number(d)] as string);

const ADVERSARIES: Adversary[] = [
  {
    name: 'discord-bucket',
    naming: (n) => [
      ...generous,
      ['x-ratelimit-reset-after', '60'],
      ['x-ratelimit-bucket', `b${n}`],
    ],
    path: () => `/api/v10/channels/${channel(1)}/messages`,
  },
  {
    name: 'github-resource',
    naming: (n) => [
      ...generous,
      ['x-ratelimit-reset', String(Math.ceil(Date.now() / 1000) + 3600)],
      ['x-ratelimit-resource', `r${n}`],
    ],
    path: (i) => `/repos/o/r/issues/${i}`,
  },
  {
    name: 'pk',
    naming: (n) => [
      ['ratelimit-policy', `"p";q=1000000;w=3600;pk=:${Buffer.from(`k${n}`).toString('base64')}:`],
      ['ratelimit', `"p";r=999999;t=3600;pk=:${Buffer.from(`k${n}`).toString('base64')}:`],
    ],
    path: (i) => `/items/${i}`,
  },
  {
    name: 'discord-channel',
    naming: () => [...generous, ['x-ratelimit-reset-after', '60'], ['x-ratelimit-bucket', 'one']],
    path: (i) => `/api/v10/channels/${channel(i)}/messages`,
  },
  {
    name: 'names-in-bound',
    naming: (n) => [
      ...generous,
      ['x-ratelimit-reset', String(Math.ceil(Date.now() / 1000) + 3600)],
      ['x-ratelimit-resource', `r${n % 200}`],
    ],
    path: (i) => `/${word(i)}/x`,
  },
  { name: 'none', naming: () => generous, path: (i) => `/items/${i}` },
];

async function serve(naming: Naming): Promise<{ url: string; close: () => Promise<void> }> {
  let n = 0;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    const flat: string[] = [];
    for (const [k, v] of naming(n++)) flat.push(k, v);
    res.writeHead(200, flat);
    res.end('ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const heapMiB = () => {
  gc();
  gc();
  return process.memoryUsage().heapUsed / 2 ** 20;
};

interface Mark {
  calls: number;
  heapMiB: number;
  lanes: number;
  routes: number;
  names: number;
  off: boolean;
  storeKeys: number;
}

async function runAdversary(adversary: Adversary) {
  const server = await serve(adversary.naming);
  const store = new MemoryStateStore();
  const fetch = wrapFetch(globalThis.fetch, { store });
  const origin = server.url;
  let ok = 0;
  let failed = 0;
  const marks: Mark[] = [];
  const start = performance.now();
  try {
    await watchingRoutes(async (seen) => {
      const look = (calls: number, heap: number): Mark => {
        return {
          calls,
          heapMiB: heap,
          lanes: fetch.stats().hosts[origin]?.scopes.length ?? 0,
          ...routesSeen(seen),
          storeKeys: store.size,
        };
      };
      marks.push(look(0, heapMiB()));
      let next = 0;
      for (const mark of MARKS) {
        await Promise.all(
          Array.from({ length: CONCURRENCY }, async () => {
            while (next < mark) {
              const i = next++;
              try {
                const response = await fetch(`${origin}${adversary.path(i)}`);
                await response.arrayBuffer();
                if (response.status === 200) ok++;
                else failed++;
              } catch {
                failed++;
              }
            }
          }),
        );
        marks.push(look(mark, heapMiB()));
      }
    });
  } finally {
    await fetch.close();
    await server.close();
  }
  return {
    adversary: adversary.name,
    ok,
    failed,
    seconds: (performance.now() - start) / 1000,
    marks,
  };
}

const only = values.only?.split(',').map((s) => s.trim());
const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
console.log(
  `scope churn: ${CALLS} calls per adversary, ${CONCURRENCY} in flight, Node ${process.version}, ` +
    `${new Date().toISOString()}, load ${load()}`,
);
console.log(
  `bounds: MAX_SCOPES ${MAX_SCOPES} lanes, MAX_ROUTES ${MAX_ROUTES}, MAX_SCOPE_NAMES ${MAX_SCOPE_NAMES}`,
);
const rows: (string | number)[][] = [];
for (const adversary of ADVERSARIES) {
  if (only !== undefined && !only.includes(adversary.name)) continue;
  const r = await runAdversary(adversary);
  const first = r.marks[1] ?? r.marks[0];
  for (const m of r.marks) {
    rows.push([
      r.adversary,
      m.calls,
      m.heapMiB.toFixed(1),
      m === r.marks[0] || first === undefined ? '-' : (m.heapMiB - first.heapMiB).toFixed(1),
      m.lanes,
      m.routes,
      `${m.names}${m.off ? ' (off)' : ''}`,
      m.storeKeys,
    ]);
  }
  console.log(
    `  ${r.adversary}: ${r.ok}/${CALLS} ok, ${r.failed} failed, ${r.seconds.toFixed(1)} s, load ${load()}`,
  );
}
console.log(
  markdownTable(
    ['adversary', 'calls', 'heap MiB', `vs ${MARKS[0]}`, 'lanes', 'routes', 'names', 'store keys'],
    rows,
  ),
);
console.log(`load at the end ${load()}`);

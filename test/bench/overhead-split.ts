/**
 * Where the client's cost end to end comes from: CPU microseconds per request over plain fetch on
 * loopback, for the client with its defaults, without the host's rules (`learnLimits: false`),
 * with every policy off, and for plain fetch followed by one call through a client whose fetch is a
 * double that answers at once: the same work as the client's, done next to a real request but
 * about none of it. A control (fetch against fetch) gives the noise floor.
 *
 *   npx tsx test/bench/overhead-split.ts [--concurrency 1] [--rounds 7] [--requests 2000]
 *
 * Each round runs every contender once, in a rotating order, each run between two runs of plain
 * fetch; a run's figure is its CPU per request (`process.cpuUsage()`, client and server, both in
 * this process) minus the mean of the two fetch runs around it. The table gives the median over
 * the rounds and the lowest and highest. Numbers only: nothing here asserts a duration.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { wrapFetch } from '../../src/index.js';
import { median, underLoad } from './lib/paired.js';
import { markdownTable } from './lib/table.js';

const { values } = parseArgs({
  options: {
    concurrency: { type: 'string', default: '1' },
    rounds: { type: 'string', default: '7' },
    requests: { type: 'string', default: '2000' },
  },
});
const concurrency = Number(values.concurrency);
const rounds = Number(values.rounds);
const requests = Number(values.requests);

const server = createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' });
  res.end('ok');
});
server.keepAliveTimeout = 60_000;
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/free`;

type Get = (url: string) => Promise<Response>;
const OFF = {
  learnLimits: false,
  retry: false,
  retryBudget: false,
  circuitBreaker: false,
} as const;
const HEADERS = { 'content-type': 'text/plain', date: new Date().toUTCString() };
/** A double that answers at once, as `pipeline-micro.ts` has it. */
const double = (async () => new Response(null, { status: 200, headers: HEADERS })) as typeof fetch;
const onDouble = wrapFetch(double);
const onDoubleOff = wrapFetch(double, OFF);
const defaults = wrapFetch();
const noRules = wrapFetch(undefined, { learnLimits: false });
const off = wrapFetch(undefined, OFF);
const clients = [defaults, noRules, off, onDouble, onDoubleOff];

const contenders: [string, Get][] = [
  ['fetch (control)', (u) => fetch(u)],
  ['wrapFetch (defaults)', defaults],
  ['wrapFetch (learnLimits: false)', noRules],
  ['wrapFetch (every policy off)', off],
  [
    'fetch, then a call through a client on a double (defaults)',
    async (u) => {
      const response = await fetch(u);
      await onDouble('http://h.test/x');
      return response;
    },
  ],
  [
    'fetch, then a call through a client on a double (every policy off)',
    async (u) => {
      const response = await fetch(u);
      await onDoubleOff('http://h.test/x');
      return response;
    },
  ],
];

/** CPU microseconds per request of `requests` GETs with `concurrency` in flight. */
async function run(get: Get): Promise<number> {
  const [, cpuUs] = await underLoad(requests, concurrency, async () => {
    const response = await get(url);
    await response.arrayBuffer();
  });
  return cpuUs;
}

const plain: Get = (u) => fetch(u);
for (const [, get] of contenders) await run(get); // connections, JIT
const over = contenders.map(() => [] as number[]);
for (let r = 0; r < rounds; r++) {
  let before = await run(plain);
  for (let k = 0; k < contenders.length; k++) {
    const i = (k + r) % contenders.length;
    const mine = await run((contenders[i] as [string, Get])[1]);
    const after = await run(plain);
    over[i]?.push(mine - (before + after) / 2);
    before = after;
  }
}
console.log(
  markdownTable(
    ['contender', 'CPU µs per request over fetch (median)', 'lowest', 'highest'],
    contenders.map(([name], i) => {
      const xs = over[i] ?? [];
      return [name, median(xs).toFixed(1), Math.min(...xs).toFixed(1), Math.max(...xs).toFixed(1)];
    }),
  ),
);
console.log(
  `\n${requests} requests per run, ${concurrency} in flight, ${rounds} rounds, node ${process.version}`,
);
await Promise.all(clients.map((c) => c.close()));
server.closeAllConnections();
server.close();

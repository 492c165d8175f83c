/**
 * What the look at a GraphQL answer's body costs (docs/body-limits.md): sequential GraphQL POSTs
 * over loopback to a server answering Shopify-style JSON (a bucket that never runs out) of three
 * sizes, through `wrapFetch` with its defaults (the look) and with `bodyLimits: false` (no look),
 * and plain fetch, side by side in each round (rotating order). The caller reads every body.
 *
 *   npx tsx test/bench/body-look.ts [--calls 2000] [--rounds 5]
 *
 * Prints the median CPU microseconds per call of this process (`process.cpuUsage()`: the server
 * runs in it too) and the ratio of the look over no look. Numbers only: nothing asserts.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { wrapFetch } from '../../src/index.js';
import { fixed, markdownTable } from './lib/table.js';

const { values } = parseArgs({
  options: { calls: { type: 'string', default: '2000' }, rounds: { type: 'string', default: '5' } },
});
const calls = Number(values.calls);
const rounds = Number(values.rounds);

/** A Shopify-style answer padded to about `bytes`. */
function answer(bytes: number): string {
  const cost = {
    requestedQueryCost: 1,
    actualQueryCost: 1,
    throttleStatus: { maximumAvailable: 1e9, currentlyAvailable: 1e9, restoreRate: 1e6 },
  };
  const base = JSON.stringify({ data: { shop: { name: '' } }, extensions: { cost } });
  return base.replace('"name":""', `"name":"${'n'.repeat(Math.max(0, bytes - base.length))}"`);
}

const SIZES = [300, 16 * 1024, 60 * 1024];
const bodies = new Map(SIZES.map((s) => [String(s), answer(s)]));
const server = createServer((req, res) => {
  req.resume();
  const body = bodies.get(req.url?.split('/')[1] ?? '') ?? '{}';
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(body);
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

const looked = wrapFetch(fetch);
const unlooked = wrapFetch(fetch, { bodyLimits: false });
const contenders: [string, typeof fetch][] = [
  ['plain fetch', fetch],
  ['wrapFetch, bodyLimits: false', unlooked],
  ['wrapFetch (the look)', looked],
];
const QUERY = '{"query":"{ shop { name } }"}';

/** CPU microseconds per call of `send` for `calls` sequential queries of `size`. */
async function run(send: typeof fetch, size: number): Promise<number> {
  const start = process.cpuUsage();
  for (let i = 0; i < calls; i++) {
    const r = await send(`${base}/${size}/graphql`, { method: 'POST', body: QUERY });
    await r.text();
  }
  const used = process.cpuUsage(start);
  return (used.user + used.system) / calls;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
};

const rows: (string | number)[][] = [];
for (const size of SIZES) {
  const times = new Map<string, number[]>(contenders.map(([name]) => [name, []]));
  for (const [, send] of contenders) await run(send, size); // warm-up
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < contenders.length; k++) {
      const [name, send] = contenders[(k + r) % contenders.length] as [string, typeof fetch];
      times.get(name)?.push(await run(send, size));
    }
  }
  const m = (name: string) => median(times.get(name) ?? []);
  const noLook = m('wrapFetch, bodyLimits: false');
  for (const [name] of contenders) {
    rows.push([`${size} B`, name, fixed(m(name), 1), fixed(m(name) / noLook)]);
  }
}
console.log(markdownTable(['answer', 'contender', 'CPU µs per call', 'over no look'], rows));
console.log(
  `\n${calls} sequential calls per contender per round, ${rounds} rounds, ${process.version}`,
);
await looked.close();
await unlooked.close();
server.close();

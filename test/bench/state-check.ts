/**
 * What checking a host's state read from a shared store costs (issue 24, item 4): `checkHostState`
 * on states the rules made (a quiet host's, a host declaring two policies with requests in flight,
 * and one at the rules' bounds: eight policies and the timed quota, 32 groups of requests in
 * flight naming other units), next to the `JSON.parse` every read from Redis already pays, and,
 * with `REDIS_URL` set, one round trip of the state script for scale. The check runs once per
 * state read from Redis that this process did not write (a conflict, a first read), never on the
 * memory store's path: `test/bench/pipeline-micro.ts` measures that one.
 *
 *   npx tsx test/bench/state-check.ts [--rounds 7] [--n 20000]
 *
 * Median CPU nanoseconds per operation over the rounds (`process.cpuUsage()`). Numbers only.
 */
import { parseArgs } from 'node:util';
import { createClient } from 'redis';
import { toCost } from '../../src/client/call/cost.js';
import { bindRules, type HostRulesConfig } from '../../src/client/rules/host-rules.js';
import { checkHostState } from '../../src/client/rules/state-check.js';
import { RedisStore } from '../../src/redis/index.js';
import { Host, learn } from '../client/rules/harness.js';
import { markdownTable } from './lib/table.js';

const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '7' }, n: { type: 'string', default: '20000' } },
});
const rounds = Number(values.rounds);
const n = Number(values.n);
const NOW = 1_700_000_000_000;
const config: HostRulesConfig = {
  learn: { ...learn, maxHoldMs: 60_000 },
  bucket: undefined,
  budget: { ratio: 0.1, minPerSecond: 1, windowMs: 10_000 },
};
const rules = bindRules(config);

/** The JSON of a host's state after `traffic` ran on it. */
function stateAfter(traffic: (host: Host) => void): string {
  const host = new Host(config);
  traffic(host);
  return JSON.stringify(host.state);
}
const quiet = stateAfter((h) => h.answer(h.send(NOW), 200, {}, NOW + 5));
const declared = stateAfter((h) => {
  const headers = {
    'ratelimit-policy': '"minute";q=100;w=60, "hour";q=1000;w=3600',
    ratelimit: '"minute";r=80;t=30, "hour";r=900;t=1800',
  };
  for (let i = 0; i < 5; i++) h.answer(h.send(NOW + i), 200, headers, NOW + i + 5);
  for (let i = 0; i < 4; i++) h.send(NOW + 10);
});
const bounded = stateAfter((h) => {
  const policies = Array.from({ length: 12 }, (_, i) => `"p${i}";q=${100 + i};w=60`).join(', ');
  const left = Array.from({ length: 12 }, (_, i) => `"p${i}";r=${50 + i};t=30`).join(', ');
  h.answer(h.send(NOW), 200, { 'ratelimit-policy': policies, ratelimit: left }, NOW + 5);
  h.answer(h.send(NOW + 10), 429, { 'retry-after': '1' }, NOW + 15);
  for (let i = 0; i < 32; i++) {
    h.commit(toCost({ requests: 1, tokens: 100 + i }), NOW + 2000 + i * 1000, 30_000 + i * 2000);
  }
});
const states: [string, string][] = [
  ['a quiet host', quiet],
  ['two declared policies, 4 in flight', declared],
  ['8 policies, timed quota, 32 flight groups', bounded],
];

/** CPU nanoseconds per call of `f`, over `count` calls. */
function time(f: () => unknown, count: number): number {
  const cpu = process.cpuUsage();
  for (let i = 0; i < count; i++) f();
  const used = process.cpuUsage(cpu);
  return ((used.user + used.system) * 1000) / count;
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

const rows: (string | number)[][] = [];
for (const [name, json] of states) {
  const parse = () => JSON.parse(json);
  const check = () => checkHostState(JSON.parse(json), rules, NOW + 20);
  time(parse, n);
  time(check, n);
  const parsed: number[] = [];
  const checked: number[] = [];
  for (let r = 0; r < rounds; r++) {
    parsed.push(time(parse, n));
    checked.push(time(check, n));
  }
  const p = median(parsed);
  const c = median(checked);
  rows.push([name, json.length, Math.round(p), Math.round(c), Math.round(c - p)]);
}
console.log(
  markdownTable(
    ['state', 'JSON characters', 'JSON.parse (ns)', 'parse and check (ns)', 'the check (ns)'],
    rows,
  ),
);

if (process.env.REDIS_URL) {
  const client = await createClient({ url: process.env.REDIS_URL }).connect();
  const store = new RedisStore(client, { prefix: 'lc-bench:state-check:' });
  const read = { run: (state: unknown) => [state, undefined] as [unknown, undefined] };
  const trips = 2000;
  const start = performance.now();
  for (let i = 0; i < trips; i++) await store.update('one', read, 1000);
  const perTrip = ((performance.now() - start) * 1e6) / trips;
  console.log(
    `\nFor scale: one update through RedisStore, one round trip: ${Math.round(perTrip)} ns`,
  );
  client.destroy();
}
console.log(`\n${rounds} rounds of ${n} calls each, node ${process.version}`);

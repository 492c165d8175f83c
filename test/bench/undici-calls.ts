/**
 * What the undici interceptors cost per request, counted rather than timed: JavaScript function
 * calls (V8's precise coverage with call counts) and bytes allocated (V8's sampling heap profiler,
 * objects collected by either GC included), per `undici.request` GET against an unlimited loopback
 * endpoint of the mock server, for the same contenders as `undici-overhead.ts`. Neither count
 * moves with the machine's load, where a rate or a CPU time on a shared machine moves by tens of
 * per cent between rounds; over HTTP, extra calls are what the CPU time follows (the figures in
 * docs/benchmarks.md). The counts include the server's part (the same for every contender) and
 * undici's, grouped by area: `node` (Node's internals), `undici`, and this package's folders.
 *
 *   npx tsx test/bench/undici-calls.ts [--requests 3000] [--concurrency 16]
 *     [--before <dir>/undici/index.ts]   (another checkout's `limited()`, marked `(before)`)
 *     [--top 30]   (then the functions of this package called most per request, per contender)
 *
 * @module
 */
import { Session } from 'node:inspector/promises';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { Agent, type Dispatcher, interceptors, request } from 'undici';
import { createMockServer } from '../../src/server/index.js';
import { limited } from '../../src/undici/index.js';
import { underLoad } from './lib/paired.js';

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '3000' },
    concurrency: { type: 'string', default: '16' },
    before: { type: 'string' },
    top: { type: 'string', default: '0' },
  },
});
const requests = Number(values.requests);
const concurrency = Number(values.concurrency);
const top = Number(values.top);
const tops: string[] = [];

const server = await createMockServer({ routes: [{ path: '/free' }] });
const url = `${server.url}/free`;
const agents: Agent[] = [];
function agent(): Agent {
  const a = new Agent();
  agents.push(a);
  return a;
}
const contenders: [string, Dispatcher][] = [
  ['undici Agent', agent()],
  ['Agent + no-op interceptor', agent().compose((dispatch) => (o, h) => dispatch(o, h))],
  ['Agent + interceptors.retry()', agent().compose(interceptors.retry())],
  ['Agent + limited()', agent().compose(limited())],
  [
    'Agent + limited(), every policy off',
    agent().compose(
      limited({ learnLimits: false, retry: false, retryBudget: false, circuitBreaker: false }),
    ),
  ],
];
if (values.before) {
  const copy = (await import(
    pathToFileURL(resolve(values.before)).href
  )) as typeof import('../../src/undici/index.js');
  contenders.push(['Agent + limited() (before)', agent().compose(copy.limited())]);
}

/** Where a script's functions are counted: this package's folder, or node, or undici. */
function areaOf(url: string): string {
  const ours = /\/(src\/[^/]+(?:\/[^/]+)?)\//.exec(url) ?? /\/(src\/[^/]+)\.ts$/.exec(url);
  if (ours?.[1] && !url.includes('node_modules')) return ours[1].replace(/\.ts$/, '');
  if (url.startsWith('node:')) return 'node';
  if (url.includes('undici')) return 'undici';
  return 'other';
}

interface CoverageNode {
  selfSize: number;
  children: CoverageNode[];
}

const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('HeapProfiler.enable');
console.log(
  `undici-calls: ${requests} undici.request GETs, ${concurrency} in flight, Node ${process.version}`,
);
console.log('| dispatcher | function calls per request | bytes per request | calls by area |');
console.log('|---|---|---|---|');
for (const [name, dispatcher] of contenders) {
  const one = async () => {
    const r = await request(url, { dispatcher });
    await r.body.dump();
  };
  await underLoad(2000, concurrency, one);
  await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
  await session.post('Profiler.takePreciseCoverage');
  await underLoad(requests, concurrency, one);
  const { result } = await session.post('Profiler.takePreciseCoverage');
  await session.post('Profiler.stopPreciseCoverage');
  const areas = new Map<string, number>();
  const ours = new Map<string, number>();
  let calls = 0;
  for (const script of result) {
    if (script.url.includes('undici-calls')) continue;
    for (const fn of script.functions) {
      const range = fn.ranges[0];
      // A script's top-level function runs once: not a call per request.
      if (!range?.count || (fn.functionName === '' && range.startOffset === 0)) continue;
      const area = areaOf(script.url);
      areas.set(area, (areas.get(area) ?? 0) + range.count / requests);
      if (area.startsWith('src/') && !area.startsWith('src/server')) {
        const fnName = `${script.url.replace(/^.*\/src\//, '')}:${fn.functionName || '(anonymous)'}`;
        ours.set(fnName, (ours.get(fnName) ?? 0) + range.count / requests);
      }
      calls += range.count / requests;
    }
  }
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: 128,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  } as never);
  await underLoad(requests, concurrency, one);
  const { profile } = await session.post('HeapProfiler.stopSampling');
  let bytes = 0;
  const walk = (node: CoverageNode) => {
    bytes += node.selfSize;
    for (const child of node.children) walk(child);
  };
  walk(profile.head as unknown as CoverageNode);
  const byArea = [...areas]
    .filter(([, count]) => count >= 1)
    .sort((a, b) => b[1] - a[1])
    .map(([area, count]) => `${area} ${count.toFixed(0)}`)
    .join(', ');
  console.log(`| ${name} | ${calls.toFixed(0)} | ${(bytes / requests).toFixed(0)} | ${byArea} |`);
  if (top > 0 && ours.size > 0) {
    tops.push(`\n${name}: the ${top} functions of this package called most, per request`);
    for (const [fnName, count] of [...ours].sort((a, b) => b[1] - a[1]).slice(0, top)) {
      tops.push(`  ${count.toFixed(2).padStart(7)}  ${fnName}`);
    }
  }
}
for (const line of tops) console.log(line);
session.disconnect();
await Promise.all(agents.map((a) => a.close()));
await server.close();

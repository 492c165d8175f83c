/**
 * What the client costs between real requests, counted rather than timed: instructions and
 * simulated cache misses per request on loopback, plain fetch next to `wrapFetch` in three
 * configurations, each in a process of its own under valgrind's callgrind. With `--server`, what
 * the mock server's limit costs the same way: the mock server without a limit next to the same
 * server with the server benchmark's fixed window (`lib/http-contender.ts`), both sent GETs by
 * plain fetch in their own process.
 *
 *   npm run build && npm run bench:in-situ -- [--requests 1500] [--warmup 6000]
 *     [--lib dist/index.js, or dist/server/index.js with --server] [--functions 25] [--server]
 *     [--otel [--otel-before <another build>/index.js]]
 *
 * Needs valgrind (`apt-get install valgrind`); takes about three minutes (two processes at a time).
 *
 * Why: the end-to-end overhead benchmark (`npm run bench -- --only overhead`) moves by ±20 % with
 * the machine's other work, and the pipeline micro benchmark runs the client in a tight loop where
 * its code and data stay in the caches. Here each process (`lib/in-situ-child.mjs`) serves the
 * quiet host and sends it GETs one at a time, every body read; after `--warmup` requests,
 * callgrind's instrumentation is turned on for `--requests` more. `node --predictable` runs it on
 * one thread (no concurrent compiler or collector). The caches are simulated with the sizes of the
 * machine this was written on (AMD EPYC: 32 KiB L1 instruction and data caches, 8-way; 512 KiB L2,
 * 8-way, as the last level: an L2 miss goes to a shared L3 or memory, tens of cycles or more).
 *
 * Per request, for each contender: instructions, L1 instruction and data misses, L2 instruction
 * and data misses, without the garbage collector's functions, whose count moves by ±30 % from run
 * to run with where a collection falls, and without V8's compilers, still optimising code among
 * the measured requests by an amount that varies (both printed apart, with the number of
 * collections). The rest repeats within 2 % from run to run; the differences between contenders
 * move by 2 to 3 points of percentage. Two ways of keeping collections out of the measured
 * requests were tried and dropped: a young generation large enough that none falls among them
 * doubled fetch's count and its cache misses (every allocation landed on memory not touched
 * before); a full collection forced before them made V8 drop compiled code, compiled again among
 * them. The bytes a call allocates, which set how often collections come, are the pipeline micro
 * benchmark's (`pipeline-micro.ts`). With `--functions n`: the n JavaScript functions and V8
 * builtins whose L2 misses grow the most over plain fetch with the client's defaults, named from
 * V8's perf map (`--perf-basic-prof`).
 *
 * With `--otel`: the client with its defaults, then the same `instrument()`ed (limited-client/otel,
 * beside `--lib`) without an SDK and onto a real SDK `MeterProvider`: what metrics cost a call,
 * counted (issue 27's 3 % target, which the timed `npm run bench:otel` cannot resolve here);
 * with `--functions n`, where the SDK-instrumented client's misses grow over the bare one's.
 *
 * Counts, not seconds: nothing here asserts a speed.
 *
 * @module
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { mockServerConfig } from './lib/http-contender.js';

const { values: flags } = parseArgs({
  options: {
    requests: { type: 'string', default: '1500' },
    warmup: { type: 'string', default: '6000' },
    lib: { type: 'string' },
    functions: { type: 'string', default: '0' },
    server: { type: 'boolean', default: false },
    otel: { type: 'boolean', default: false },
    'otel-before': { type: 'string' },
  },
});
const serverMode = flags.server === true;
const requests = Number(flags.requests);
const warmup = Number(flags.warmup);
const functions = Number(flags.functions);
for (const [flag, value, least] of [
  ['--requests', requests, 1],
  ['--warmup', warmup, 0],
  ['--functions', functions, 0],
] as const) {
  if (!Number.isInteger(value) || value < least) {
    throw new Error(`${flag} must be an integer of at least ${least}; got ${value}`);
  }
}
const lib = resolve(flags.lib ?? (serverMode ? 'dist/server/index.js' : 'dist/index.js'));
if (!existsSync(lib)) throw new Error(`--lib: ${lib} does not exist (run npm run build first)`);
if (spawnSync('valgrind', ['--version']).status !== 0) {
  throw new Error('needs valgrind on the PATH (apt-get install valgrind)');
}

const CHILD = fileURLToPath(new URL('./lib/in-situ-child.mjs', import.meta.url));
/** The simulated caches (see the module comment): size, associativity, line size. */
const CACHES = ['--I1=32768,8,64', '--D1=32768,8,64', '--LL=524288,8,64'];
/** The events callgrind records with `--cache-sim=yes`, in its order. */
type EventName = 'Ir' | 'Dr' | 'Dw' | 'I1mr' | 'D1mr' | 'D1mw' | 'ILmr' | 'DLmr' | 'DLmw';
type Counts = Record<EventName, number>;

/**
 * V8's compilers and parser, by function name: code still being optimised among the measured
 * requests (it still is, after thousands of requests, by a varying amount), a cost of warming up.
 */
const COMPILER =
  /compiler::|turboshaft|Zone|Pipeline|Compil|Parser|Scanner|BytecodeGenerator|Baseline(?!OutOfLine|LeaveFrame)|Deoptimiz|SourcePosition|ScopeInfo|Scope::|AstNode|Ast[A-Z]|OptimizedCompilation|maglev/;

/**
 * V8's garbage collector by function name, the write barrier's slow path with it (it does more
 * while marking is under way): what `--predictable` schedules differently from run to run. Broad on
 * purpose: with it and the compilers left out, two runs of the same code agree within 2 % on the
 * rest (instructions; 3 % on L2 misses).
 */
const GC =
  /Scaveng|Mark|Sweep|Evacuat|Pretenur|BodyDescriptor|heap::base|Worklist|cppgc|LiveObject|SizeFromMap|RelocIterator|FreeList|Migrated|IterateObjectCache|Flush|StringTableCleaner|PointersUpdating|Remembered|SlotSet|MemoryChunk|Space|Page|LinearArea|Heap|GC|Allocat|Visit|Weak|Root|RecordWrite|Compact|UsedInstanceSize/;

interface Contender {
  name: string;
  /** What the process serves and sends through (see `lib/in-situ-child.mjs`). */
  mode: 'fetch' | 'client' | 'mock';
  options?: object;
  /** With mode `client`: `instrument()` it onto the API's no-op meter, or onto a real SDK's. */
  otel?: 'noop' | 'sdk';
  /** Another build's `index.js` to run this contender with (`--otel-before`), instead of `--lib`. */
  lib?: string;
}

/** The mock server without a limit, then with the server benchmark's fixed window. */
const SERVERS: Contender[] = [
  { name: 'mock server, no limit', mode: 'mock', options: mockServerConfig(false) },
  { name: 'mock server, fixed window', mode: 'mock', options: mockServerConfig(true) },
];

const CLIENTS: Contender[] = [
  { name: 'fetch', mode: 'fetch' },
  { name: 'wrapFetch (defaults)', mode: 'client', options: {} },
  { name: 'wrapFetch (learnLimits: false)', mode: 'client', options: { learnLimits: false } },
  {
    name: 'wrapFetch (every policy off)',
    mode: 'client',
    options: {
      learnLimits: false,
      coldStart: false,
      retry: false,
      retryBudget: false,
      circuitBreaker: false,
      idempotency: false,
    },
  },
];

/**
 * `--otel` (issue 27): the client's defaults without metrics, then `instrument()`ed with no
 * provider (the API's global one, a no-op until an SDK is registered), then onto a real SDK
 * `MeterProvider` with a reader (as an application exporting its metrics has).
 */
const OTEL: Contender[] = [
  { name: 'fetch', mode: 'fetch' },
  { name: 'wrapFetch (defaults)', mode: 'client', options: {} },
  { name: 'wrapFetch, instrument() (no SDK)', mode: 'client', options: {}, otel: 'noop' },
  { name: 'wrapFetch, instrument() (SDK)', mode: 'client', options: {}, otel: 'sdk' },
];
/**
 * `--otel-before <dir>/index.js`: the same two instrumented clients from another build (the tree
 * before a change to src/otel, say), in the same run: the change's effect without a second run.
 */
const otelBefore = flags['otel-before'] ? resolve(flags['otel-before']) : undefined;
if (otelBefore !== undefined) {
  if (!existsSync(otelBefore)) throw new Error(`--otel-before: ${otelBefore} does not exist`);
  OTEL.push(
    { name: 'instrument() (no SDK), before', mode: 'client', otel: 'noop', lib: otelBefore },
    { name: 'instrument() (SDK), before', mode: 'client', otel: 'sdk', lib: otelBefore },
  );
}

const CONTENDERS = serverMode ? SERVERS : flags.otel ? OTEL : CLIENTS;
/** What the first contender is, for the tables' captions. */
const BASE = serverMode ? 'the mock server without a limit' : 'plain fetch';

/** One contender's counts over the measured requests. */
interface Profile {
  /** The whole process. */
  total: Counts;
  /** All but the collector and the compilers: what the table shows. */
  mutator: Counts;
  /** The garbage collector's functions (see {@link GC}). */
  gc: Counts;
  /** The compilers' and the parser's (see {@link COMPILER}). */
  compiler: Counts;
  /** By function; JavaScript functions named from the perf map with `--functions`. */
  byFunction: Map<string, Counts>;
  /** Collections among the measured requests. */
  collections: number;
}

function zero(events: readonly EventName[]): Counts {
  return Object.fromEntries(events.map((e) => [e, 0])) as Counts;
}

function add(into: Counts, from: Counts): void {
  for (const key of Object.keys(from) as EventName[]) into[key] += from[key];
}

/** Runs one contender under callgrind and reads its counts. */
async function profile(c: Contender): Promise<Profile> {
  const out = join(tmpdir(), `in-situ-${process.pid}-${c.mode}-${CONTENDERS.indexOf(c)}.out`);
  const nodeFlags = ['--predictable'];
  if (functions > 0) nodeFlags.push('--perf-basic-prof', '--no-compact-code-space');
  const child = spawn(
    'valgrind',
    [
      '--tool=callgrind',
      '--cache-sim=yes',
      ...CACHES,
      '--instr-atstart=no',
      '--smc-check=all-non-file',
      `--callgrind-out-file=${out}`,
      process.execPath,
      ...nodeFlags,
      CHILD,
    ],
    {
      env: {
        ...process.env,
        LIB: c.lib ?? lib,
        MODE: c.mode,
        OPTIONS: JSON.stringify(c.options ?? {}),
        OTEL: c.otel ?? '',
        WARMUP: String(warmup),
        REQUESTS: String(requests),
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  let stdout = '';
  let pid = 0;
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    const ready = /ready (\d+)\n/.exec(stdout);
    if (!ready || pid !== 0) return;
    pid = Number(ready[1]);
    const on = spawnSync('callgrind_control', ['-i', 'on', String(pid)], { encoding: 'utf8' });
    if (on.status !== 0) {
      stderr += `\ncallgrind_control failed: ${on.stderr || on.stdout}`;
      child.kill();
    }
    child.stdin.end('go\n');
  });
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  const done = /done (\d+)\n/.exec(stdout);
  if (code !== 0 || pid === 0 || done === null) {
    throw new Error(`${c.name}: the profiled process failed (exit ${code}):\n${stderr}`);
  }
  const annotated = spawnSync('callgrind_annotate', ['--threshold=100', out], {
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
  rmSync(out, { force: true });
  if (annotated.status !== 0) throw new Error(`callgrind_annotate failed: ${annotated.stderr}`);
  const names = functions > 0 ? perfMap(pid) : undefined;
  return { ...read(annotated.stdout, names), collections: Number(done[1]) };
}

/** V8's perf map of process `pid`: code start, size, name; sorted by start. Removed once read. */
function perfMap(pid: number): [number, number, string][] {
  const file = `/tmp/perf-${pid}.map`;
  if (!existsSync(file)) return [];
  const entries = readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      const [start, size, ...name] = line.split(' ');
      return [Number.parseInt(start ?? '', 16), Number.parseInt(size ?? '', 16), name.join(' ')];
    }) as [number, number, string][];
  rmSync(file, { force: true });
  return entries.sort((a, b) => a[0] - b[0]);
}

/** The name of the code at `address` in a sorted perf map, or `undefined`. */
function nameAt(map: [number, number, string][], address: number): string | undefined {
  let lo = 0;
  let hi = map.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const [start, size, name] = map[mid] as [number, number, string];
    if (address < start) hi = mid - 1;
    else if (address >= start + size) lo = mid + 1;
    else return name;
  }
  return undefined;
}

const COLUMN = /\s*(?:([0-9,]+)(?:\s+\(\s*[0-9.]+%\))?|(\.))/y;

/** Reads `callgrind_annotate`'s table: the program's totals and each function's counts. */
function read(
  text: string,
  names: [number, number, string][] | undefined,
): Omit<Profile, 'collections'> {
  let events: EventName[] = [];
  let total: Counts | undefined;
  const byFunction = new Map<string, Counts>();
  for (const line of text.split('\n')) {
    if (line.startsWith('Events shown:')) {
      events = line.slice('Events shown:'.length).trim().split(/\s+/) as EventName[];
      continue;
    }
    if (events.length === 0 || !/^\s*[0-9.]/.test(line)) continue;
    const counts = zero(events);
    COLUMN.lastIndex = 0;
    let ok = true;
    for (const event of events) {
      const m = COLUMN.exec(line);
      if (!m) {
        ok = false;
        break;
      }
      counts[event] = m[1] ? Number(m[1].replaceAll(',', '')) : 0;
    }
    if (!ok) continue;
    let fn = line.slice(COLUMN.lastIndex).trim();
    if (fn === 'PROGRAM TOTALS') {
      total = counts;
      continue;
    }
    const address = /^\?\?\?:0x([0-9a-f]+)/.exec(fn);
    if (address && names) {
      fn = nameAt(names, Number.parseInt(address[1] ?? '', 16)) ?? 'JIT code without a name';
    }
    const known = byFunction.get(fn);
    if (known) add(known, counts);
    else byFunction.set(fn, counts);
  }
  if (!total) throw new Error('callgrind_annotate printed no totals');
  const mutator = zero(events);
  const gc = zero(events);
  const compiler = zero(events);
  for (const [fn, counts] of byFunction) add(partOf(fn, { gc, compiler, mutator }), counts);
  return { total, mutator, gc, compiler, byFunction };
}

/**
 * Where a function's counts go: V8's own functions by their names; JavaScript (named from the perf
 * map, or not) always to the mutator, whatever its name says.
 */
function partOf<T>(fn: string, parts: { gc: T; compiler: T; mutator: T }): T {
  if (fn.startsWith('JS:') || fn.startsWith('JIT code') || fn.startsWith('???:0x')) {
    return parts.mutator;
  }
  return GC.test(fn) ? parts.gc : COMPILER.test(fn) ? parts.compiler : parts.mutator;
}

const l2 = (c: Counts) => c.ILmr + c.DLmr + c.DLmw;
const perRequest = (n: number) => n / requests;
const fmt = (n: number, digits = 0) =>
  perRequest(n).toLocaleString('en-US', { maximumFractionDigits: digits });
const more = (mine: number, base: number) =>
  `${mine >= base ? '+' : ''}${(((mine - base) / base) * 100).toFixed(1)} %`;

console.log(
  `In-situ cost per request: ${requests} GETs after ${warmup} of warm-up, one at a time, ${serverMode ? 'to the mock server through plain fetch' : 'quiet host'}; ${lib}; node ${process.version} --predictable under callgrind (L1 32 KiB, L2 512 KiB simulated)\n`,
);
const profiles: Profile[] = [];
for (let i = 0; i < CONTENDERS.length; i += 2) {
  profiles.push(...(await Promise.all(CONTENDERS.slice(i, i + 2).map(profile))));
}
const base = profiles[0] as Profile;
/** The collector's and the compilers' parts, apart: instructions per request, and collections. */
function apart(i: number): string {
  const p = profiles[i] as Profile;
  return `${fmt(p.gc.Ir)} (${p.collections}) | ${fmt(p.compiler.Ir)}`;
}
console.log(
  '| contender | instructions | L1 i-misses | L1 d-misses | L2 i-misses | L2 d-misses | collector (collections) | compilers |',
);
console.log('|---|---|---|---|---|---|---|---|');
CONTENDERS.forEach((c, i) => {
  const m = (profiles[i] as Profile).mutator;
  const b = base.mutator;
  const cell = (mine: number, theirs: number) =>
    i === 0 ? fmt(mine) : `${fmt(mine)} (${more(mine, theirs)})`;
  console.log(
    `| ${c.name} | ${cell(m.Ir, b.Ir)} | ${cell(m.I1mr, b.I1mr)} | ${cell(m.D1mr + m.D1mw, b.D1mr + b.D1mw)} | ${cell(m.ILmr, b.ILmr)} | ${cell(m.DLmr + m.DLmw, b.DLmr + b.DLmw)} | ${apart(i)} |`,
  );
});
if (flags.otel) {
  // The metrics' own cost: each instrumented client over the one without, the collector counted
  // too (what the metrics allocate shows there), in instructions per request.
  const off = profiles[1] as Profile;
  for (let i = 2; i < profiles.length; i++) {
    const p = profiles[i] as Profile;
    console.log(
      `${CONTENDERS[i]?.name} over wrapFetch (defaults): instructions ${more(p.mutator.Ir, off.mutator.Ir)} without the collector, ${more(p.mutator.Ir + p.gc.Ir, off.mutator.Ir + off.gc.Ir)} with it; L2 misses ${more(l2(p.mutator), l2(off.mutator))}`,
    );
  }
}
console.log(
  `\nPer request; in brackets, more than ${BASE}. The last two columns are left out of the others: the collector's instructions (and the collections among the requests), which move by ±30 % between two runs of the same code, and the compilers', still optimising code by a varying amount.`,
);

if (functions > 0) {
  // With --otel: the SDK-instrumented client over the one without metrics (where metrics cost).
  const [mineAt, theirsAt] = flags.otel ? [3, 1] : [1, 0];
  const mine = (profiles[mineAt] as Profile).byFunction;
  const theirs = (profiles[theirsAt] as Profile).byFunction;
  const empty = zero(Object.keys(base.total) as EventName[]);
  const rows = [...new Set([...mine.keys(), ...theirs.keys()])]
    .filter((fn) => partOf(fn, { gc: false, compiler: false, mutator: true }))
    .map((fn) => {
      const a = theirs.get(fn) ?? empty;
      const b = mine.get(fn) ?? empty;
      return { fn, l2: l2(b) - l2(a), ir: b.Ir - a.Ir };
    })
    .sort((x, y) => y.l2 - x.l2)
    .slice(0, functions);
  console.log(
    `\nWhere the L2 misses of ${CONTENDERS[mineAt]?.name} grow the most over ${flags.otel ? CONTENDERS[theirsAt]?.name : BASE} (per request):\n`,
  );
  console.log('| L2 misses | instructions | function |');
  console.log('|---|---|---|');
  for (const r of rows) {
    const name = r.fn.replace(/file:\/\/\S*\/(?=[^/]+:\d+)/, '').replace(/\|/g, '\\|');
    console.log(
      `| ${r.l2 >= 0 ? '+' : ''}${fmt(r.l2, 1)} | ${fmt(r.ir)} | ${name.slice(0, 110)} |`,
    );
  }
}

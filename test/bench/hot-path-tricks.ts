/**
 * What each trick the hot path's comments argue for is worth: the trick next to the plain way of
 * writing the same thing, in one run, as micro-benchmarks over stand-ins shaped as the pipeline's
 * code (not the pipeline itself: `pipeline-micro.ts` measures that whole). Run with tsx, as the
 * other benchmarks and the tests are, since one trick is about what tsx does to the code:
 *
 *   npx tsx test/bench/hot-path-tricks.ts [--ops 2000000] [--rounds 9]
 *
 * And as the published bundle runs them (esbuild without the `keepNames` tsx adds, as tsup builds):
 *
 *   npx esbuild test/bench/hot-path-tricks.ts --bundle --platform=node --format=esm \
 *     --outfile=/tmp/hot-path-tricks.mjs && node /tmp/hot-path-tricks.mjs
 *
 * The tricks, and where the code argues for them (docs/hot-path.md has the figures):
 *
 * - bound rules: every rule bound to one object shape (`Bound`, `rules/host-rules.ts`), so the
 *   rule loop reads `b.check` from one hidden class, vs reading the hooks from nine rule objects
 *   of nine shapes (a megamorphic property read per rule and per step);
 * - object literals: a transaction's methods written in an object literal
 *   (`rules/transactions.ts`) vs arrow functions assigned to names, which tsx (esbuild's
 *   `keepNames`) wraps in a `__name(fn, 'name')` call each time they are made;
 * - argument order: `#reported(from, now, step())` (`rules/breaker.ts`), the state read as the
 *   first argument before the step runs, vs a closure made per call to run the step;
 * - synchronous fast path: `#round` (`call-run.ts`) returns the attempt's promise when a store
 *   answers at once, vs an `async` function that awaits the admission every time;
 * - one outcome shape: every field of an attempt's outcome set in one order (`attempt.ts`), vs
 *   fields added only when they apply (several shapes for the code that reads them);
 * - `undefined`, not `delete`: a dropped rule state set to `undefined` in the host state
 *   (`rules/host-rules.ts`, `Slots`), vs deleting the key (the object goes to dictionary mode);
 * - own properties first: a watched response's properties set before its prototype is changed
 *   (`body-watch.ts`), vs after.
 *
 * Each round runs every pair once, in alternating order, after a warm-up; a cell is the median
 * over the rounds of the CPU nanoseconds per operation (`process.cpuUsage()`: other processes on
 * a shared machine disturb it far less than the wall clock), and the ratio is plain over trick
 * in the same round (above 1: the trick is faster), as the median and the spread. Numbers only:
 * nothing here asserts a duration.
 */
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { fixed, markdownTable } from './lib/table.js';

const { values } = parseArgs({
  options: {
    ops: { type: 'string', default: '2000000' },
    rounds: { type: 'string', default: '9' },
  },
});
const OPS = Number(values.ops);
const ROUNDS = Number(values.rounds);

/** What every measured function feeds, so that no work is optimised away. */
let sink = 0;

/** CPU nanoseconds per operation of `fn(ops)`, which runs `ops` operations. */
function measure(fn: (ops: number) => void, ops: number): number {
  const start = process.cpuUsage();
  fn(ops);
  const used = process.cpuUsage(start);
  return ((used.user + used.system) * 1000) / ops;
}

/** A trick and its plain alternative, each a function running `ops` operations. */
interface Pair {
  name: string;
  where: string;
  trick: (ops: number) => void;
  plain: (ops: number) => void;
  /** Operations per round, when an operation is much dearer than the others'. */
  ops?: number;
}

// ---- bound rules: one hidden class vs nine ------------------------------------------------

type Hook = ((config: unknown, n: number) => number) | undefined;
interface RuleLike {
  key: string;
  check?: Hook;
  commit?: Hook;
  settle?: Hook;
}

/** Nine rules of nine shapes: each has its own hooks, fields and order, as the rule modules do. */
function nineRules(): RuleLike[] {
  const add = (_c: unknown, n: number) => n + 1;
  const twice = (_c: unknown, n: number) => n + 2;
  return [
    { key: 'flights', check: add, commit: add, settle: add },
    { key: 'refusal', check: add },
    { key: 'hold', settle: twice, check: add },
    { key: 'ramp', commit: add, check: twice, settle: add, extra: 1 } as RuleLike,
    { key: 'quota', check: add, commit: twice, settle: add, fresh: add } as RuleLike,
    { key: 'timed', settle: add },
    { key: 'pace', prune: add, check: add, settle: twice } as RuleLike,
    { key: 'bucket', scale: add, check: add, commit: add } as RuleLike,
    { key: 'budget', commit: add, expiresAt: add, check: twice } as RuleLike,
  ];
}

interface BoundLike {
  config: unknown;
  key: string;
  check: Hook;
  commit: Hook;
  settle: Hook;
}

/** The rules bound as `bind` in host-rules.ts does: every hook copied out, absent ones undefined. */
function bindAll(rules: RuleLike[]): BoundLike[] {
  return rules.map(({ key, check, commit, settle }) => ({ config: 1, key, check, commit, settle }));
}

/** One request's walk: check, then commit, over every rule that has the hook; then settle. */
function walkBound(rules: readonly BoundLike[], ops: number): void {
  let n = 0;
  for (let i = 0; i < ops; i++) {
    for (const b of rules) if (b.check !== undefined) n = b.check(b.config, n);
    for (const b of rules) if (b.commit !== undefined) n = b.commit(b.config, n);
    for (const b of rules) if (b.settle !== undefined) n = b.settle(b.config, n);
  }
  sink += n;
}

function walkRules(rules: readonly RuleLike[], ops: number): void {
  let n = 0;
  for (let i = 0; i < ops; i++) {
    for (const r of rules) if (r.check !== undefined) n = r.check(1, n);
    for (const r of rules) if (r.commit !== undefined) n = r.commit(1, n);
    for (const r of rules) if (r.settle !== undefined) n = r.settle(1, n);
  }
  sink += n;
}

const RULES = nineRules();
const BOUND = bindAll(RULES);

// ---- object literals vs named arrow functions (under tsx) ----------------------------------

interface TransactionLike {
  run(state: number | undefined, share?: number): [number, number];
  replay(state: number | undefined, result: number): number;
}

/** As rules/transactions.ts writes it: methods in the literal. */
function literalTransaction(request: { now: number }): TransactionLike {
  return {
    run(current, share = 1) {
      return [(current ?? 0) + share, request.now];
    },
    replay(current, result) {
      return (current ?? 0) + result;
    },
  };
}

/** The plain way: arrow functions assigned to names, then put in the object. */
function namedTransaction(request: { now: number }): TransactionLike {
  const run = (current: number | undefined, share = 1): [number, number] => [
    (current ?? 0) + share,
    request.now,
  ];
  const replay = (current: number | undefined, result: number) => (current ?? 0) + result;
  return { run, replay };
}

function makeAndRun(make: (request: { now: number }) => TransactionLike, ops: number): void {
  let n = 0;
  for (let i = 0; i < ops; i++) {
    const t = make({ now: i });
    n = t.run(n)[0];
  }
  sink += n;
}

// ---- argument order vs a closure per call --------------------------------------------------

interface BreakerLike {
  state: string;
  changes: number;
}

function reported<T>(b: BreakerLike, from: string, result: T): T {
  if (b.state !== from) b.changes++;
  return result;
}

function reportedAround<T>(b: BreakerLike, step: () => T): T {
  const from = b.state;
  const result = step();
  if (b.state !== from) b.changes++;
  return result;
}

function step(b: BreakerLike, i: number): number {
  if ((i & 1023) === 0) b.state = b.state === 'closed' ? 'open' : 'closed';
  return i;
}

function argumentOrder(ops: number): void {
  const b: BreakerLike = { state: 'closed', changes: 0 };
  let n = 0;
  for (let i = 0; i < ops; i++) n += reported(b, b.state, step(b, i));
  sink += n + b.changes;
}

function closurePerCall(ops: number): void {
  const b: BreakerLike = { state: 'closed', changes: 0 };
  let n = 0;
  for (let i = 0; i < ops; i++) n += reportedAround(b, () => step(b, i));
  sink += n + b.changes;
}

// ---- synchronous fast path vs async/await ---------------------------------------------------

/** A memory store's admission: answers at once. */
function admitNow(i: number): number | Promise<number> {
  return i;
}

/** The attempt: fetch's promise (a resolved one here), with one `then` taking the answer in. */
function attempt(ticket: number): Promise<number> {
  return Promise.resolve(ticket).then((answer) => answer + 1);
}

/** As `#round` does: the attempt's promise itself when the admission answered at once. */
function roundFast(i: number): Promise<number> {
  const admitted = admitNow(i);
  if (typeof admitted === 'object') return admitted.then(attempt);
  return attempt(admitted);
}

/** The plain way: an async frame that awaits the admission, whatever it is. */
async function roundAsync(i: number): Promise<number> {
  const admitted = await admitNow(i);
  return attempt(admitted);
}

/** `ops` calls, one after another, as sequential calls of a caller (one await each). */
async function calls(round: (i: number) => Promise<number>, ops: number): Promise<void> {
  let n = 0;
  for (let i = 0; i < ops; i++) n += await round(i);
  sink += n;
}

// ---- one outcome shape vs fields added as they apply ---------------------------------------

interface OutcomeLike {
  at: number;
  response?: object | undefined;
  error?: unknown;
  holdUntil?: number | undefined;
  pushback?: boolean | undefined;
  lockout?: boolean | undefined;
}

const RESPONSE = {};

function outcomeOneShape(i: number): OutcomeLike {
  const o: OutcomeLike = {
    at: i,
    response: undefined,
    error: undefined,
    holdUntil: undefined,
    pushback: undefined,
    lockout: undefined,
  };
  const k = i & 7;
  if (k < 5) o.response = RESPONSE;
  else o.error = k;
  if (k === 1) o.holdUntil = i + 1000;
  if (k === 2) o.pushback = true;
  if (k === 3) o.lockout = true;
  return o;
}

function outcomeAsApplies(i: number): OutcomeLike {
  const o: OutcomeLike = { at: i };
  const k = i & 7;
  if (k < 5) o.response = RESPONSE;
  else o.error = k;
  if (k === 1) o.holdUntil = i + 1000;
  if (k === 2) o.pushback = true;
  if (k === 3) o.lockout = true;
  return o;
}

/** What the pipeline does with an outcome: read its fields in a few places. */
function readOutcome(o: OutcomeLike): number {
  let n = o.at & 1;
  if (o.response !== undefined) n += 1;
  if (o.holdUntil !== undefined) n += 2;
  if (o.pushback) n += 4;
  if (o.lockout) n += 8;
  return n;
}

function outcomes(make: (i: number) => OutcomeLike, ops: number): void {
  let n = 0;
  for (let i = 0; i < ops; i++) n += readOutcome(make(i));
  sink += n;
}

// ---- undefined vs delete in the host state ------------------------------------------------

interface HostStateLike {
  v: number;
  mode: string;
  seq: number;
  flights?: unknown;
  hold?: unknown;
  bucket?: { tokens: number; at: number } | undefined;
  budget?: { tokens: number } | undefined;
}

function hostStates(count: number, drop: (s: HostStateLike) => void): HostStateLike[] {
  return Array.from({ length: count }, (_, i) => {
    const s: HostStateLike = {
      v: 3,
      mode: 'warm',
      seq: i,
      flights: [],
      hold: { until: 0 },
      bucket: { tokens: 5, at: i },
      budget: { tokens: 10 },
    };
    drop(s);
    return s;
  });
}

const SET_UNDEFINED = hostStates(64, (s) => {
  s.hold = undefined;
});
const DELETED = hostStates(64, (s) => {
  delete s.hold;
});

/** A request's reads of the host state: its version, mode and a few rules' slots. */
function readStates(states: readonly HostStateLike[], ops: number): void {
  let n = 0;
  for (let i = 0; i < ops; i++) {
    const s = states[i & 63] as HostStateLike;
    n += s.seq + (s.bucket?.tokens ?? 0) + (s.budget?.tokens ?? 0) + (s.hold === undefined ? 1 : 0);
    if (s.mode === 'cold') n++;
  }
  sink += n;
}

// ---- own properties before the prototype -------------------------------------------------

const SLOT = Symbol('slot');
const STREAM = Symbol('stream');
class ResponseLike {
  status = 200;
}
const WATCHER = Object.create(ResponseLike.prototype) as object;

function watchPropsFirst(ops: number): void {
  let n = 0;
  for (let i = 0; i < ops; i++) {
    const r = new ResponseLike() as ResponseLike & Record<symbol, unknown>;
    r[SLOT] = i;
    r[STREAM] = undefined;
    Object.setPrototypeOf(r, WATCHER);
    n += r[SLOT] as number;
  }
  sink += n;
}

function watchPrototypeFirst(ops: number): void {
  let n = 0;
  for (let i = 0; i < ops; i++) {
    const r = new ResponseLike() as ResponseLike & Record<symbol, unknown>;
    Object.setPrototypeOf(r, WATCHER);
    r[SLOT] = i;
    r[STREAM] = undefined;
    n += r[SLOT] as number;
  }
  sink += n;
}

// ---- the run -------------------------------------------------------------------------------

/** Runs an async pair's side synchronously for `measure`: measured around its whole promise. */
async function measureAsync(fn: (ops: number) => Promise<void>, ops: number): Promise<number> {
  const start = process.cpuUsage();
  await fn(ops);
  const used = process.cpuUsage(start);
  return ((used.user + used.system) * 1000) / ops;
}

interface AnyPair {
  name: string;
  where: string;
  ops: number;
  trick: (ops: number) => number | Promise<number>;
  plain: (ops: number) => number | Promise<number>;
}

const sync = (p: Pair): AnyPair => ({
  name: p.name,
  where: p.where,
  ops: p.ops ?? OPS,
  trick: (ops) => measure(p.trick, ops),
  plain: (ops) => measure(p.plain, ops),
});

const pairs: AnyPair[] = [
  sync({
    name: 'bound rules (one shape) vs nine rule shapes',
    where: 'rules/host-rules.ts `Bound`',
    trick: (ops) => walkBound(BOUND, ops),
    plain: (ops) => walkRules(RULES, ops),
    ops: OPS / 4,
  }),
  sync({
    name: 'methods in an object literal vs named arrows (tsx)',
    where: 'rules/transactions.ts',
    trick: (ops) => makeAndRun(literalTransaction, ops),
    plain: (ops) => makeAndRun(namedTransaction, ops),
  }),
  sync({
    name: 'state as first argument vs a closure per call',
    where: 'rules/breaker.ts `#reported`',
    trick: argumentOrder,
    plain: closurePerCall,
  }),
  {
    name: 'synchronous fast path vs async/await',
    where: 'call-run.ts `#round`',
    ops: OPS / 4,
    trick: (ops) => measureAsync((n) => calls(roundFast, n), ops),
    plain: (ops) => measureAsync((n) => calls(roundAsync, n), ops),
  },
  sync({
    name: 'one outcome shape vs fields as they apply',
    where: 'attempt.ts outcome',
    trick: (ops) => outcomes(outcomeOneShape, ops),
    plain: (ops) => outcomes(outcomeAsApplies, ops),
  }),
  sync({
    name: 'slot set to undefined vs deleted',
    where: 'rules/host-rules.ts `Slots`',
    trick: (ops) => readStates(SET_UNDEFINED, ops),
    plain: (ops) => readStates(DELETED, ops),
  }),
  sync({
    name: 'own properties before the prototype vs after',
    where: 'body-watch.ts',
    trick: watchPropsFirst,
    plain: watchPrototypeFirst,
    ops: OPS / 4,
  }),
];

function median(xs: readonly number[]): number {
  return [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
}

const before = loadavg()
  .map((x) => x.toFixed(2))
  .join(' ');
const results = pairs.map(() => ({
  trick: [] as number[],
  plain: [] as number[],
  ratio: [] as number[],
}));
// Warm-up: every function optimised before the first measured round.
for (const p of pairs) {
  await p.trick(p.ops / 10);
  await p.plain(p.ops / 10);
}
for (let round = 0; round < ROUNDS; round++) {
  for (const [i, p] of pairs.entries()) {
    const r = results[i] as (typeof results)[number];
    // Alternating which goes first, so that neither always runs on a warmer cache or a cooler core.
    const [trick, plain] =
      round % 2 === 0
        ? [await p.trick(p.ops), await p.plain(p.ops)]
        : (([b, a]) => [a, b])([await p.plain(p.ops), await p.trick(p.ops)]);
    r.trick.push(trick as number);
    r.plain.push(plain as number);
    r.ratio.push((plain as number) / (trick as number));
  }
}
const after = loadavg()
  .map((x) => x.toFixed(2))
  .join(' ');

console.log(
  `hot-path tricks, ${new Date().toISOString()}, node ${process.version}, ${ROUNDS} rounds, ` +
    `load average ${before} (before) ${after} (after)`,
);
console.log(
  markdownTable(
    ['trick vs plain', 'where', 'trick ns/op', 'plain ns/op', 'plain / trick', 'spread'],
    pairs.map((p, i) => {
      const r = results[i] as (typeof results)[number];
      return [
        p.name,
        p.where,
        fixed(median(r.trick), 1),
        fixed(median(r.plain), 1),
        fixed(median(r.ratio), 2),
        `${fixed(Math.min(...r.ratio), 2)}-${fixed(Math.max(...r.ratio), 2)}`,
      ];
    }),
  ),
);
if (sink === 0.5) console.log(sink);

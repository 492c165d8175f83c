/**
 * What the undici interceptor costs: requests per second through `undici.request` against an
 * unlimited loopback endpoint of the mock server, with a bare undici `Agent`, the same Agent
 * composed with an interceptor that does nothing (what `compose()` itself costs: undici converts
 * the handler to its new API and back), with undici's own `interceptors.retry()` (defaults: the
 * peer a user of undici compares with), with `limited()` (defaults), and with `limited()` with
 * every policy off (`learnLimits`, `retry`, `retryBudget`, `circuitBreaker`: what the adapter, the
 * queue and the store cost without the decisions); at 16 and at 50 requests in flight, each
 * concurrency its own set of rounds.
 *
 * The contenders run one at a time (the benchmark is CPU-bound), in a rotating order each round,
 * after a warm-up; each round's rate is divided by the bare Agent's rate of the same round, and the
 * table gives the median of those ratios and their spread (lowest and highest). It also gives the
 * CPU time per request (this process: client and server), which other processes on a shared
 * machine disturb less than the wall clock. Numbers only: nothing here asserts a speed.
 *
 *   npm run bench -- --only undici [--quick] [--before <dir>/index.ts] [--split]
 *
 * `--split` adds `limited()` with one policy off at a time (`learnLimits`, `retry`,
 * `retryBudget`, `circuitBreaker`): between the defaults and every policy off, what each costs.
 *
 * `--before` loads the interceptor of a second copy of the package (`undici/index.ts` or `.js`
 * beside the `index` it names, say another checkout's `src/index.ts`) and adds it, marked
 * `(before)`, composed onto an Agent of its own, to the same rounds.
 *
 * @module
 */
import { Agent, type Dispatcher, interceptors, request } from 'undici';
import type { LimitedClientOptions } from '../../src/index.js';
import { createMockServer } from '../../src/server/index.js';
import { limited } from '../../src/undici/index.js';
import { type PairedCells, pairedCells, underLoad } from './lib/paired.js';

export interface UndiciOverheadResult extends PairedCells {
  client: string;
  /** Requests in flight. */
  concurrency: number;
}

/** The concurrencies measured, each in rounds of its own. */
export const UNDICI_CONCURRENCIES = [16, 50] as const;

interface Contender {
  name: string;
  dispatcher: Dispatcher;
}

/**
 * Runs the comparison; `quick` runs fewer requests and rounds; `before`, the path of another
 * copy's core entry (relative to the working directory), adds that copy's interceptor.
 */
export async function undiciOverhead(
  quick: boolean,
  before?: string,
  split = false,
): Promise<UndiciOverheadResult[]> {
  const server = await createMockServer({ routes: [{ path: '/free' }] });
  const url = `${server.url}/free`;
  const requests = quick ? 1000 : 3000;
  const rounds = quick ? 3 : 7;
  const bases = [new Agent(), new Agent(), new Agent(), new Agent(), new Agent()];
  const interceptor = limited();
  // What the decisions cost (learned limits, retries, the budget, the breaker): the pipeline
  // with all of them off is the adapter, the queue and the store's admission alone.
  const policiesOff = limited({
    learnLimits: false,
    retry: false,
    retryBudget: false,
    circuitBreaker: false,
  });
  const noop: Dispatcher.DispatcherComposeInterceptor = (dispatch) =>
    function passThrough(opts, handler) {
      return dispatch(opts, handler);
    };
  const [bare, forNoop, forRetry, forLimited, forOff] = bases as [
    Agent,
    Agent,
    Agent,
    Agent,
    Agent,
  ];
  const contenders: Contender[] = [
    { name: 'undici Agent', dispatcher: bare },
    { name: 'Agent + no-op interceptor', dispatcher: forNoop.compose(noop) },
    { name: 'Agent + interceptors.retry()', dispatcher: forRetry.compose(interceptors.retry()) },
    { name: 'Agent + limited()', dispatcher: forLimited.compose(interceptor) },
    { name: 'Agent + limited(), every policy off', dispatcher: forOff.compose(policiesOff) },
  ];
  const closers = [() => interceptor.close(), () => policiesOff.close()];
  if (split) {
    const offs: [string, LimitedClientOptions][] = [
      ['learnLimits: false', { learnLimits: false }],
      ['retry: false', { retry: false }],
      ['retryBudget: false', { retryBudget: false }],
      ['circuitBreaker: false', { circuitBreaker: false }],
    ];
    for (const [label, options] of offs) {
      const one = limited(options);
      const base = new Agent();
      bases.push(base);
      closers.push(() => one.close());
      contenders.push({ name: `Agent + limited({ ${label} })`, dispatcher: base.compose(one) });
    }
  }
  if (before) {
    const core = new URL(before, `file://${process.cwd()}/`);
    const entry = new URL(`undici/index${core.pathname.endsWith('.ts') ? '.ts' : '.js'}`, core);
    const copy = (await import(entry.href)) as { limited: typeof limited };
    const earlier = copy.limited();
    const base = new Agent();
    bases.push(base);
    closers.push(() => earlier.close());
    contenders.push({ name: 'Agent + limited() (before)', dispatcher: base.compose(earlier) });
  }

  /** One round of a contender: [requests per second, CPU microseconds per request]. */
  function measure(dispatcher: Dispatcher, concurrency: number): Promise<[number, number]> {
    return underLoad(requests, concurrency, async () => {
      const r = await request(url, { dispatcher });
      await r.body.dump();
    });
  }

  /** Each contender's rounds at `concurrency`, after a warm-up (connections, JIT). */
  async function roundsAt(concurrency: number): Promise<[number, number][][]> {
    for (const c of contenders) await measure(c.dispatcher, concurrency);
    const samples = contenders.map(() => [] as [number, number][]);
    for (let round = 0; round < rounds; round++) {
      for (let k = 0; k < contenders.length; k++) {
        const i = (k + round) % contenders.length;
        samples[i]?.push(await measure((contenders[i] as Contender).dispatcher, concurrency));
      }
    }
    return samples;
  }

  const results: UndiciOverheadResult[] = [];
  for (const concurrency of UNDICI_CONCURRENCIES) {
    const samples = await roundsAt(concurrency);
    const base = samples[0] as [number, number][];
    contenders.forEach((c, i) => {
      const mine = samples[i] as [number, number][];
      const ratios = mine.map(([rate], round) => rate / (base[round]?.[0] ?? NaN));
      const cpuRatios = mine.map(([, cpu], round) => (base[round]?.[1] ?? NaN) / cpu);
      const cells = pairedCells(
        mine.map(([rate]) => rate),
        ratios,
        mine.map(([, cpu]) => cpu),
        cpuRatios,
      );
      results.push({ client: c.name, concurrency, ...cells });
    });
  }
  await Promise.all(closers.map((close) => close()));
  await Promise.all(bases.map((b) => b.close()));
  await server.close();
  return results;
}

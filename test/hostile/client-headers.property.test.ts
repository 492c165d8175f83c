/**
 * Issue 11, "keep the project this way": the real client, over real HTTP on loopback, against a
 * server whose every answer is generated (see `client-answers.ts`): statuses of every class, rate
 * limit headers of every family the parser reads with hostile names, numbers and dates, fresh
 * policy names by the hundred, bodies, dropped connections, answers later than the timeout.
 *
 * Each generated case is a script of answers and a few calls (some at once, some in partitions
 * named like `Object.prototype`'s properties) through a new client, so that a failing case can be
 * replayed and shrunk alone. After each case: `Object.prototype` is unchanged; every call settled
 * (none outlived a watchdog well past its `timeoutMs`) to a response, a typed error or a fetch
 * error (never `ClientClosedError`: the client is open throughout); `stats()` is bounded (at most `maxHosts` pipelines, `MAX_POLICIES` declared policies each and the timed one, nothing
 * left in flight or queued). Over the whole run: the heap after a full collection stays within a
 * bound. The CPU time from a response's headers arriving to its call resolving (the client's own
 * work on it: parsing, the rules, the breaker) is printed, not asserted (a CPU bound fails on a
 * loaded machine): test/bench/hostile-headers-cpu.ts measures it against an ordinary answer's in
 * the same run.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_POLICIES } from '../../src/client/rules/quota.js';
import { isLimitedClientError, LimitedClient } from '../../src/index.js';
import { type Answer, answer, LATE_MS, renderAnswer } from './client-answers.js';
import {
  PROTOTYPE_NAMES,
  prototypeSnapshot,
  type ScriptedServer,
  scriptedServer,
} from './helpers.js';

/** Generated cases (each a handful of calls); `HOSTILE_RUNS` overrides it. */
const RUNS = Number(process.env.HOSTILE_RUNS ?? 200);
/** Below the partitions a case may use (up to 5, and the host's own), so eviction happens. */
const MAX_HOSTS = 3;
const TIMEOUT_MS = 600;
/** Below {@link LATE_MS}: a late answer times its attempt out. */
const ATTEMPT_TIMEOUT_MS = 100;
/** A call still pending this long after it started has hung (its `timeoutMs` is long past). */
const WATCHDOG_MS = TIMEOUT_MS + 4000;
/** Heap growth allowed over the run, after a full collection, in bytes. */
const HEAP_BOUND = 24 * 1024 * 1024;

/** A full collection, without `--expose-gc` on the command line. */
function collector(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

function heapAfterGc(gc: () => void): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** What fetch itself rejects with: a network failure, a redirect loop, a header overflow. */
function isFetchError(error: unknown): boolean {
  return error instanceof TypeError && error.message === 'fetch failed';
}

/** The q-quantile of `xs` (0 for none). */
function quantile(xs: number[], q: number): number {
  return [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) * q)] ?? 0;
}

const call = fc.record({
  method: fc.constantFrom('GET', 'GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD'),
  partition: fc.option(
    fc.oneof(
      fc.constantFrom(...PROTOTYPE_NAMES),
      fc.string({ maxLength: 8 }),
      fc.nat(40).map((n) => `p${n}`),
    ),
    { nil: undefined, freq: 2 },
  ),
  /** Starts with the previous call rather than after it. */
  together: fc.boolean(),
  /** Reads the body (else cancels it). */
  read: fc.boolean(),
});
type CallSpec = typeof call extends fc.Arbitrary<infer T> ? T : never;

const testCase = fc.record({
  script: fc.array(answer, { minLength: 1, maxLength: 5 }),
  calls: fc.array(call, { minLength: 1, maxLength: 5 }),
});

let server: ScriptedServer;
/** The current case's answers, served in turn. */
let script: Answer[] = [];
let served = 0;
const serial = { next: 0 };

beforeAll(async () => {
  server = await scriptedServer(async (request) => {
    const a = script[served++ % script.length] as Answer;
    if (a.mode === 'drop') request.socket.destroy();
    if (a.mode === 'late') await new Promise((resolve) => setTimeout(resolve, LATE_MS));
    return renderAnswer(a, serial);
  });
});
afterAll(() => server.close());

describe('the client against generated hostile answers', () => {
  it('keeps Object.prototype, settles every call with a documented outcome, and stays bounded', async () => {
    const gc = collector();
    const before = prototypeSnapshot();
    // When each response's headers came in (wall and CPU time), and whether its call was the only
    // one in flight then (else the others' work would count too).
    const arrived = new WeakMap<Response, { wall: number; cpu: number; alone: boolean }>();
    let active = 0;
    /** Most calls under way at once in the current case. */
    let peakActive = 0;
    const timedFetch: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      arrived.set(response, { wall: performance.now(), cpu: cpuMs(), alone: active === 1 });
      return response;
    };

    let cases = 0;
    let calls = 0;
    const outcomes = new Map<string, number>();
    const wallMs: number[] = [];
    const cpuSpent: number[] = [];
    let baseline = 0;
    let maxHeapDelta = 0;
    let maxPolicies = 0;
    let maxHosts = 0;

    const one = async (
      api: LimitedClient,
      retried: Set<string>,
      c: CallSpec,
      i: number,
    ): Promise<string> => {
      const path = `/c/${cases}/${i}`;
      const init = {
        method: c.method,
        partition: c.partition,
        body: c.method === 'GET' || c.method === 'HEAD' ? undefined : `{"i":${i}}`,
      };
      active++;
      peakActive = Math.max(peakActive, active);
      try {
        const response = await api.request(path, init);
        const at = arrived.get(response);
        // A call that retried may resolve to an earlier response after a wait: not timed.
        if (at?.alone && !retried.has(`${server.url}${path}`)) {
          cpuSpent.push(cpuMs() - at.cpu);
          wallMs.push(performance.now() - at.wall);
        }
        if (c.read) await response.text();
        else await response.body?.cancel();
        return `status ${Math.floor(response.status / 100)}xx`;
      } catch (error) {
        if (isLimitedClientError(error)) return error.code;
        if (isFetchError(error)) return 'fetch failed';
        throw new Error(`undocumented rejection: ${String(error)}`, { cause: error });
      } finally {
        active--;
      }
    };

    const watched = (p: Promise<string>) =>
      Promise.race([
        p,
        new Promise<string>((resolve) => setTimeout(resolve, WATCHDOG_MS, 'hung').unref()),
      ]);

    await fc.assert(
      fc.asyncProperty(testCase, async ({ script: s, calls: cs }) => {
        cases++;
        script = s;
        served = 0;
        peakActive = 0;
        const api = new LimitedClient(server.url, {
          timeoutMs: TIMEOUT_MS,
          attemptTimeoutMs: ATTEMPT_TIMEOUT_MS,
          maxRetryAfterMs: 50,
          retry: { retries: 2, baseDelayMs: 5, maxDelayMs: 20 },
          circuitBreaker: { coolDownMs: 20, maxCoolDownMs: 100, consecutiveFailures: 3 },
          maxHosts: MAX_HOSTS,
          fetch: timedFetch,
        });
        const retried = new Set<string>();
        api.on('retry', (event) => retried.add(event.url));
        try {
          // Calls marked `together` start at once with the previous one; the others after it.
          const settled: Promise<string>[] = [];
          let previous: Promise<unknown> = Promise.resolve();
          cs.forEach((c, i) => {
            const start = c.together ? Promise.resolve() : previous;
            const p = watched(start.then(() => one(api, retried, c, i)));
            settled.push(p);
            previous = p;
          });
          for (const outcome of await Promise.all(settled)) {
            expect(outcome).not.toBe('hung');
            // The client is open until the case is over: no call may say it is closed.
            expect(outcome).not.toBe('ERR_CLIENT_CLOSED');
            outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
            calls++;
          }

          expect(prototypeSnapshot()).toEqual(before);
          expect(({} as Record<string, unknown>).remaining).toBeUndefined();
          const hosts = Object.values(api.stats().hosts);
          // maxHosts, or more while more calls than that were under way at once (a call keeps its
          // pipeline; the next call's sweep lets the extra ones go).
          expect(hosts.length).toBeLessThanOrEqual(Math.max(MAX_HOSTS, peakActive));
          maxHosts = Math.max(maxHosts, hosts.length);
          for (const h of hosts) {
            // The declared ones, and the one learned from timed refusals (`rules/timed.ts`).
            expect(h.policies.length).toBeLessThanOrEqual(MAX_POLICIES + 1);
            expect(h.inFlight).toBe(0);
            expect(h.queueLength).toBe(0);
            maxPolicies = Math.max(maxPolicies, h.policies.length);
          }
        } finally {
          await api.close();
        }

        if (cases === 25) baseline = heapAfterGc(gc);
        else if (cases > 25 && cases % 25 === 0) {
          maxHeapDelta = Math.max(maxHeapDelta, heapAfterGc(gc) - baseline);
        }
      }),
      { numRuns: RUNS, interruptAfterTimeLimit: 100_000, markInterruptAsFailure: true },
    );

    if (baseline > 0) maxHeapDelta = Math.max(maxHeapDelta, heapAfterGc(gc) - baseline);
    console.log(
      [
        `hostile client property: ${cases} generated cases, ${calls} calls,`,
        `${server.received} answers served, ${serial.next} fresh policy names;`,
        `outcomes ${JSON.stringify(Object.fromEntries(outcomes))};`,
        `largest heap growth after gc ${(maxHeapDelta / 1048576).toFixed(1)} MB`,
        `(bound ${HEAP_BOUND / 1048576} MB); response headers to resolution, over`,
        `${cpuSpent.length} calls alone in flight: CPU max ${quantile(cpuSpent, 1).toFixed(1)} ms,`,
        `p99 ${quantile(cpuSpent, 0.99).toFixed(1)} ms,`,
        `median ${quantile(cpuSpent, 0.5).toFixed(2)} ms; wall max ${quantile(wallMs, 1).toFixed(1)} ms,`,
        `p99 ${quantile(wallMs, 0.99).toFixed(1)} ms, median ${quantile(wallMs, 0.5).toFixed(2)} ms;`,
        `most pipelines at once ${maxHosts}, most policies on a host ${maxPolicies}`,
      ].join(' '),
    );
    expect(cases).toBe(RUNS);
    expect(maxHeapDelta).toBeLessThan(HEAP_BOUND);
    // The generated answers reached the rules: some calls resolved, some were refused, and hosts
    // learned more policies than they keep.
    expect(outcomes.get('status 2xx') ?? 0).toBeGreaterThan(0);
    expect(outcomes.get('ERR_RATE_LIMITED') ?? 0).toBeGreaterThan(0);
    expect(maxPolicies).toBeGreaterThanOrEqual(MAX_POLICIES);
    expect(maxHosts).toBeGreaterThanOrEqual(MAX_HOSTS);
  }, 150_000);
});

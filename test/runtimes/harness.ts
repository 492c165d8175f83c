/**
 * What every runtime test shares: the mock server the scenario (`scenario.js`) calls, the checks
 * its result must pass, finding a runtime's binary, running a script in it, and saying loudly when
 * a runtime cannot run here.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { expect, it } from 'vitest';
import {
  type CorsConfig,
  createMockServer,
  type MockServer,
  type MockServerStats,
} from '../../src/server/index.js';

/** The repository's root. */
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** The built core, as published: what every runtime loads, unchanged. */
export const CORE = join(ROOT, 'dist/index.js');
/** The scenario every runtime runs. */
export const SCENARIO = fileURLToPath(new URL('./scenario.js', import.meta.url));

/** Milliseconds a runtime may take to start and run the whole scenario on a loaded machine. */
export const RUN_TIMEOUT_MS = 120_000;

/**
 * Fails at once, with the fix, when the core is not built: the runtime tests load `dist/`, which
 * `npm test` builds before running vitest.
 */
export function requireBuiltCore(): void {
  if (!existsSync(CORE)) {
    throw new Error(`${CORE} is missing: run \`npm run build\` first (npm test does it).`);
  }
}

/**
 * Starts the mock server with the scenario's routes:
 * - `GET /paced`: a token bucket of 3 refilled at 5/s, in the IETF fields;
 * - `GET /hold`: a token bucket of 1 refilled at 0.25/s, no rate-limit fields, `Retry-After` on 429;
 * - `POST /pay`: 1200 ms of work before its side effect, `Idempotency-Key` honoured;
 * - `POST /charge`: the first request's connection reset after its side effect ran.
 */
export function startScenarioServer(cors?: boolean | CorsConfig): Promise<MockServer> {
  return createMockServer({
    ...(cors === undefined ? {} : { cors }),
    routes: [
      {
        method: 'GET',
        path: '/paced',
        limits: [{ algorithm: 'token-bucket', capacity: 3, refillPerSecond: 5, name: 'paced' }],
      },
      {
        method: 'GET',
        path: '/hold',
        headers: 'none',
        limits: [{ algorithm: 'token-bucket', capacity: 1, refillPerSecond: 0.25, name: 'hold' }],
      },
      { method: 'POST', path: '/pay', faults: { latencyMs: 1200 } },
      {
        method: 'POST',
        path: '/charge',
        faults: { reset: { when: 'after-handler', times: 1 } },
      },
    ],
  });
}

/** The result `runScenario` resolves to (see `scenario.js`). */
export interface ScenarioResult {
  exports: string[];
  paced: {
    statuses: number[];
    mode: string;
    policies: { name: string; limit?: number }[];
    rateLimited: number;
    heldReasons: string[];
    ratelimitPolicyHeader: string | null;
  };
  hold: {
    statuses: number[];
    rateLimited: number;
    retries: number;
    events: {
      event: string;
      status?: number;
      delaySource?: string;
      delayMs?: number;
      retryAfterMs?: number;
    }[];
    retryAfterHeader: (string | null)[];
  };
  reset: { status: number | null; execution?: number | null; error?: string; retries: unknown[] };
  refused: { status?: number; error?: string; retries: number };
  idempotent: {
    status: number;
    execution: number | null;
    replayedHeader: string | null;
    retries: number;
    retryCauses: unknown[];
  };
  globals: {
    present: string[];
    absent: string[];
    unwatchable: string[];
    selfProbe: boolean;
    touchedByCore: { name: string; stack: string }[];
    /** Reads of `process` by the core's diagnostics_channel lookup (see scenario.js). */
    probes: number;
    touchedElsewhere: string[];
  };
}

/** Pulls the `RESULT {json}` line a runtime's script prints. */
export function parseResult(output: string): ScenarioResult {
  const line = output.split('\n').find((l) => l.startsWith('RESULT '));
  if (line === undefined) throw new Error(`no RESULT line in the runtime's output:\n${output}`);
  return JSON.parse(line.slice('RESULT '.length)) as ScenarioResult;
}

/** One line per run in the test output: what the runtime did, for the CI log. */
export function logRun(runtime: string, result: ScenarioResult): void {
  const reset =
    result.reset.error !== undefined
      ? `FAILED with ${result.reset.error}`
      : result.reset.retries.length > 0
        ? `the client retried after ${JSON.stringify(result.reset.retries)}`
        : 'the runtime itself resent it (no client retry)';
  const refused = `refused connection: ${result.refused.retries} retries then ${result.refused.error}`;
  console.log(
    `${runtime}: ${refused}; /paced ${result.paced.rateLimited} x 429 (mode ${result.paced.mode}); /hold retry after ${result.hold.events.find((e) => e.event === 'retry')?.delaySource}; /pay ${result.idempotent.retries} retries (${JSON.stringify(result.idempotent.retryCauses)}); /charge reset: ${reset}; Node globals present: ${result.globals.present.join(', ') || 'none'}`,
  );
}

/**
 * The four things every runtime must show, with every rate-limit field readable:
 * 1. headers read: `/paced` learned the `paced` policy (mode `declared`), 10 x 200, 0 x 429;
 * 2. a hold honoured: `/hold`'s 429 said `Retry-After: 4` (or a little less on a slow machine),
 *    the client retried on that delay, and
 *    the server (which would refuse an early retry) admitted it: 1 rejection, 2 admissions;
 * 3. a POST retried with one idempotency key: 1 side effect, the retries answered 409 (in use) or
 *    replayed, the final answer the first execution's; and after a connection reset (the
 *    runtime's own network error recognised as transient), the stored answer replayed;
 * 4. no Node-only global touched by the core, and the watch itself working.
 */
export function expectCoreBehaviour(result: ScenarioResult, stats: MockServerStats): void {
  expect(result.exports).toEqual(['LimitedClient', 'wrapFetch', 'parseRateLimitHeaders']);
  // 1. Headers read.
  expect(result.paced.statuses).toEqual(Array(10).fill(200));
  expect(result.paced.mode).toBe('declared');
  expect(result.paced.policies.map((p) => p.name)).toContain('paced');
  expect(result.paced.rateLimited).toBe(0);
  expect(stats.routes['GET /paced']).toMatchObject({ admitted: 10, rejected: 0 });
  // 2. A hold honoured.
  expectHoldHonoured(result, stats);
  expectRetryAfterRead(result);
  const retry = result.hold.events.find((e) => e.event === 'retry');
  expect(retry?.delaySource).toBe('retry-after');
  // 3. The idempotent retry.
  expectIdempotentRetry(result, stats);
  expect(result.idempotent.replayedHeader).toBe('true');
  expectResetRetried(result, stats);
  expectRefusedRetried(result);
  // 4. Node-only globals.
  expectNoNodeGlobalTouched(result);
}

/** Part 2 as the server sees it: one 429, then a retry late enough to be admitted. */
export function expectHoldHonoured(result: ScenarioResult, stats: MockServerStats): void {
  expect(result.hold.statuses).toEqual([200, 200]);
  expect(result.hold.rateLimited).toBe(1);
  expect(stats.routes['GET /hold']).toMatchObject({ admitted: 2, rejected: 1 });
}

/**
 * The 429's `Retry-After` as the client read it: whole seconds, at most the 4 s a token takes
 * (less when the second GET came late, never 0: the bucket was empty).
 */
export function expectRetryAfterRead(result: ScenarioResult): void {
  const pushback = result.hold.events.find((e) => e.event === 'rate-limited');
  expect([1000, 2000, 3000, 4000]).toContain(pushback?.retryAfterMs);
}

/**
 * Part 3: one side effect, the retries refused as in use or replayed (more than one replay when a
 * slow machine made a replay outlive its attempt timeout), the first execution's answer.
 */
export function expectIdempotentRetry(result: ScenarioResult, stats: MockServerStats): void {
  const pay = stats.routes['POST /pay'];
  expect(pay?.sideEffects).toBe(1);
  expect(pay?.replays).toBeGreaterThanOrEqual(1);
  expect(result.idempotent.status).toBe(200);
  expect(result.idempotent.execution).toBe(1);
  expect(result.idempotent.retries).toBeGreaterThanOrEqual(1);
}

/**
 * Part 3 after a reset: the side effect ran once, the connection was reset, a retry with the same
 * key got the replay. (A browser may resend a POST whose reused connection was reset by itself,
 * with the same headers: the server sees the same, the client no retry of its own.)
 */
export function expectResetRetried(result: ScenarioResult, stats: MockServerStats): void {
  expect(result.reset.error).toBeUndefined();
  expect(result.reset.status).toBe(200);
  expect(result.reset.execution).toBe(1);
  expect(stats.routes['POST /charge']).toMatchObject({ sideEffects: 1, resets: 1 });
  expect(stats.routes['POST /charge']?.replays).toBeGreaterThanOrEqual(1);
}

/** A refused connection is a transient failure: retried twice, then the runtime's error. */
export function expectRefusedRetried(result: ScenarioResult): void {
  expect(result.refused).toMatchObject({ retries: 2 });
  expect(result.refused.status).toBeUndefined();
}

/**
 * Part 4: the watch saw its own probe, and no read of a Node-only global came from the core but
 * the one lookup of `diagnostics_channel` (`process`, once per load of the core, from its own
 * function).
 */
export function expectNoNodeGlobalTouched(result: ScenarioResult): void {
  expect(result.globals.selfProbe).toBe(true);
  expect(result.globals.unwatchable).toEqual([]);
  expect(result.globals.touchedByCore).toEqual([]);
  expect(result.globals.probes).toBe(1);
}

/**
 * Says loudly that a runtime cannot run here and why, and registers one skipped test whose name
 * says so; the other runtime files still run.
 */
export function runtimeUnavailable(runtime: string, reason: string): void {
  const line = '!'.repeat(100);
  console.warn(
    `\n${line}\n!! ${runtime} runtime tests SKIPPED: ${reason}\n` +
      `!! .ci/run installs what they need; see docs/runtimes.md.\n${line}\n`,
  );
  it.skip(`${runtime}: cannot run on this machine (${reason})`, () => {});
}

/** The first of `candidates` that answers `--version`, with what it printed; else undefined. */
export async function findBinary(
  candidates: readonly string[],
): Promise<{ path: string; version: string } | undefined> {
  for (const path of candidates) {
    if (!existsSync(path)) continue;
    try {
      const { stdout } = await run(path, ['--version'], {}, 30_000);
      return { path, version: stdout.trim().split('\n')[0] ?? '' };
    } catch {
      // Not runnable here (wrong architecture, missing library): try the next one.
    }
  }
  return undefined;
}

/** A loopback port free a moment ago: nothing listens there (the scenario's refused connection). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** A URL where nothing listens. */
export async function deadUrl(): Promise<string> {
  return `http://127.0.0.1:${await freePort()}`;
}

/** Runs a command to its end; rejects with its output when it fails or outlives `timeoutMs`. */
export function run(
  command: string,
  args: readonly string[],
  env: Record<string, string> = {},
  timeoutMs = RUN_TIMEOUT_MS,
): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(
      command,
      [...args],
      { env: { ...process.env, ...env }, timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error) {
          reject(
            new Error(
              `${command} ${args.join(' ')} failed: ${error.message}\n${stdout}\n${stderr}`,
            ),
          );
        } else resolve({ stdout, stderr });
      },
    );
  });
}

/**
 * Writes an entry script for a runtime with ES modules and top-level await (Node, Deno, Bun): it
 * installs the watch on Node-only globals, then imports the built core and runs the scenario
 * against `baseUrl`, printing `RESULT {json}`. Returns its path and a cleanup.
 */
export async function writeEntry(
  baseUrl: string,
  dead: string,
): Promise<{ path: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'limited-client-runtime-'));
  const path = join(dir, 'entry.mjs');
  await writeFile(
    path,
    [
      `import { watchNodeGlobals, runScenario } from ${JSON.stringify(pathToFileURL(SCENARIO).href)};`,
      'const watch = watchNodeGlobals();',
      `const core = await import(${JSON.stringify(pathToFileURL(CORE).href)});`,
      `const result = await runScenario(core, { baseUrl: ${JSON.stringify(baseUrl)}, deadUrl: ${JSON.stringify(dead)}, watch });`,
      "console.log('RESULT ' + JSON.stringify(result));",
      '',
    ].join('\n'),
  );
  return { path, remove: () => rm(dir, { recursive: true, force: true }) };
}

/**
 * Runs `scenario.js` in a runtime's own process against `server`: writes the entry, runs
 * `binary` with `args(entry, dead)` (`dead`: a URL nothing listens on), reads the result, logs it
 * under `label` and checks what every runtime must show (`expectCoreBehaviour`). Returns the
 * result for the checks of the runtime's own.
 */
export async function runScenario(
  label: string,
  binary: string,
  args: (entry: string, dead: string) => readonly string[],
  server: MockServer,
  env: Record<string, string> = {},
): Promise<ScenarioResult> {
  const dead = await deadUrl();
  const entry = await writeEntry(server.url, dead);
  try {
    const { stdout } = await run(binary, args(entry.path, dead), env);
    const result = parseResult(stdout);
    logRun(label, result);
    expectCoreBehaviour(result, server.stats());
    return result;
  } finally {
    await entry.remove();
  }
}

/**
 * Runs a fleet of processes sharing one client-side rate through Redis against a mock server that
 * enforces the same rate, and gathers what each saw. Used by `processes.test.ts` and
 * `outage.test.ts`.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { createMockServer, type MockServer } from '../../../src/server/index.js';
import type { ChildPlan, ChildReport } from './child.js';

const CHILD = fileURLToPath(new URL('./child.ts', import.meta.url));

/** One run of a fleet. */
export interface FleetRun {
  reports: ChildReport[];
  exitCodes: (number | null)[];
  server: MockServer;
  /** When the traffic started and was to end, epoch milliseconds. */
  startAt: number;
  endAt: number;
  /** 200s that arrived from `from` to `to` (epoch milliseconds), over all processes, per second. */
  okPerSecond(from: number, to: number): number;
}

/** What to run. `during` runs in the parent once the traffic has started (e.g. a Redis pause). */
export interface FleetPlan extends Omit<ChildPlan, 'url' | 'startAt' | 'endAt'> {
  processes: number;
  durationMs: number;
  /** The server's bucket: `rate` per second, `capacity` at most. */
  serverCapacity: number;
  during?: (startAt: number) => Promise<void>;
}

/**
 * The fleet both tests run: three processes sharing 40/s (a burst of 4), four calls in flight each,
 * against a server allowing 40/s (a burst of 8); each keeps a third when Redis is away.
 */
export const THREE_AT_40: Omit<FleetPlan, 'redisUrl' | 'client' | 'prefix' | 'durationMs'> = {
  processes: 3,
  rate: 40,
  burst: 4,
  serverCapacity: 8,
  concurrency: 4,
  localShare: 1 / 3,
};

/** Every process exited 0, with no call that rejected and no unhandled rejection. */
export function expectCleanExits(run: FleetRun): void {
  expect(run.exitCodes).toEqual(run.exitCodes.map(() => 0));
  const errors = run.reports.flatMap((r) => r.errors);
  expect(
    run.reports.map((r) => [r.errors.length, r.unhandled]),
    errors.join('\n'),
  ).toEqual(run.exitCodes.map(() => [0, 0]));
}

/** A child process: ready once it printed `ready` (set up); its exit code and report. */
interface Child {
  ready: Promise<void>;
  /** Tells the child when the traffic starts and ends (epoch milliseconds). */
  go(startAt: number, endAt: number): void;
  done: Promise<{ code: number | null; report?: ChildReport }>;
}

function spawnChild(plan: Omit<ChildPlan, 'startAt' | 'endAt'>): Child {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, JSON.stringify(plan)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let out = '';
  let markReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => {
    markReady = resolve;
  });
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    if (out.startsWith('ready\n')) markReady();
  });
  const done = new Promise<{ code: number | null; report?: ChildReport }>((resolve) => {
    child.on('exit', (code) => {
      markReady();
      const line = out.trim().split('\n').at(-1);
      resolve({
        code,
        report: line && line !== 'ready' ? (JSON.parse(line) as ChildReport) : undefined,
      });
    });
  });
  return {
    ready,
    go: (startAt, endAt) => child.stdin.end(`${JSON.stringify({ startAt, endAt })}\n`),
    done,
  };
}

/** Starts the server and the processes, waits for them all, and returns what they saw. */
export async function runFleet(plan: FleetPlan): Promise<FleetRun> {
  const server = await createMockServer({
    routes: [
      {
        path: '/work',
        limits: [
          {
            algorithm: 'token-bucket',
            capacity: plan.serverCapacity,
            refillPerSecond: plan.rate,
            key: 'global',
            name: 'fleet',
          },
        ],
      },
    ],
  });
  // Every child starts (tsx compiles on the fly, slowly on a busy machine) and sets up; then the
  // traffic begins for all of them at once.
  const children = Array.from({ length: plan.processes }, () =>
    spawnChild({ ...plan, url: server.url }),
  );
  await Promise.all(children.map((c) => c.ready));
  const startAt = Date.now() + 200;
  const endAt = startAt + plan.durationMs;
  for (const c of children) c.go(startAt, endAt);
  await plan.during?.(startAt);
  const results = await Promise.all(children.map((c) => c.done));
  await server.close();
  const reports = results.map((r) => r.report).filter((r): r is ChildReport => r !== undefined);
  return {
    reports,
    exitCodes: results.map((r) => r.code),
    server,
    startAt,
    endAt,
    okPerSecond(from, to) {
      const ok = reports.flatMap((r) => r.arrivals['200'] ?? []).filter((t) => t >= from && t < to);
      return ok.length / ((to - from) / 1000);
    },
  };
}

/**
 * The "scopes" section of `npm run bench` (issue 26, "One host, many budgets"): the eight provider
 * shapes of test/peers/provider-shapes.ts, each with its typical workload, against LimitedClient
 * (`wrapFetch()` with its defaults, no `partition`), ky, and on their own dialects
 * `@octokit/core` + `@octokit/plugin-throttling` (GitHub) and `@discordjs/rest` (Discord).
 *
 * Each contender runs against its own instance of the shape's server, all contenders of a shape
 * at the same time. Figures per contender: elapsed over the least time the shape's budgets allow
 * the workload (its slowest worker's; see `leastMs`), each worker's elapsed, refusals the server
 * sent (429s, GitHub's 403s, Shopify's THROTTLED 200s), attempts per call (server-side), and
 * calls that did not end well (a non-2xx, or a THROTTLED body handed back as a result).
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { REST } from '@discordjs/rest';
import { Octokit } from '@octokit/core';
import { throttling } from '@octokit/plugin-throttling';
import Bottleneck from 'bottleneck';
import ky, { HTTPError } from 'ky';
import { wrapFetch } from '../../src/index.js';
import {
  GITHUB,
  leastMs,
  type ShapeCall,
  type ShapeScenario,
  shapeScenarios,
} from '../peers/provider-shapes.js';
import { RETRIES } from './lib/peers.js';

/** How a call ended, as the caller saw it: status (0 when none) and the body's text. */
interface Outcome {
  status: number;
  body: string;
}

/** A client under test, bound to one server. */
interface ShapeContender {
  readonly name: string;
  send(call: ShapeCall): Promise<Outcome>;
  close(): Promise<void>;
}

type Make = (baseUrl: string) => ShapeContender;

/** One contender's figures on one shape. */
export interface ScopesResult {
  shape: string;
  client: string;
  calls: number;
  ok: number;
  failed: number;
  elapsedMs: number;
  leastMs: number;
  ratio: number;
  /** Each worker's elapsed, in milliseconds, and its least time. */
  workers: { name: string; elapsedMs: number; leastMs: number; failed: number }[];
  /** Calls that did not end well, by final status (0: rejected or no response). */
  failedByStatus: Record<string, number>;
  refusals: number;
  attemptsPerCall: number;
  /** The round it ran in (`--rounds`), from 1. */
  round?: number;
  /** LimitedClient only: calls that rejected, by error code. */
  problems?: Record<string, number>;
}

const json = (call: ShapeCall): RequestInit => ({
  method: call.method,
  ...(call.body === undefined
    ? {}
    : { body: JSON.stringify(call.body), headers: { 'content-type': 'application/json' } }),
});

const limitedClient: Make = (baseUrl) => {
  const fetchLimited = wrapFetch();
  const problems = new Map<string, number>();
  return {
    name: 'LimitedClient',
    problems,
    async send(call) {
      try {
        const response = await fetchLimited(`${baseUrl}${call.path}`, json(call));
        return { status: response.status, body: await response.text() };
      } catch (error) {
        const code = (error as { code?: string }).code ?? (error as Error).name;
        problems.set(code, (problems.get(code) ?? 0) + 1);
        return { status: 0, body: '' };
      }
    },
    close: () => fetchLimited.close(),
  } as ShapeContender;
};

/** ky with retry on GETs and POSTs (it honours Retry-After on 413, 429 and 503), as lib/peers.ts sets it up. */
const kyContender: Make = (baseUrl) => ({
  name: 'ky',
  async send(call) {
    try {
      const response = await ky(`${baseUrl}${call.path}`, {
        ...json(call),
        retry: { limit: RETRIES, methods: ['get', 'post'] },
        timeout: false,
      });
      return { status: response.status, body: await response.text() };
    } catch (error) {
      // throwHttpErrors stays on: ky retries only the answers it throws for.
      if (error instanceof HTTPError) {
        return { status: error.response.status, body: await error.response.text() };
      }
      return { status: 0, body: '' };
    }
  },
  close: async () => {},
});

let octokits = 0;

/**
 * @octokit/core with @octokit/plugin-throttling, retrying on every rate limit up to RETRIES.
 * Its search limiter spaces searches by 2 s (GitHub's 30 a minute); scaled here like the server's
 * search budget (one search per windowMs / limit), or the plugin would be measured against a
 * budget 5 times smaller than the one it was written for.
 */
const octokitContender: Make = (baseUrl) => {
  const Throttled = Octokit.plugin(throttling);
  const retry = (_after: number, _options: unknown, _octokit: unknown, retryCount: number) =>
    retryCount < RETRIES;
  const octokit = new Throttled({
    baseUrl,
    throttle: {
      id: `bench-${++octokits}`,
      onRateLimit: retry,
      onSecondaryRateLimit: retry,
      search: new Bottleneck.Group({
        maxConcurrent: 1,
        minTime: GITHUB.windowMs / GITHUB.search,
      }),
    },
  });
  return {
    name: '@octokit/plugin-throttling',
    async send(call) {
      try {
        const response = await octokit.request({ method: call.method, url: call.path });
        return { status: response.status, body: JSON.stringify(response.data) };
      } catch (error) {
        return { status: (error as { status?: number }).status ?? 0, body: '' };
      }
    },
    close: async () => {},
  };
};

/** @discordjs/rest with its defaults (global 50/s, 3 retries on 5xx), the base URL pointed here. */
const discordContender: Make = (baseUrl) => {
  const rest = new REST({ api: `${baseUrl}/api`, version: '10' }).setToken('simulated');
  return {
    name: '@discordjs/rest',
    async send(call) {
      const route = call.path.replace(/^\/api\/v10/, '') as `/${string}`;
      try {
        const data =
          call.method === 'POST'
            ? await rest.post(route, { body: call.body })
            : await rest.get(route);
        return { status: 200, body: JSON.stringify(data) };
      } catch (error) {
        return { status: (error as { status?: number }).status ?? 0, body: '' };
      }
    },
    close: async () => {
      rest.clearHashSweeper();
      rest.clearHandlerSweeper();
    },
  };
};

const DEADLINE_MS = 180_000;

async function runOne(scenario: ShapeScenario, make: Make): Promise<ScopesResult> {
  const server = await scenario.start();
  const contender = make(server.url);
  let deadline: NodeJS.Timeout | undefined;
  const failedByStatus = new Map<number, number>();
  try {
    const start = performance.now();
    const work = Promise.all(
      scenario.workers.map(async (worker) => {
        let next = 0;
        let failed = 0;
        await Promise.all(
          Array.from({ length: worker.concurrency }, async () => {
            while (next < worker.calls) {
              const outcome = await contender.send(worker.call(next++));
              if (!scenario.ok(outcome.status, outcome.body)) {
                failed++;
                failedByStatus.set(outcome.status, (failedByStatus.get(outcome.status) ?? 0) + 1);
              }
            }
          }),
        );
        return {
          name: worker.name,
          elapsedMs: Math.round(performance.now() - start),
          leastMs: worker.leastMs,
          failed,
        };
      }),
    );
    const workers = await Promise.race([
      work,
      new Promise<never>((_, reject) => {
        deadline = setTimeout(
          () => reject(new Error(`${contender.name} on ${scenario.id}: over ${DEADLINE_MS} ms`)),
          DEADLINE_MS,
        );
      }),
    ]);
    const elapsedMs = performance.now() - start;
    const calls = scenario.workers.reduce((n, w) => n + w.calls, 0);
    const failed = workers.reduce((n, w) => n + w.failed, 0);
    const least = leastMs(scenario);
    const problems = (contender as { problems?: Map<string, number> }).problems;
    return {
      shape: scenario.name,
      client: contender.name,
      calls,
      ok: calls - failed,
      failed,
      elapsedMs: Math.round(elapsedMs),
      leastMs: least,
      ratio: elapsedMs / least,
      workers,
      failedByStatus: Object.fromEntries(failedByStatus),
      refusals: server.refusals(),
      attemptsPerCall: server.attempts() / calls,
      ...(problems && problems.size > 0 ? { problems: Object.fromEntries(problems) } : {}),
    };
  } finally {
    clearTimeout(deadline);
    await contender.close();
    await server.close();
  }
}

/** The shapes the section runs, with GitHub's ordinary calls alone as a reference after GitHub. */
export function scopeScenarios(): ShapeScenario[] {
  const list: ShapeScenario[] = [];
  for (const scenario of shapeScenarios()) {
    list.push(scenario);
    // The issue's first target reads the ordinary calls against their time with no searches.
    if (scenario.id === 'github') {
      list.push({
        ...scenario,
        id: 'github-alone',
        name: 'GitHub, the ordinary calls alone (reference)',
        workers: scenario.workers.filter((w) => w.name === 'ordinary'),
      });
    }
  }
  return list;
}

/** The contenders of a shape: LimitedClient and ky, and the dialect's own library where there is one. */
export function contendersOf(scenario: ShapeScenario): Make[] {
  const makes: Make[] = [limitedClient, kyContender];
  if (scenario.id.startsWith('github')) makes.push(octokitContender);
  if (scenario.id === 'discord') makes.push(discordContender);
  return makes;
}

/** Runs contender number `index` of `contendersOf` on the shape whose id is `id`. */
export function runByIndex(id: string, index: number): Promise<ScopesResult> {
  const scenario = scopeScenarios().find((s) => s.id === id);
  const make = scenario && contendersOf(scenario)[index];
  if (scenario === undefined || make === undefined) {
    return Promise.reject(new Error(`no contender ${index} on shape ${id}`));
  }
  return runOne(scenario, make);
}

/** How the contenders of a shape run: all at once in this process, or one at a time, each apart. */
export type ScopesMode = 'together' | 'apart';

const CHILD = fileURLToPath(new URL('./scopes-child.ts', import.meta.url));
/** What the child prints before its result's JSON, on a line of its own. */
export const RESULT_MARK = 'scopes-result ';

/**
 * Runs one contender and its server in a child process of its own (see scopes-child.ts), so that
 * no other contender, server or bench shares its event loop.
 */
function runApart(id: string, index: number): Promise<ScopesResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, id, String(index)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      out += chunk;
    });
    child.once('error', reject);
    child.once('close', (code) => {
      const line = out.split('\n').find((l) => l.startsWith(RESULT_MARK));
      if (code === 0 && line !== undefined) {
        resolve(JSON.parse(line.slice(RESULT_MARK.length)) as ScopesResult);
      } else {
        reject(new Error(`${id} #${index}: child exited ${code}\n${out}`));
      }
    });
  });
}

/**
 * Runs every shape (or those whose id or name contains `only`) with LimitedClient and ky, plus
 * the dialect's own library where there is one, printing a line per shape as it ends. `together`:
 * the contenders of a shape side by side in this process, each with its own server; `apart`: one
 * at a time, each with its server in a child process of its own.
 */
export async function scopes(
  only?: string,
  mode: ScopesMode = 'together',
  rounds = 1,
): Promise<ScopesResult[]> {
  const results: ScopesResult[] = [];
  for (let round = 1; round <= rounds; round++) {
    for (const scenario of scopeScenarios()) {
      if (only !== undefined && !`${scenario.id} ${scenario.name}`.includes(only)) continue;
      const makes = contendersOf(scenario);
      const runs: ScopesResult[] = [];
      if (mode === 'apart') {
        for (let i = 0; i < makes.length; i++) runs.push(await runApart(scenario.id, i));
      } else {
        runs.push(...(await Promise.all(makes.map((make) => runOne(scenario, make)))));
      }
      for (const r of runs) r.round = round;
      results.push(...runs);
      console.log(
        `  ${rounds > 1 ? `round ${round}: ` : ''}${scenario.id} (least ${(leastMs(scenario) / 1000).toFixed(1)} s): ` +
          runs
            .map(
              (r) =>
                `${r.client} ${r.ok}/${r.calls} ok, ${(r.elapsedMs / 1000).toFixed(1)} s, ${r.refusals} refusals`,
            )
            .join('; '),
      );
    }
  }
  return results;
}

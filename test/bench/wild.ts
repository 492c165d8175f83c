/**
 * The "wild" section of `npm run bench` (issue 13, item 6): the contenders against limiters that
 * nobody here wrote, or that answer in a provider's dialect rather than the mock server's:
 *
 * - nginx `limit_req` 10 r/s, burst 5, nodelay, with `limit_req_status 429` and with its default
 *   503 (no rate-limit headers, no Retry-After; real nginx, see test/peers/nginx.ts);
 * - a declared primary quota (IETF RateLimit fields with room to spare) plus an undeclared
 *   secondary limit on writes answered `429 + Retry-After: 1` (2 POSTs a second; 10 POSTs);
 * - the same secondary limit GitHub-style: `403 + retry-after: 1` with `x-ratelimit-*`;
 * - Reddit-style decimal counts (`x-ratelimit-remaining: 9.0`, `-used`, `-reset` in seconds), 10
 *   requests per 2 s window, plain 429s;
 * - koa-ratelimit, 10 per 1 s window (`Retry-After: 0`, fractional epoch reset);
 * - HAProxy's stick table, 20 per 10 s and 20 per 4 s (`http_req_rate` with `deny`): a bare 429,
 *   and every refused request counts against the client (real HAProxy, see test/peers/haproxy.ts).
 * - Flask-Limiter, 10 per 2 s (its default fixed window, which starts at the first hit; the
 *   reset it announces is up to a second late, `Retry-After` truncated; real Python, see
 *   test/peers/flask-limiter.ts).
 *
 * Each contender runs against its own instance of the scenario's server, all contenders of a
 * scenario at the same time. Cells as in the goodput section: elapsed over the theoretical
 * minimum (N - B) / R, where B is what the limiter admits at once and R its sustained rate per
 * second (HAProxy: period x N / limit, since its burst fills the first period: see
 * `haproxyLeastMs`); rejections the server sent (any non-2xx); attempts per request
 * (server-side); calls that did not end on a 2xx.
 */

import { startRedditStyle, startSecondaryLimit } from '../peers/api-styles.js';
import { admitted, type PeerServer, rejected } from '../peers/counting.js';
import { runBatch } from '../peers/drive.js';
import { flaskLimiterUnavailable, startFlaskLimiter } from '../peers/flask-limiter.js';
import { haproxyLeastMs, haproxyUnavailable, startHaproxy } from '../peers/haproxy.js';
import { nginxUnavailable, startNginx } from '../peers/nginx.js';
import { startKoa } from '../peers/node-limiters.js';
import type { Contender, LimitedContender } from './lib/peers.js';

/** One scenario: a server to start per contender and the batch to run against it. */
interface WildScenario {
  name: string;
  method: 'GET' | 'POST';
  requests: number;
  concurrency: number;
  /** Requests the limiter admits at once from rest. */
  burst: number;
  /** Requests per second it admits after that. */
  rate: number;
  start(): Promise<PeerServer>;
  /** The least time, in milliseconds, when it is not (requests - burst) / rate. */
  minimumMs?: number;
  nginx?: boolean;
  haproxy?: boolean;
  flask?: boolean;
}

/** One contender's figures in one scenario. */
export interface WildResult {
  scenario: string;
  client: string;
  requests: number;
  ok: number;
  /** Calls that did not end on a 2xx, by final status (0: refused or no response). */
  failedByStatus: Record<string, number>;
  /** LimitedClient only: why calls ended without a status (error code, unreadable body). */
  problems?: Record<string, number>;
  elapsedMs: number;
  minimumMs: number;
  ratio: number;
  rejections: number;
  attemptsPerRequest: number;
}

function scenarios(quick: boolean): WildScenario[] {
  const n = quick ? 50 : 100;
  return [
    {
      name: 'nginx limit_req 429',
      method: 'GET',
      requests: n,
      concurrency: 10,
      burst: 6,
      rate: 10,
      start: () => startNginx({ status: 429 }),
      nginx: true,
    },
    {
      name: 'nginx limit_req 503',
      method: 'GET',
      requests: n,
      concurrency: 10,
      burst: 6,
      rate: 10,
      start: () => startNginx({ status: 503 }),
      nginx: true,
    },
    {
      name: 'declared policy + secondary 429 Retry-After: 1 (POST)',
      method: 'POST',
      requests: 10,
      concurrency: 10,
      burst: 2,
      rate: 2,
      start: () => startSecondaryLimit({ style: '429' }),
    },
    {
      name: 'GitHub-style secondary 403 retry-after: 1 (POST)',
      method: 'POST',
      requests: 10,
      concurrency: 10,
      burst: 2,
      rate: 2,
      start: () => startSecondaryLimit({ style: 'github' }),
    },
    {
      name: 'Reddit-style decimal counts',
      method: 'GET',
      requests: 30,
      concurrency: 10,
      burst: 10,
      rate: 5,
      start: () => startRedditStyle({ limit: 10, windowMs: 2000 }),
    },
    {
      name: 'koa-ratelimit',
      method: 'GET',
      requests: n,
      concurrency: 10,
      burst: 10,
      rate: 10,
      start: () => startKoa({ limit: 10, windowMs: 1000 }),
    },
    ...[10_000, 4000].map(
      (periodMs): WildScenario => ({
        name: `HAProxy stick table, 20 per ${periodMs / 1000} s, refusals counted`,
        method: 'GET',
        requests: 60,
        concurrency: 10,
        burst: 20,
        rate: 20000 / periodMs,
        minimumMs: haproxyLeastMs({ periodMs, limit: 20 }, 60),
        start: () => startHaproxy({ periodMs, limit: 20 }),
        haproxy: true,
      }),
    ),
    {
      name: 'Flask-Limiter 10 per 2 s',
      method: 'GET',
      requests: quick ? 40 : 60,
      concurrency: 10,
      burst: 10,
      rate: 5,
      start: () => startFlaskLimiter({ limit: '10 per 2 seconds' }),
      flask: true,
    },
  ];
}

const DEADLINE_MS = 240_000;

async function runOne(scenario: WildScenario, contender: Contender): Promise<WildResult> {
  const server = await scenario.start();
  let deadline: NodeJS.Timeout | undefined;
  try {
    const batch = await Promise.race([
      runBatch(scenario.requests, scenario.concurrency, (i) => {
        const url = `${server.url}/items/${i}`;
        return scenario.method === 'GET'
          ? contender.get(url)
          : contender.post(url, JSON.stringify({ item: i }));
      }),
      new Promise<never>((_, reject) => {
        deadline = setTimeout(
          () => reject(new Error(`${contender.name} on ${scenario.name}: over ${DEADLINE_MS} ms`)),
          DEADLINE_MS,
        );
      }),
    ]);
    await contender.close?.();
    await server.close();
    const minimumMs =
      scenario.minimumMs ?? ((scenario.requests - scenario.burst) / scenario.rate) * 1000;
    const problems = (contender as Partial<LimitedContender>).problems;
    return {
      scenario: scenario.name,
      client: contender.name,
      requests: scenario.requests,
      ok: batch.ok,
      failedByStatus: Object.fromEntries(batch.failed),
      ...(problems ? { problems: Object.fromEntries(problems) } : {}),
      elapsedMs: Math.round(batch.elapsedMs),
      minimumMs,
      ratio: batch.elapsedMs / minimumMs,
      rejections: rejected(server),
      attemptsPerRequest: (admitted(server) + rejected(server)) / scenario.requests,
    };
  } finally {
    clearTimeout(deadline);
    await server.close();
  }
}

/**
 * Runs every scenario with every contender (fresh ones from `factories` per scenario), printing
 * one line per scenario as it ends. nginx, HAProxy and Flask-Limiter scenarios are skipped, with
 * the reason in `skipped`, where they cannot run. `only`: the scenarios whose name contains it.
 */
export async function wild(
  factories: (() => Contender)[],
  quick: boolean,
  only?: string,
): Promise<{ results: WildResult[]; skipped: string[] }> {
  const results: WildResult[] = [];
  const skipped: string[] = [];
  const noNginx = await nginxUnavailable();
  const noHaproxy = await haproxyUnavailable();
  const noFlask = await flaskLimiterUnavailable();
  for (const scenario of scenarios(quick)) {
    if (only !== undefined && !scenario.name.includes(only)) continue;
    const missing =
      (scenario.nginx && noNginx) ||
      (scenario.haproxy && noHaproxy) ||
      (scenario.flask && noFlask) ||
      undefined;
    if (missing !== undefined) {
      skipped.push(`${scenario.name}: ${missing}`);
      console.log(`  ${scenario.name}: SKIPPED, it cannot run here (${missing})`);
      continue;
    }
    const runs = await Promise.all(factories.map((make) => runOne(scenario, make())));
    results.push(...runs);
    console.log(
      `  ${scenario.name}: ` +
        runs
          .map(
            (r) =>
              `${r.client} ${r.ok}/${r.requests} ok, ${(r.elapsedMs / 1000).toFixed(1)} s, ${r.rejections} rejections`,
          )
          .join('; '),
    );
  }
  return { results, skipped };
}

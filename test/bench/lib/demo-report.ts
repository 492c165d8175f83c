/**
 * The demo's words and numbers, apart from its I/O so that they can be tested: its flags, its
 * progress line and its table. A call that did not succeed is never counted as done, and a
 * contender's time is read against the least time for the calls it completed, next to how many
 * failed (a loop that gives up early is not fast).
 */
import { parseArgs } from 'node:util';
import type { ScopesDialect } from './demo-scopes.js';
import { fixed } from './table.js';

/** The demo's flags. */
export interface DemoOptions {
  /** Calls per contender, all fired at once. */
  n: number;
  /** The server's sustained rate, requests per second. */
  rate: number;
  /** What the server admits at once from rest. */
  burst: number;
  /** Where the SVG chart goes. */
  svg: string;
  /** Run the scoped route set (two budgets on one host) in this dialect instead; off by default. */
  scopes?: ScopesDialect;
  /** Leave the mock server and its dashboard up after the table, until Ctrl-C; set only when asked. */
  keep?: true;
}

export const DEMO_USAGE = `Usage: npm run demo -- [--n 120] [--rate 20] [--burst 20] [--svg test/bench/results/demo.svg] [--keep]

Fires the same N GETs at once at the mock server (a token bucket of --rate requests/s holding
--burst, declared in the IETF RateLimit fields), through LimitedClient and through fetch with the
retry loop people write first; prints a table and writes an SVG chart. The server's dashboard
(its URL is printed) shows both contenders live while the demo runs.

  --n      calls per contender, a positive integer (default 120)
  --rate   the server's rate, requests per second, a positive integer (default 20)
  --burst  what the server admits at once, a positive integer at most --n (default 20)
  --svg    where to write the chart (default test/bench/results/demo.svg)
  --keep   leave the server and its dashboard up after the table, until Ctrl-C (not with
           --scopes, whose servers have no dashboard)
  --scopes github | ietf: instead, one host with two budgets (issue 26): --n GETs of
           /orders/:id at --rate a second and a quarter as many of /search at a quarter of
           the rate, each a fixed window of 1 s named in GitHub's x-ratelimit-resource or the
           IETF policy name and pk, all fired at once; each route read against the least time
           its own budget allows (--burst and --svg unused)
  --help   this text`;

/** The demo's flags from `argv`, its usage for `--help`, or what is wrong with them. */
export function parseDemoArgs(
  argv: string[],
): { options: DemoOptions } | { help: string } | { error: string } {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        n: { type: 'string', default: '120' },
        rate: { type: 'string', default: '20' },
        burst: { type: 'string', default: '20' },
        svg: { type: 'string', default: 'test/bench/results/demo.svg' },
        scopes: { type: 'string' },
        keep: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    }));
  } catch (error) {
    return { error: (error as Error).message };
  }
  if (values.help) return { help: DEMO_USAGE };
  const n = Number(values.n);
  const rate = Number(values.rate);
  const burst = Number(values.burst);
  if (![n, rate, burst].every((v) => Number.isInteger(v) && v > 0) || burst > n) {
    return {
      error: `--n, --rate and --burst must be positive integers, with burst <= n (got --n ${values.n} --rate ${values.rate} --burst ${values.burst})`,
    };
  }
  const options: DemoOptions = { n, rate, burst, svg: values.svg as string };
  if (values.keep) options.keep = true;
  if (values.scopes !== undefined) {
    if (values.scopes !== 'github' && values.scopes !== 'ietf') {
      return { error: `--scopes must be github or ietf (got ${String(values.scopes)})` };
    }
    options.scopes = values.scopes;
  }
  return { options };
}

/** A contender's progress: calls answered, those that succeeded and failed, attempts, 429s. */
export interface Progress {
  name: string;
  calls: number;
  succeeded: number;
  failed: number;
  attempts: number;
  rejected: number;
  elapsedMs: number;
}

/** `LimitedClient: 42 ok, 3 failed of 120, 57 attempts, 12 × 429, 1.3 s`. */
export function progressLine(p: Progress): string {
  const failed = p.failed > 0 ? `, ${p.failed} failed` : '';
  return `  ${p.name}: ${p.succeeded} ok${failed} of ${p.calls}, ${p.attempts} attempts, ${p.rejected} × 429, ${(p.elapsedMs / 1000).toFixed(1)} s`;
}

/** The least time for `calls` successes against `rate`/s with a burst of `burst`, ms. */
export function leastTimeMs(calls: number, rate: number, burst: number): number {
  return (Math.max(0, calls - burst) / rate) * 1000;
}

/**
 * elapsed / least time for the calls that succeeded; `-` when the burst alone covers them (no
 * least time to read against).
 */
export function elapsedOverLeast(
  elapsedMs: number,
  succeeded: number,
  rate: number,
  burst: number,
): string {
  const least = leastTimeMs(succeeded, rate, burst);
  return least > 0 ? fixed(elapsedMs / least, 2) : '-';
}

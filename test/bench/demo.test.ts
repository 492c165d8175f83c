/**
 * Issue 23, section 4: the demo (`npm run demo`, test/bench/demo.ts) through its pure parts.
 *
 * - its progress line said `120/120 done` when 42 succeeded: it counts successes and failures;
 * - its table read "elapsed / minimum 0.25" for the naive loop (which gave up on most calls)
 *   against 1.03 for the client: a contender is read against the least time for the calls it
 *   completed, with the failed ones in a column of their own;
 * - `npm run demo -- --help` crashed with a stack trace: it prints its usage, and a bad flag its
 *   message;
 * - the chart's sustained-rate line sat on the axis beside the naive loop's bars, and the last
 *   panel's labels lay over its lines.
 *
 * - `npm run demo` serves the mock server's dashboard while it runs (issue 27, item 5): one server,
 *   a route and a bucket per contender, so the page shows both side by side; `--keep` leaves it up.
 *
 * `npm run demo -- --rate 50 --burst 10` within 1.1x of the least time is checked on fake time in
 * test/client/rules/declared-goodput.test.ts (and measured in docs/benchmarks.md).
 */
import { describe, expect, it } from 'vitest';
import { createMockServer } from '../../src/server/index.js';
import { FakeClock } from '../server/http/helpers.js';
import { renderChart } from './lib/chart.js';
import { elapsedOverLeast, parseDemoArgs, progressLine } from './lib/demo-report.js';
import { leastWindowedMs, scopedRoutes, scopedServerConfig } from './lib/demo-scopes.js';
import {
  DEMO_PREFIXES,
  type DemoContender,
  demoRouteLabel,
  demoServerConfig,
} from './lib/demo-server.js';
import type { Bin } from './lib/timeline.js';

describe('the demo', () => {
  it('its progress line counts the calls that succeeded and those that failed', () => {
    const line = progressLine({
      name: 'fetch + naive retry',
      calls: 120,
      succeeded: 42,
      failed: 78,
      attempts: 970,
      rejected: 928,
      elapsedMs: 1300,
    });
    expect(line).toBe(
      '  fetch + naive retry: 42 ok, 78 failed of 120, 970 attempts, 928 × 429, 1.3 s',
    );
    expect(line).not.toContain('120/120');
  });

  it('reads a loop that gave up against the least time for what it completed', () => {
    // 42 of 120 in 1.3 s against 20/s with a burst of 20: the least time for 42 is 1.1 s.
    expect(elapsedOverLeast(1300, 42, 20, 20)).toBe('1.18');
    // The client: all 120 in 5.15 s, least time 5 s.
    expect(elapsedOverLeast(5150, 120, 20, 20)).toBe('1.03');
    // Nothing past the burst: no least time to read against.
    expect(elapsedOverLeast(300, 15, 20, 20)).toBe('-');
  });

  it('--help prints its usage; a bad flag says what is wrong, no stack trace', () => {
    const help = parseDemoArgs(['--help']);
    expect(help).toHaveProperty('help');
    expect((help as { help: string }).help).toContain('--rate');
    expect(parseDemoArgs(['--bogus'])).toEqual({ error: expect.stringContaining('--bogus') });
    expect(parseDemoArgs(['--rate', '0'])).toEqual({
      error: expect.stringContaining('positive integers'),
    });
    expect(parseDemoArgs(['--rate', '50', '--burst', '10'])).toEqual({
      options: { n: 120, rate: 50, burst: 10, svg: 'test/bench/results/demo.svg' },
    });
  });

  describe('its dashboard (issue 27, item 5)', () => {
    it('--keep is set only when asked for', () => {
      expect(parseDemoArgs(['--keep'])).toEqual({
        options: { n: 120, rate: 20, burst: 20, svg: 'test/bench/results/demo.svg', keep: true },
      });
      expect(parseDemoArgs([])).not.toHaveProperty('options.keep');
      expect((parseDemoArgs(['--help']) as { help: string }).help).toContain('--keep');
    });

    it('one server, a bucket per contender, both on its dashboard', async () => {
      const server = await createMockServer(demoServerConfig(1, 2));
      try {
        const get = async (contender: DemoContender, i: number) => {
          const response = await fetch(`${server.url}${DEMO_PREFIXES[contender]}/orders/${i}`);
          await response.arrayBuffer();
          return response.status;
        };
        // The naive loop's bucket spent: the client's is still full, as on a server of its own.
        const naive = [await get('naive', 1), await get('naive', 2), await get('naive', 3)];
        const client = [await get('client', 1), await get('client', 2)];
        expect([naive, client]).toEqual([
          [200, 200, 429],
          [200, 200],
        ]);
        const stats = server.stats().routes;
        expect(stats[demoRouteLabel('naive')]).toMatchObject({ admitted: 2, rejected: 1 });
        expect(stats[demoRouteLabel('client')]).toMatchObject({ admitted: 2, rejected: 0 });
        const page = await fetch(`${server.url}/__dashboard`);
        expect([page.status, (await page.text()).includes('<html')]).toEqual([200, true]);
        const data = (await (await fetch(`${server.url}/__dashboard/data`)).json()) as {
          routes: { route: string; admitted: number; rejected: number }[];
        };
        expect(data.routes.map((r) => [r.route, r.admitted, r.rejected])).toEqual([
          [demoRouteLabel('client'), 2, 0],
          [demoRouteLabel('naive'), 2, 1],
        ]);
      } finally {
        await server.close();
      }
    });
  });

  describe('its scoped route set (--scopes, issue 26)', () => {
    it('is off unless asked for; github or ietf, anything else said to be wrong', () => {
      expect(parseDemoArgs([])).toEqual({
        options: { n: 120, rate: 20, burst: 20, svg: 'test/bench/results/demo.svg' },
      });
      expect(parseDemoArgs(['--scopes', 'github'])).toMatchObject({
        options: { scopes: 'github' },
      });
      expect(parseDemoArgs(['--scopes', 'discord'])).toEqual({
        error: '--scopes must be github or ietf (got discord)',
      });
    });

    it('a quarter as many searches at a quarter of the rate, at least one', () => {
      expect(scopedRoutes(120, 20).map((r) => [r.name, r.calls, r.perWindow])).toEqual([
        ['orders', 120, 20],
        ['search', 30, 5],
      ]);
      expect(scopedRoutes(2, 1).map((r) => [r.calls, r.perWindow])).toEqual([
        [2, 1],
        [1, 1],
      ]);
    });

    it('the least time of a windowed budget: whole windows, less the part already gone', () => {
      expect(leastWindowedMs(40, 20, 1000, 5000)).toBe(1000);
      expect(leastWindowedMs(40, 20, 1000, 5950)).toBe(50);
      expect(leastWindowedMs(20, 20, 1000, 5000)).toBe(0);
      expect(leastWindowedMs(41, 20, 1000, 5000)).toBe(2000);
    });

    for (const dialect of ['github', 'ietf'] as const) {
      it(`${dialect}: the two routes are two budgets, each named`, async () => {
        // On a clock that stands still: on real time the 1 s window could turn between the fourth
        // order and the fifth (it did once, in CI under load), and the fifth was accepted.
        const config = scopedServerConfig(dialect, scopedRoutes(4, 4));
        const server = await createMockServer({ ...config, clock: new FakeClock() });
        try {
          for (let i = 0; i < 4; i++) await (await fetch(`${server.url}/orders/${i}`)).text();
          const spent = await fetch(`${server.url}/orders/9`);
          await spent.text();
          const search = await fetch(`${server.url}/search?q=1`);
          await search.text();
          expect([spent.status, search.status]).toEqual([429, 200]);
          const names =
            dialect === 'github'
              ? [spent, search].map((r) => r.headers.get('x-ratelimit-resource'))
              : [spent, search].map(
                  (r) => /^"(\w+)";.*;pk=:/.exec(r.headers.get('ratelimit') ?? '')?.[1],
                );
          expect(names).toEqual(['orders', 'search']);
        } finally {
          await server.close();
        }
      });
    }
  });

  describe('its chart', () => {
    const bins = (perBin: number[]): Bin[] =>
      perBin.map((n) => ({ ok: Math.min(n, 2), rejected: Math.max(0, n - 2), failed: 0 }));
    // 20/s in bins of 100 ms: 2 a bin; the naive loop sends 120 in its first bin.
    const svg = renderChart({
      title: 't',
      binMs: 100,
      ratePerSecond: 20,
      burst: 20,
      panels: [
        { label: 'LimitedClient', bins: bins([20, 2, 2, 2, 2]) },
        { label: 'naive', bins: bins([120, 60, 40, 0, 0]) },
      ],
    });
    const lines = (cls: string) =>
      [...svg.matchAll(new RegExp(`<line class="${cls}"[^>]* y1="([\\d.]+)"`, 'g'))].map((m) =>
        Number(m[1]),
      );

    it('draws the sustained rate a fifth of the panel or more above the axis', () => {
      const axes = lines('axis-x');
      const rates = lines('rate-line');
      expect(rates).toHaveLength(2);
      rates.forEach((y, i) => {
        // 220 px panels.
        expect((axes[i] as number) - y).toBeGreaterThanOrEqual(0.2 * 220);
      });
      // Cut bars carry their count.
      expect(svg).toContain('>120</text>');
    });

    it('puts the last panel’s legend under its axis, off its lines', () => {
      const axis = lines('axis-x').at(-1) as number;
      const legend = [...svg.matchAll(/<text class="legend"[^>]* y="([\d.]+)"/g)].map((m) =>
        Number(m[1]),
      );
      expect(legend).toHaveLength(2);
      for (const y of legend) expect(y).toBeGreaterThan(axis + 16);
      const height = Number(/<svg[^>]* height="([\d.]+)"/.exec(svg)?.[1]);
      for (const y of legend) expect(y).toBeLessThan(height);
    });
  });
});

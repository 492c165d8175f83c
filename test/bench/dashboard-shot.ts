/**
 * Regenerates docs/img/dashboard.png, the picture of the mock server's dashboard in
 * docs/observability.md and docs/mock-server.md: a mock server with `dashboard: true` on a fake
 * clock, a scripted load of three minutes of its time (three keys on a token bucket, one of them
 * bursting; searches over a fixed window), then the page in headless Chromium (playwright-core, as
 * test/server/http/dashboard.chromium.test.ts drives it), captured whole.
 *
 * The clock is fake so that the picture shows the same load and counts on every run and machine:
 * time moves only between the load's seconds, and the dashboard samples at the end of each of
 * them. Only the decision time differs (the server measures it on the real clock), and the
 * connections held (the fetch pool's).
 *
 *   npm run docs:dashboard -- [--out docs/img/dashboard.png] [--width 1000]
 *
 * Chromium: $LIMITED_CLIENT_CHROMIUM, else Debian's /usr/lib/chromium/chromium, /usr/bin/chromium...
 *
 * @module
 */
import { mkdir, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { createMockServer } from '../../src/server/index.js';
import { FakeClock, seeded } from '../client/helpers.js';
import { chromiumHere, launchChromium } from '../runtimes/chromium-launch.js';

const { values } = parseArgs({
  options: {
    out: { type: 'string', default: 'docs/img/dashboard.png' },
    width: { type: 'string', default: '1000' },
  },
});
const out = resolve(values.out as string);
const width = Number(values.width);
if (!Number.isInteger(width) || width < 400 || width > 3000) {
  console.error(`--width must be an integer from 400 to 3000 pixels (got ${values.width})`);
  process.exit(2);
}

// A fixed start (2026-12-06 12:00:00 UTC) so that the page's times are the same on every run.
const clock = new FakeClock(Date.UTC(2026, 11, 6, 12, 0, 0), 7);
const random = seeded(27);
const server = await createMockServer({
  clock,
  dashboard: true,
  routes: [
    {
      method: 'GET',
      path: '/v1/orders/:id',
      limits: [
        {
          algorithm: 'token-bucket',
          capacity: 20,
          refillPerSecond: 10,
          name: 'orders',
          key: { header: 'x-api-key' },
        },
      ],
    },
    {
      method: 'POST',
      path: '/v1/search',
      limits: [
        { algorithm: 'fixed-window', limit: 30, windowMs: 10_000, name: 'search', key: 'ip' },
      ],
    },
  ],
});

/** Requests per second of each key, at second `s` of the load. */
function plan(s: number): [path: string, method: string, key: string, count: number][] {
  const jitter = (n: number) => Math.max(0, Math.round(n + (random() - 0.5) * n * 0.4));
  return [
    ['/v1/orders/1', 'GET', 'team-alpha', jitter(6)],
    ['/v1/orders/2', 'GET', 'team-beta', jitter(3)],
    // A batch job that bursts far past its bucket for a minute, then backs off.
    ['/v1/orders/3', 'GET', 'nightly-export', s >= 60 && s < 120 ? jitter(18) : jitter(1)],
    ['/v1/search', 'POST', '', jitter(4)],
  ];
}

const SECONDS = 180;
for (let s = 0; s < SECONDS; s++) {
  const sends: Promise<unknown>[] = [];
  for (const [path, method, key, count] of plan(s)) {
    for (let i = 0; i < count; i++) {
      const headers = key === '' ? undefined : { 'x-api-key': key };
      sends.push(fetch(`${server.url}${path}`, { method, headers }).then((r) => r.arrayBuffer()));
    }
  }
  await Promise.all(sends);
  await clock.advance(1000);
}
const stats = server.stats();

const here = await chromiumHere();
if (!here.ok) {
  console.error(here.why);
  process.exit(1);
}
const browser = await launchChromium(here);
try {
  const page = await browser.newPage({ viewport: { width, height: 700 } });
  await page.goto(`${server.url}/__dashboard`);
  await page.waitForFunction(() => Number(document.body.dataset.renders ?? 0) >= 1, undefined, {
    timeout: 30_000,
  });
  await mkdir(dirname(out), { recursive: true });
  await page.screenshot({ path: out, fullPage: true });
} finally {
  await browser.close();
  await server.close();
}
const { size } = await stat(out);
console.log(
  `${out}: ${Math.round(size / 1024)} KiB, ${width} px wide, after ${SECONDS} s of load ` +
    `(${stats.admitted} admitted, ${stats.rejected} rejected)`,
);

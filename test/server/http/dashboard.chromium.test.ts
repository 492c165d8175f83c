/**
 * Issue 27, item 4: the mock server's dashboard in a real browser (Debian's Chromium, headless,
 * driven by `playwright-core`, as test/runtimes does). After a scripted load (admitted and
 * rejected requests on two routes, a key that is markup), the page shows per route the admitted
 * and rejected counts of `stats()`, its chart's bars add up to them, the top key is shown as text
 * (no element made of it), and the page loads nothing but itself and its JSON, with no CSP
 * violation. Where Chromium cannot run, this file says why and skips itself.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMockServer, type MockServer } from '../../../src/server/index.js';
import { chromiumHere, launchChromium } from '../../runtimes/chromium-launch.js';
import { RUN_TIMEOUT_MS, runtimeUnavailable } from '../../runtimes/harness.js';

const here = await chromiumHere();

/** A client key that is markup: the page must show it as text. */
const MARKUP_KEY = '<img src=x onerror="window.pwned=1">';

/** What the page shows of one route. */
interface Shown {
  route: string;
  admitted: number;
  rejected: number;
  barsAdmitted: number;
  barsRejected: number;
}

describe('the dashboard in Chromium', { timeout: RUN_TIMEOUT_MS }, () => {
  if (!here.ok) {
    runtimeUnavailable('Chromium (dashboard)', here.why);
    return;
  }
  let browser: import('playwright-core').Browser;
  let server: MockServer;
  beforeAll(async () => {
    server = await createMockServer({
      dashboard: true,
      routes: [
        {
          method: 'GET',
          path: '/items/:id',
          limits: [
            {
              algorithm: 'fixed-window',
              limit: 4,
              windowMs: 60_000,
              name: 'per-key',
              key: { header: 'x-api-key' },
            },
          ],
        },
        {
          method: 'POST',
          path: '/search',
          limits: [{ algorithm: 'token-bucket', capacity: 2, refillPerSecond: 0.001, name: 'b' }],
        },
      ],
    });
    browser = await launchChromium(here);
  }, RUN_TIMEOUT_MS);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('shows the admitted and rejected counts of stats(), per route and in its chart', async () => {
    // The load: 10 GETs for the markup key and 3 for another (limit 4 each), 5 POSTs (bucket of 2).
    const send = async (path: string, init: RequestInit) =>
      (await fetch(`${server.url}${path}`, init)).arrayBuffer();
    for (let i = 0; i < 10; i++)
      await send(`/items/${i}`, { headers: { 'x-api-key': MARKUP_KEY } });
    for (let i = 0; i < 3; i++) await send(`/items/${i}`, { headers: { 'x-api-key': 'k2' } });
    for (let i = 0; i < 5; i++) await send('/search', { method: 'POST' });

    const page = await browser.newPage();
    const requests: string[] = [];
    const problems: string[] = [];
    page.on('request', (r) => requests.push(r.url()));
    page.on('console', (m) => {
      if (m.type() === 'error' || m.type() === 'warning') problems.push(m.text());
    });
    page.on('pageerror', (e) => problems.push(String(e)));
    await page.goto(`${server.url}/__dashboard`);
    await page.waitForFunction(() => Number(document.body.dataset.renders ?? 0) >= 1, undefined, {
      timeout: 30_000,
    });
    const shown = await page.evaluate(() =>
      [...document.querySelectorAll<HTMLElement>('article.route')].map((card) => {
        const bars = [...card.querySelectorAll('svg.chart g')];
        const add = (name: string) =>
          bars.reduce((sum, g) => sum + Number(g.getAttribute(name) ?? 0), 0);
        return {
          route: card.dataset.route ?? '',
          admitted: Number(card.querySelector('.admitted')?.textContent),
          rejected: Number(card.querySelector('.rejected')?.textContent),
          barsAdmitted: add('data-admitted'),
          barsRejected: add('data-rejected'),
        };
      }),
    );
    const stats = server.stats();
    const expected: Shown[] = Object.entries(stats.routes).map(([route, r]) => ({
      route,
      admitted: r.admitted,
      rejected: r.rejected,
      barsAdmitted: r.admitted,
      barsRejected: r.rejected,
    }));
    expect(shown).toEqual(expected);
    expect(expected.map((r) => [r.admitted, r.rejected])).toEqual([
      [7, 6],
      [2, 3],
    ]);
    const totals = await page.evaluate(() => ({
      admitted: Number(document.getElementById('total-admitted')?.textContent),
      rejected: Number(document.getElementById('total-rejected')?.textContent),
    }));
    expect(totals).toEqual({ admitted: stats.admitted, rejected: stats.rejected });

    // The markup key is the heaviest, shown as text; nothing was made of it.
    const top = await page.evaluate(() => ({
      first: document.querySelector('#top-requests td')?.textContent,
      images: document.querySelectorAll('img').length,
      pwned: (window as unknown as { pwned?: number }).pwned,
    }));
    expect(top).toEqual({ first: `x-api-key:${MARKUP_KEY}`, images: 0, pwned: undefined });
    // The Retry-After histogram has a bar for each 429 sent.
    const retryAfter = await page.evaluate(() =>
      [...document.querySelectorAll('#retry-after g')].reduce(
        (sum, g) => sum + Number(g.getAttribute('data-count')),
        0,
      ),
    );
    expect(retryAfter).toBe(stats.rejected);
    // Offline: the page and its JSON, from the server itself; no CSP report, no script error.
    expect(requests.every((url) => url.startsWith(`${server.url}/__dashboard`))).toBe(true);
    expect(problems).toEqual([]);
    await page.close();
  });

  it('follows new traffic: the next poll shows it', async () => {
    const page = await browser.newPage();
    await page.goto(`${server.url}/__dashboard`);
    await page.waitForFunction(() => Number(document.body.dataset.renders ?? 0) >= 1);
    const before = server.stats().routes['POST /search']?.rejected ?? 0;
    for (let i = 0; i < 4; i++) {
      await (await fetch(`${server.url}/search`, { method: 'POST' })).arrayBuffer();
    }
    const after = server.stats().routes['POST /search']?.rejected ?? 0;
    expect(after).toBe(before + 4);
    await page.waitForFunction(
      (n) =>
        Number(
          document.querySelector('article[data-route="POST /search"] .rejected')?.textContent,
        ) === n,
      after,
      { timeout: 30_000 },
    );
    await page.close();
  });
});

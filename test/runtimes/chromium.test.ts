/**
 * The built core in a browser (issue 14, item 3): Debian's Chromium, headless, driven by
 * `playwright-core`. A page on one loopback origin loads the ESM build (`dist/index.js`, its
 * dependencies mapped by an import map, as a bundler-less page would) and runs `scenario.js`
 * against the mock server on another origin, which answers CORS (`cors` option). Three servers,
 * three answers to "what can a browser client learn":
 * - every rate-limit field exposed: it learns the policy and paces (0 x 429), honours the hold;
 * - none exposed: it sees status codes only, learns no policy and cannot honour `Retry-After`;
 * - `Retry-After` alone exposed: it honours the hold, still learns no policy.
 * A page has none of Node's globals: the core runs without them.
 *
 * Chromium comes from Debian (`apt-get install chromium`; `.ci/run` installs it). Where it cannot
 * run, this file says why and skips itself.
 */
import { createReadStream, existsSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize, sep } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CorsConfig, MockServer } from '../../src/server/index.js';
import { chromiumHere, launchChromium } from './chromium-launch.js';
import {
  deadUrl,
  expectCoreBehaviour,
  expectHoldHonoured,
  expectIdempotentRetry,
  expectNoNodeGlobalTouched,
  expectRefusedRetried,
  expectResetRetried,
  expectRetryAfterRead,
  logRun,
  ROOT,
  RUN_TIMEOUT_MS,
  requireBuiltCore,
  runtimeUnavailable,
  type ScenarioResult,
  startScenarioServer,
} from './harness.js';

const here = await chromiumHere();

/** What the page may load: the build, the core's one dependency, the scenario. */
const SERVED = new Map<string, string>([
  ['/dist/', join(ROOT, 'dist')],
  ['/node_modules/structured-headers/', join(ROOT, 'node_modules/structured-headers')],
  ['/test/runtimes/', join(ROOT, 'test/runtimes')],
]);

const PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>limited-client in a browser</title>
<script type="importmap">${JSON.stringify({
  imports: {
    'structured-headers': '/node_modules/structured-headers/dist/index.js',
  },
})}</script>
<script type="module">
import { runScenario, watchNodeGlobals } from '/test/runtimes/scenario.js';
// The watch goes on before the core is loaded, as in every other runtime.
window.runLimitedScenario = async (baseUrl, deadUrl) => {
  const watch = watchNodeGlobals();
  const core = await import('/dist/index.js');
  return runScenario(core, { baseUrl, deadUrl, watch });
};
window.scenarioReady = true;
</script></head><body>limited-client runtime test</body></html>`;

/** A static server for the page's origin: the page, and the files of {@link SERVED}. */
async function startPageServer(): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://page').pathname;
    if (path === '/') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE);
      return;
    }
    for (const [prefix, dir] of SERVED) {
      if (!path.startsWith(prefix)) continue;
      const file = normalize(join(dir, path.slice(prefix.length)));
      if (!file.startsWith(dir + sep) || !existsSync(file) || !statSync(file).isFile()) break;
      const type = extname(file) === '.js' ? 'text/javascript' : 'application/octet-stream';
      res.writeHead(200, { 'content-type': type });
      createReadStream(file).pipe(res);
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

describe('the built core in Chromium, calling the mock server cross-origin', {
  timeout: RUN_TIMEOUT_MS,
}, () => {
  if (!here.ok) {
    runtimeUnavailable('Chromium', here.why);
    return;
  }
  let page: Awaited<ReturnType<typeof startPageServer>>;
  let browser: import('playwright-core').Browser;
  beforeAll(async () => {
    requireBuiltCore();
    page = await startPageServer();
    browser = await launchChromium(here);
  }, RUN_TIMEOUT_MS);
  afterAll(async () => {
    await browser?.close();
    await page?.close();
  });

  /** Runs the scenario in a fresh page against a mock server with `cors`. */
  async function runInPage(
    cors: boolean | CorsConfig,
  ): Promise<{ result: ScenarioResult; server: MockServer; errors: string[] }> {
    const server = await startScenarioServer(cors);
    const context = await browser.newContext();
    const tab = await context.newPage();
    const errors: string[] = [];
    tab.on('pageerror', (error) => errors.push(String(error)));
    try {
      await tab.goto(page.url);
      // Strings, not functions: vitest would rewrite an `import()` in a function's source.
      await tab.waitForFunction('window.scenarioReady === true', undefined, { timeout: 60_000 });
      const result = (await tab.evaluate(
        `window.runLimitedScenario(${JSON.stringify(server.url)}, ${JSON.stringify(await deadUrl())})`,
      )) as ScenarioResult;
      const paced = server.stats().routes['GET /paced'];
      console.log(
        `chromium, cors ${JSON.stringify(cors)}: /paced ${paced?.admitted} admitted, ${paced?.rejected} x 429 (mode ${result.paced.mode}); /hold ${result.hold.rateLimited} x 429, ${result.hold.retries} retries (${result.hold.events.map((e) => e.delaySource ?? e.event).join(', ')}); reset: client retries ${JSON.stringify(result.reset.retries)}`,
      );
      logRun(`Chromium (cors ${JSON.stringify(cors)})`, result);
      return { result, server, errors };
    } finally {
      await context.close();
    }
  }

  it(`${here.version}, every rate-limit field exposed: reads them (paces, 0 x 429), honours the hold, retries a POST with its key, no Node global`, async () => {
    const { result, server, errors } = await runInPage(true);
    try {
      expect(errors).toEqual([]);
      expectCoreBehaviour(result, server.stats());
      expect(result.paced.ratelimitPolicyHeader).toContain('paced');
      // A page has none of Node's globals.
      expect(result.globals.present).toEqual([]);
    } finally {
      await server.close();
    }
  });

  it('nothing exposed: the client sees status codes only, learns no policy, cannot honour Retry-After', async () => {
    const { result, server, errors } = await runInPage({ exposeHeaders: false });
    try {
      expect(errors).toEqual([]);
      // The server sent the fields; the page could not read them.
      expect(result.paced.ratelimitPolicyHeader).toBeNull();
      expect(result.paced.policies).toEqual([]);
      expect(result.paced.mode).not.toBe('declared');
      expect(result.hold.retryAfterHeader).toEqual([null, null]);
      // The 429 itself is seen (a status code is never hidden), without its time.
      expect(result.hold.rateLimited).toBeGreaterThanOrEqual(1);
      const pushback = result.hold.events.find((e) => e.event === 'rate-limited');
      expect(pushback?.status).toBe(429);
      expect(pushback?.retryAfterMs).toBeUndefined();
      const retries = result.hold.events.filter((e) => e.event === 'retry');
      expect(retries.some((e) => e.delaySource === 'retry-after')).toBe(false);
      // Idempotency needs no response field: one side effect, the replay's body; the
      // `Idempotent-Replayed` marker itself is hidden.
      expectIdempotentRetry(result, server.stats());
      expect(result.idempotent.replayedHeader).toBeNull();
      expectResetRetried(result, server.stats());
      expectRefusedRetried(result);
      expectNoNodeGlobalTouched(result);
    } finally {
      await server.close();
    }
  });

  it('Retry-After alone exposed: the client honours the hold, still learns no policy', async () => {
    const { result, server, errors } = await runInPage({ exposeHeaders: ['Retry-After'] });
    try {
      expect(errors).toEqual([]);
      // The server's policy stays unknown (a 429's Retry-After teaches a hold, not the policy).
      expect(result.paced.policies.map((p) => p.name)).not.toContain('paced');
      expect(result.paced.mode).not.toBe('declared');
      expect(result.paced.ratelimitPolicyHeader).toBeNull();
      expectHoldHonoured(result, server.stats());
      expectRetryAfterRead(result);
      expect(result.hold.events.find((e) => e.event === 'retry')?.delaySource).toBe('retry-after');
      expectIdempotentRetry(result, server.stats());
      expectResetRetried(result, server.stats());
      expectRefusedRetried(result);
      expectNoNodeGlobalTouched(result);
    } finally {
      await server.close();
    }
  });
});

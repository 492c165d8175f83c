/**
 * The built core in Bun (issue 14, item 3), its binary from the npm package `bun` (a dev
 * dependency; its postinstall links the platform package's binary, which is looked for too):
 * `scenario.js` in `bun run` against the mock server. Bun has Node's globals: the core reads none
 * of them.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, it } from 'vitest';
import type { MockServer } from '../../src/server/index.js';
import {
  findBinary,
  ROOT,
  RUN_TIMEOUT_MS,
  requireBuiltCore,
  runScenario,
  runtimeUnavailable,
  startScenarioServer,
} from './harness.js';

const candidates = [
  process.env.LIMITED_CLIENT_BUN ?? '',
  join(ROOT, 'node_modules/bun/bin/bun.exe'),
  join(ROOT, 'node_modules/@oven/bun-linux-x64/bin/bun'),
  join(ROOT, 'node_modules/@oven/bun-linux-x64-baseline/bin/bun'),
  join(ROOT, 'node_modules/@oven/bun-linux-aarch64/bin/bun'),
  join(ROOT, 'node_modules/@oven/bun-darwin-aarch64/bin/bun'),
  join(ROOT, 'node_modules/@oven/bun-darwin-x64/bin/bun'),
].filter((p) => p !== '');
const bun = await findBinary(candidates);

describe('the built core in Bun', { timeout: RUN_TIMEOUT_MS }, () => {
  if (bun === undefined) {
    runtimeUnavailable(
      'Bun',
      `no runnable bun binary (looked for ${candidates.join(', ')}); npm ci installs it`,
    );
    return;
  }
  let server: MockServer;
  beforeAll(async () => {
    requireBuiltCore();
    server = await startScenarioServer();
  });
  afterAll(() => server?.close());

  it(`Bun ${bun.version}: reads the headers, honours a hold, retries a POST with its key, touches no Node-only global`, async () => {
    await runScenario(`Bun ${bun.version}`, bun.path, (entry) => ['run', entry], server, {
      NO_COLOR: '1',
      BUN_RUNTIME_TRANSPILER_CACHE_PATH: '0',
    });
  });
});

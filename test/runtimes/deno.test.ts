/**
 * The built core in Deno (issue 14, item 3), its binary from the npm package `deno` (a dev
 * dependency): `scenario.js` in `deno run` with network access to the loopback only, against the
 * mock server, `node_modules` used as npm left it (`--node-modules-dir=manual`). Deno 2 has some of
 * Node's globals (`process`, `Buffer`, `setImmediate`), not others (`require`, `__dirname`): the
 * core reads none of them.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
  process.env.LIMITED_CLIENT_DENO ?? '',
  join(ROOT, 'node_modules/deno/deno'),
  join(ROOT, 'node_modules/@deno/linux-x64-glibc/deno'),
  join(ROOT, 'node_modules/@deno/linux-arm64-glibc/deno'),
  join(ROOT, 'node_modules/@deno/darwin-x64/deno'),
  join(ROOT, 'node_modules/@deno/darwin-arm64/deno'),
].filter((p) => p !== '');
const deno = await findBinary(candidates);

describe('the built core in Deno', { timeout: RUN_TIMEOUT_MS }, () => {
  if (deno === undefined) {
    runtimeUnavailable(
      'Deno',
      `no runnable deno binary (looked for ${candidates.join(', ')}); npm ci installs it`,
    );
    return;
  }
  let server: MockServer;
  beforeAll(async () => {
    requireBuiltCore();
    server = await startScenarioServer();
  });
  afterAll(() => server?.close());

  it(`${deno.version}: reads the headers, honours a hold, retries a POST with its key, touches no Node-only global`, async () => {
    const result = await runScenario(
      deno.version,
      deno.path,
      (entry, dead) => [
        'run',
        '--no-lock',
        '--node-modules-dir=manual',
        '--no-prompt',
        `--allow-net=${new URL(server.url).host},${new URL(dead).host}`,
        `--allow-read=${ROOT}`,
        entry,
      ],
      server,
      { DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' },
    );
    // Deno 2 has `process`, `Buffer`, `global` and `setImmediate` as globals, not `require`.
    expect(result.globals.absent).toEqual(expect.arrayContaining(['require', '__dirname']));
  });
});

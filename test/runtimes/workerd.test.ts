/**
 * The built core in Cloudflare's workerd (issue 14, item 3), its binary from the npm package
 * `workerd` (a dev dependency). `workerd serve` runs a worker made of three modules: the scenario
 * (`scenario.js`, as every runtime runs it), a module that starts the watch on Node's globals, and
 * the core: `dist/index.js` with its one dependency bundled by esbuild into one module, as
 * wrangler bundles a worker for deployment (the core's code is not changed). A request to the
 * worker runs the scenario against the mock server; the worker's outbound network allows the
 * loopback (workerd's default allows public addresses only). Without the `nodejs_compat` flag a
 * worker has none of Node's globals: the core runs without them.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MockServer } from '../../src/server/index.js';
import {
  CORE,
  deadUrl,
  expectCoreBehaviour,
  findBinary,
  freePort,
  logRun,
  ROOT,
  RUN_TIMEOUT_MS,
  requireBuiltCore,
  runtimeUnavailable,
  SCENARIO,
  type ScenarioResult,
  startScenarioServer,
} from './harness.js';

const candidates = [
  process.env.LIMITED_CLIENT_WORKERD ?? '',
  join(ROOT, 'node_modules/@cloudflare/workerd-linux-64/bin/workerd'),
  join(ROOT, 'node_modules/@cloudflare/workerd-linux-arm64/bin/workerd'),
  join(ROOT, 'node_modules/@cloudflare/workerd-darwin-64/bin/workerd'),
  join(ROOT, 'node_modules/@cloudflare/workerd-darwin-arm64/bin/workerd'),
].filter((p) => p !== '');
const workerd = await findBinary(candidates);

/** The worker's compatibility date: the behaviour of workerd as of that day, no Node flags. */
const COMPATIBILITY_DATE = '2026-01-01';

const WORKER = `import { watch } from './watch.js';
import * as core from './limited-client-core.js';
import { runScenario } from './scenario.js';

export default {
  async fetch(request) {
    const url = new URL(request.url);
    if (url.pathname === '/ping') return new Response('ok');
    const baseUrl = url.searchParams.get('base');
    const result = await runScenario(core, { baseUrl, deadUrl: url.searchParams.get('dead'), watch });
    return Response.json(result);
  },
};
`;

// Evaluated before the core (imports run in order): the watch is on when the core loads.
const WATCH = `import { watchNodeGlobals } from './scenario.js';
export const watch = watchNodeGlobals();
`;

function capnp(port: number): string {
  return `using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [
    (name = "main", worker = .worker),
    (name = "loopback", network = (allow = ["public", "private", "local"])),
  ],
  sockets = [(name = "http", address = "127.0.0.1:${port}", http = (), service = "main")],
);

const worker :Workerd.Worker = (
  modules = [
    (name = "worker.js", esModule = embed "worker.js"),
    (name = "watch.js", esModule = embed "watch.js"),
    (name = "scenario.js", esModule = embed "scenario.js"),
    (name = "limited-client-core.js", esModule = embed "limited-client-core.js"),
  ],
  compatibilityDate = "${COMPATIBILITY_DATE}",
  globalOutbound = "loopback",
);
`;
}

describe('the built core in workerd', { timeout: RUN_TIMEOUT_MS }, () => {
  if (workerd === undefined) {
    runtimeUnavailable(
      'workerd',
      `no runnable workerd binary (looked for ${candidates.join(', ')}); npm ci installs it`,
    );
    return;
  }
  let server: MockServer;
  let dir: string;
  let child: ChildProcess | undefined;
  let output = '';
  let workerUrl: string;

  beforeAll(async () => {
    requireBuiltCore();
    server = await startScenarioServer();
    dir = await mkdtemp(join(tmpdir(), 'limited-client-workerd-'));
    execFileSync(join(ROOT, 'node_modules/.bin/esbuild'), [
      CORE,
      '--bundle',
      '--format=esm',
      '--platform=browser',
      '--conditions=workerd,worker,browser',
      '--log-level=error',
      `--outfile=${join(dir, 'limited-client-core.js')}`,
    ]);
    await copyFile(SCENARIO, join(dir, 'scenario.js'));
    await writeFile(join(dir, 'worker.js'), WORKER);
    await writeFile(join(dir, 'watch.js'), WATCH);
    const port = await freePort();
    await writeFile(join(dir, 'config.capnp'), capnp(port));
    child = spawn(workerd.path, ['serve', join(dir, 'config.capnp'), '--verbose'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (chunk) => {
      output += chunk;
    });
    child.stderr?.on('data', (chunk) => {
      output += chunk;
    });
    workerUrl = `http://127.0.0.1:${port}`;
    // Ready when the worker answers; workerd exiting first is a failure with its output.
    for (let i = 0; ; i++) {
      if (child.exitCode !== null)
        throw new Error(`workerd exited (${child.exitCode}):\n${output}`);
      const answer = await fetch(`${workerUrl}/ping`).catch(() => undefined);
      if (answer?.ok) break;
      if (i >= 600) throw new Error(`workerd did not answer on ${workerUrl} in 60 s:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }, RUN_TIMEOUT_MS);

  afterAll(async () => {
    if (child !== undefined && child.exitCode === null) {
      const exited = new Promise((resolve) => child?.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    await server?.close();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it(`${workerd.version}: reads the headers, honours a hold, retries a POST with its key, touches no Node-only global`, async () => {
    const query = new URLSearchParams({ base: server.url, dead: await deadUrl() });
    const answer = await fetch(`${workerUrl}/run?${query}`);
    const text = await answer.text();
    expect(answer.status, `${text}\n${output}`).toBe(200);
    const result = JSON.parse(text) as ScenarioResult;
    logRun(workerd.version, result);
    expectCoreBehaviour(result, server.stats());
    // A worker without nodejs_compat has none of Node's globals.
    expect(result.globals.present).toEqual([]);
  });
});

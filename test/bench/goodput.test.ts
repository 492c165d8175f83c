/**
 * The goodput benchmark's command line (`npm run bench:goodput`): `--help` printed a stack trace
 * (`ERR_PARSE_ARGS_UNKNOWN_OPTION`) where the sweep's docs send readers to it; a bad flag is one
 * line naming it. Runs the script as npm does, without starting a benchmark.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const script = fileURLToPath(new URL('./goodput.ts', import.meta.url));
const tsx = fileURLToPath(new URL('../../node_modules/.bin/tsx', import.meta.url));

function run(...args: string[]) {
  return spawnSync(tsx, [script, ...args], { encoding: 'utf8', timeout: 60_000 });
}

describe('bench:goodput', () => {
  it('--help lists the options, the sweep and its algorithms, and exits 0', () => {
    const { status, stdout, stderr } = run('--help');
    expect(stderr).not.toContain('ERR_PARSE_ARGS');
    expect(status).toBe(0);
    for (const flag of ['--sweep', '--rates', '--bursts', '--algorithms', '--seconds']) {
      expect(stdout).toContain(flag);
    }
    expect(stdout).toContain('sliding-window-counter');
  });

  it('an unknown flag is one line naming it, exit code 2', () => {
    const { status, stderr } = run('--algoritms', 'gcra');
    expect(status).toBe(2);
    expect(stderr).toContain("'--algoritms'");
    expect(stderr).not.toContain('    at ');
  });
});

/**
 * Every script under examples/ runs to completion, as a user would run it (`npx tsx
 * examples/<name>.ts`), against the in-repo mock server: an example that rots fails here. Each is
 * its own process, so one that leaves a timer or a socket open fails by not exiting.
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const examples = readdirSync(`${root}examples`).filter((f) => f.endsWith('.ts'));
const LIMIT_MS = 60_000;

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function runExample(file: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', `examples/${file}`], {
      cwd: root,
      env: process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: LIMIT_MS,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

describe('examples', () => {
  it('are the ones the README links to, each of them', () => {
    const readme = readFileSync(`${root}README.md`, 'utf8');
    const linked = new Set([...readme.matchAll(/examples\/([\w-]+\.ts)/g)].map((m) => m[1]));
    expect([...linked].sort()).toEqual([...examples].sort());
  });

  for (const file of examples) {
    it(
      `${file} runs to completion and prints what it did`,
      async () => {
        const run = await runExample(file);
        expect({ code: run.code, signal: run.signal, stderr: run.stderr.slice(-2000) }).toEqual({
          code: 0,
          signal: null,
          stderr: expect.any(String),
        });
        expect(run.stdout.trim().length).toBeGreaterThan(0);
      },
      LIMIT_MS + 5_000,
    );
  }
});

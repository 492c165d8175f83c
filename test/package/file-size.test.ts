/**
 * No client source file over 350 lines (issue 25): past that, a file does more than one job and a
 * reader loses the way in it. No exceptions.
 */
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { sourceFiles } from './import-cycles.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** The most lines a file under src/client may have. */
const MAX_LINES = 350;

/** Lines as `wc -l` counts them: the newlines, and a last line without one. */
function lineCount(text: string): number {
  if (text === '') return 0;
  const newlines = text.split('\n').length - 1;
  return text.endsWith('\n') ? newlines : newlines + 1;
}

/** The files of `files` over `max` lines (paths relative to the repository), with their lines. */
function overLong(files: readonly string[], read: (f: string) => string, max: number) {
  return files
    .map((f) => ({ path: relative(root, f), lines: lineCount(read(f)) }))
    .filter(({ lines }) => lines > max);
}

describe('file size', () => {
  const files = sourceFiles(join(root, 'src/client'));
  const read = (f: string) => readFileSync(f, 'utf8');

  it(`no file under src/client is over ${MAX_LINES} lines`, () => {
    expect(files.length).toBeGreaterThan(50);
    const offenders = overLong(files, read, MAX_LINES).map(
      ({ path, lines }) => `${path} (${lines})`,
    );
    expect(offenders).toEqual([]);
  });

  it('counts lines as wc -l does, and names a file one line over', () => {
    expect([
      lineCount(''),
      lineCount('a'),
      lineCount('a\n'),
      lineCount('a\nb'),
      lineCount('a\nb\n'),
    ]).toEqual([0, 1, 1, 2, 2]);
    const at = join(root, 'src/client/at.ts');
    const over = join(root, 'src/client/over.ts');
    const text: Record<string, string> = {
      [at]: 'x\n'.repeat(MAX_LINES),
      [over]: 'x\n'.repeat(MAX_LINES + 1),
    };
    expect(overLong([at, over], (f) => text[f] as string, MAX_LINES)).toEqual([
      { path: 'src/client/over.ts', lines: MAX_LINES + 1 },
    ]);
  });
});

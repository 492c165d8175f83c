/**
 * The tarball as npm would publish it (`npm pack`, after `npm run build`): what it holds, and
 * whether its types resolve for TypeScript users, checked by `@arethetypeswrong/cli` (attw).
 *
 * attw runs with `--profile node16`: TypeScript's `node10` resolution (`moduleResolution: "node"`)
 * is ignored, since it does not read `exports` and so cannot find the subpath entries
 * (`limited-client/server`, `limited-client/redis`); `node16`, `nodenext` and `bundler` must
 * resolve every entry, from ESM and from CJS, with no problem. No other rule is ignored.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { pack, ROOT as root } from './pack.js';

const dir = mkdtempSync(join(tmpdir(), 'limited-client-pack-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const packed = pack(dir);
const { tarball } = packed;

describe('the published tarball', () => {
  it('holds the build, the docs and examples the README links to, the license and package.json, and no source maps', () => {
    console.log(
      `${packed.filename}: ${(packed.size / 1000).toFixed(1)} kB packed, ` +
        `${(packed.unpackedSize / 1000).toFixed(1)} kB unpacked, ${packed.files.length} files`,
    );
    const paths = packed.files.map((f) => f.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        'LICENSE',
        'README.md',
        'CONTRIBUTING.md',
        'package.json',
        'dist/index.js',
        'docs/how-it-works.md',
        'examples/limited-client.ts',
      ]),
    );
    const shipped =
      /^(dist\/|docs\/|examples\/|LICENSE$|README\.md$|CONTRIBUTING\.md$|package\.json$)/;
    expect(paths.filter((p) => !shipped.test(p))).toEqual([]);
    expect(paths.filter((p) => p.endsWith('.map'))).toEqual([]);
  });

  it('builds before it is packed (prepack), so a fresh clone packs a whole package', () => {
    const scripts = (
      JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
        scripts: Record<string, string>;
      }
    ).scripts;
    expect(scripts.prepack).toBe('npm run build');
  });

  it('resolves its types for node16, nodenext and bundler users (attw --profile node16)', () => {
    const attw = join(root, 'node_modules/.bin/attw');
    // Exits non-zero on any problem the profile does not ignore.
    const out = execFileSync(attw, [tarball, '--profile', 'node16', '--format', 'json'], {
      cwd: root,
      encoding: 'utf8',
    });
    const problems = (
      JSON.parse(out) as { problems?: Record<string, { resolutionKind?: string }[]> }
    ).problems;
    const kept = Object.values(problems ?? {})
      .flat()
      .filter((p) => p.resolutionKind !== 'node10');
    expect(kept).toEqual([]);
  });
});

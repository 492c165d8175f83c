/**
 * `npm pack` of the built package into a folder, as npm would publish it. Scripts are not run:
 * `prepack` builds, and a build here would replace dist/ under the feet of the tests that import
 * it in parallel (the tests run after `npm run build`, which is what `prepack` would do).
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root. */
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** What `npm pack --json` says of the tarball. */
export interface Packed {
  filename: string;
  size: number;
  unpackedSize: number;
  files: { path: string; size: number }[];
  /** The tarball's absolute path. */
  tarball: string;
}

/** Packs the repository into `dir` and says what the tarball holds. */
export function pack(dir: string): Packed {
  const out = execFileSync(
    'npm',
    ['pack', '--json', '--ignore-scripts', '--pack-destination', dir],
    { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] },
  );
  const packed = (JSON.parse(out) as Omit<Packed, 'tarball'>[])[0] as Omit<Packed, 'tarball'>;
  return { ...packed, tarball: join(dir, packed.filename) };
}

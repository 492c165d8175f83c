/**
 * No import cycle in src/ (type-only imports included): a cycle makes the order modules load in
 * matter, and a reader who follows imports go round. The finder is proven on a graph that has one.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { cycles, drawCycle, importGraph, sourceFiles } from './import-cycles.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

describe('import cycles', () => {
  it('src/ has none', () => {
    const files = sourceFiles(join(root, 'src'));
    expect(files.length).toBeGreaterThan(50);
    const graph = importGraph(files);
    // The graph is real: the client's entry reaches its modules.
    expect(graph.get(join(root, 'src/client/index.ts'))?.length).toBeGreaterThan(0);
    expect(cycles(graph).map((c) => drawCycle(root, c))).toEqual([]);
  });

  it('finds a cycle, type-only and re-exports included, and leaves a tree alone', () => {
    const dir = join(root, 'src/client/options');
    const a = join(dir, 'resolve.ts');
    const b = join(dir, 'parts.ts');
    const c = join(dir, 'types.ts');
    const d = join(dir, 'clock-free.ts');
    const text: Record<string, string> = {
      [a]: "export { X } from './parts.js';\nimport './types.js';",
      [b]: "import type { Y } from './types.js';",
      [c]: "import type { Z } from './resolve.js';",
      [d]: "import { q } from 'node:fs';",
    };
    const graph = importGraph([a, b, c, d], (f) => text[f] as string);
    expect(graph.get(b)).toEqual([c]);
    const found = cycles(graph).map((cycle) => drawCycle(dir, cycle));
    expect(found).toEqual(['parts.ts -> types.ts -> resolve.ts -> parts.ts']);
    delete text[c];
    text[c] = 'export type Z = 1;';
    expect(cycles(importGraph([a, b, c, d], (f) => text[f] as string))).toEqual([]);
  });

  it('finds a file that imports itself', () => {
    const a = join(root, 'src/client/options/types.ts');
    const graph = importGraph([a], () => "import './types.js';");
    expect(cycles(graph)).toEqual([[a, a]]);
  });
});

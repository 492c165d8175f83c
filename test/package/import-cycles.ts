/**
 * Finds import cycles among TypeScript modules: every `import` and `export … from` with a relative
 * specifier, type-only ones included (a type cycle ties modules as much as a value one does when a
 * reader follows it), read with the TypeScript compiler's own pre-processor, resolved `./x.js` to
 * `./x.ts` or `./x/index.ts`.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

/** Every `.ts` file under `dir`, absolute. */
export function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(path));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) out.push(path);
  }
  return out.sort();
}

function resolveSpecifier(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const base = resolve(dirname(from), specifier);
  const stem = base.replace(/\.(c|m)?js$/, '');
  for (const candidate of [`${stem}.ts`, base, join(base, 'index.ts')]) {
    if (candidate.endsWith('.ts') && existsSync(candidate)) return candidate;
  }
  return undefined;
}

/** The graph of relative imports among `files`: file to the files it imports. */
export function importGraph(
  files: readonly string[],
  read: (file: string) => string = (f) => readFileSync(f, 'utf8'),
): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const { importedFiles } = ts.preProcessFile(read(file), true, false);
    const targets = new Set<string>();
    for (const { fileName } of importedFiles) {
      const target = resolveSpecifier(file, fileName);
      if (target !== undefined) targets.add(target);
    }
    graph.set(file, [...targets].sort());
  }
  return graph;
}

/**
 * The cycles of `graph`, one per strongly connected component of more than one file (or a file that
 * imports itself): each drawn as a path that starts and ends on the same file.
 */
export function cycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  // Tarjan's strongly connected components, then one cycle through each found by a search.
  let index = 0;
  const indices = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const visit = (v: string) => {
    indices.set(v, index);
    low.set(v, index);
    index++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!indices.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v) as number, indices.get(w) as number));
      }
    }
    if (low.get(v) === indices.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop() as string;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (graph.get(v) ?? []).includes(v)) components.push(component);
    }
  };
  for (const v of graph.keys()) if (!indices.has(v)) visit(v);
  return components.map((component) => cycleIn(graph, new Set(component)));
}

/** One cycle through the first file of a strongly connected component (breadth first: shortest). */
function cycleIn(graph: ReadonlyMap<string, readonly string[]>, within: Set<string>): string[] {
  const start = [...within].sort()[0] as string;
  const from = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const v = queue.shift() as string;
    for (const w of graph.get(v) ?? []) {
      if (!within.has(w)) continue;
      if (w === start) {
        const path = [start];
        for (let u = v; u !== start; u = from.get(u) as string) path.splice(1, 0, u);
        return [...path, start];
      }
      if (!from.has(w)) {
        from.set(w, v);
        queue.push(w);
      }
    }
  }
  return [start, start];
}

/** A cycle drawn with paths relative to `root`: `a.ts -> b.ts -> a.ts`. */
export function drawCycle(root: string, cycle: readonly string[]): string {
  return cycle.map((f) => relative(root, f)).join(' -> ');
}

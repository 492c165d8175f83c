/**
 * The public surface changes only on purpose. Every name each entry of the built package exports
 * (read from its declarations, `dist/**\/index.d.ts`) is listed with its kind in
 * `test/package/api.txt`; this test fails when the two differ, when what `import` and `require`
 * give at run time is not exactly the values of that list, or when an export has no doc comment.
 *
 * To change the surface on purpose: `npm run api:update` (build, then rewrite this list and the
 * signature reports of api-report.test.ts), then commit `api.txt` and `api/*.api.md` with the
 * change (and the README section that documents the name).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const reportFile = fileURLToPath(new URL('./api.txt', import.meta.url));
const UPDATE = 'npm run api:update';

const entries = {
  'limited-client': 'dist/index.d.ts',
  'limited-client/server': 'dist/server/index.d.ts',
  'limited-client/redis': 'dist/redis/index.d.ts',
  'limited-client/undici': 'dist/undici/index.d.ts',
} as const;
type Entry = keyof typeof entries;

interface Exported {
  name: string;
  /** `class`, `function`, `const`, `interface`, `type`; `class (type only)` for `export type`. */
  kind: string;
  /** Present at run time (a class, function or constant not exported as a type only). */
  value: boolean;
  documented: boolean;
}

function kindOf(symbol: ts.Symbol): string {
  const f = symbol.flags;
  if (f & ts.SymbolFlags.Class) return 'class';
  if (f & ts.SymbolFlags.Function) return 'function';
  if (f & ts.SymbolFlags.Variable) return 'const';
  if (f & ts.SymbolFlags.Enum) return 'enum';
  if (f & ts.SymbolFlags.Interface) return 'interface';
  if (f & ts.SymbolFlags.TypeAlias) return 'type';
  return 'other';
}

/** Whether the export of `symbol` is written `export type { X }` or `export { type X }`. */
function typeOnly(symbol: ts.Symbol): boolean {
  return (symbol.declarations ?? []).some(
    (d) => ts.isExportSpecifier(d) && (d.isTypeOnly || d.parent.parent.isTypeOnly),
  );
}

function declaredExports(): Map<Entry, Exported[]> {
  const files = Object.values(entries).map((file) => `${root}/${file}`);
  const program = ts.createProgram(files, {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    types: ['node'],
    noEmit: true,
  });
  const checker = program.getTypeChecker();
  const out = new Map<Entry, Exported[]>();
  for (const [entry, file] of Object.entries(entries) as [Entry, string][]) {
    const source = program.getSourceFile(`${root}/${file}`);
    const module = source && checker.getSymbolAtLocation(source);
    if (!module) throw new Error(`${file} is missing: run npm run build first`);
    const list = checker.getExportsOfModule(module).map((symbol) => {
      const target =
        symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
      const kind = kindOf(target);
      const only = typeOnly(symbol) && (target.flags & ts.SymbolFlags.Value) !== 0;
      const doc = ts.displayPartsToString(target.getDocumentationComment(checker)).trim();
      return {
        name: symbol.name,
        kind: only ? `${kind} (type only)` : kind,
        value: (target.flags & ts.SymbolFlags.Value) !== 0 && !only,
        documented: doc.length > 0,
      };
    });
    out.set(
      entry,
      list.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
    );
  }
  return out;
}

function report(exports: Map<Entry, Exported[]>): string {
  const lines = [
    '# The public API of limited-client: every name each entry exports, and what it is.',
    '# Checked against the built package by test/package/api.test.ts. To change it on purpose:',
    `#   ${UPDATE}`,
  ];
  for (const [entry, list] of exports) {
    lines.push('', `${entry} (${list.length})`);
    for (const e of list) lines.push(`  ${e.name.padEnd(32)} ${e.kind}`);
  }
  return `${lines.join('\n')}\n`;
}

function runtimeKeys(entry: Entry, style: 'import' | 'require'): string[] {
  const code =
    style === 'import'
      ? `const m = await import(${JSON.stringify(entry)}); console.log(JSON.stringify(Object.keys(m).filter((k) => k !== 'default').sort()));`
      : `console.log(JSON.stringify(Object.keys(require(${JSON.stringify(entry)})).sort()))`;
  const args = style === 'import' ? ['--input-type=module', '-e', code] : ['-e', code];
  return JSON.parse(execFileSync(process.execPath, args, { cwd: root, encoding: 'utf8' }));
}

const exports = declaredExports();

describe('the public API', () => {
  it('is the one listed in test/package/api.txt', () => {
    const actual = report(exports);
    if (process.env.UPDATE_API) writeFileSync(reportFile, actual);
    const expected = readFileSync(reportFile, 'utf8');
    expect(
      actual,
      `The exports of the built package differ from test/package/api.txt. If the change is on ` +
        `purpose, update the file with \`${UPDATE}\`, document the names in the README, and ` +
        `commit both; otherwise export only what the README documents.`,
    ).toBe(expected);
  });

  it.each(Object.keys(entries) as Entry[])(
    '%s gives exactly the listed values to import and require',
    (entry) => {
      const values = (exports.get(entry) ?? [])
        .filter((e) => e.value)
        .map((e) => e.name)
        .sort();
      expect(runtimeKeys(entry, 'import')).toEqual(values);
      expect(runtimeKeys(entry, 'require')).toEqual(values);
    },
  );

  it('has a doc comment on every export', () => {
    const undocumented = [...exports].flatMap(([entry, list]) =>
      list.filter((e) => !e.documented).map((e) => `${entry}: ${e.name}`),
    );
    expect(undocumented).toEqual([]);
  });
});

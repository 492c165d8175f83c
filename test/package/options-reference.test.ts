/**
 * docs/options.md against the code, so that the reference cannot drift:
 *
 * - each table lists exactly the options of its type, nested ones by their path
 *   (`retry.retries`), read from the documented TypeScript types with the compiler (an option
 *   added, removed or renamed in code fails here until the page follows);
 * - every default the code declares (the client's `DEFAULTS`, the mock server's
 *   `SERVER_DEFAULTS`, `ROUTE_DEFAULTS`, `LIMIT_DEFAULTS`, `FAULT_DEFAULTS`, the stores'
 *   defaults; `MemoryStateStore`'s `maxKeys` measured, since the core keeps no constant for it)
 *   is in the Default column of its row, as a literal equal to the code's value;
 * - and a literal in the Default column is one the code declares (words, such as "none" or "a new
 *   MemoryStore", describe what is not a value).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { MemoryStateStore } from '../../src/client/host/store.js';
import { DEFAULTS } from '../../src/client/options/schema.js';
import { DEFAULTS as REDIS_STORE_DEFAULTS } from '../../src/redis/redis-store.js';
import { CONCURRENCY_RETRY_AFTER_MS } from '../../src/server/algorithms/concurrency-limit.js';
import {
  FAULT_DEFAULTS,
  LIMIT_DEFAULTS,
  ROUTE_DEFAULTS,
  SERVER_DEFAULTS,
} from '../../src/server/http/defaults.js';
import { MEMORY_STORE_DEFAULTS } from '../../src/server/memory-store.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const page = readFileSync(join(root, 'docs/options.md'), 'utf8');

// ---------------------------------------------------------------------------------------------
// The page: a table per heading, a row per option.

interface Row {
  /** The option paths the first cell names (`limit`, `windowMs` for a row of two). */
  names: string[];
  /** The Default cell as written. */
  cell: string;
}

/** The first table after the heading `heading` (any level), row by row. */
function table(heading: string): Row[] {
  const lines = page.split('\n');
  const start = lines.findIndex((line) => new RegExp(`^#+ ${escapeRegExp(heading)}$`).test(line));
  if (start === -1) throw new Error(`docs/options.md has no heading "${heading}"`);
  const rows: Row[] = [];
  let i = start + 1;
  while (i < lines.length && !(lines[i] as string).startsWith('|')) {
    if ((lines[i] as string).startsWith('#')) throw new Error(`no table under "${heading}"`);
    i++;
  }
  for (i += 2; i < lines.length && (lines[i] as string).startsWith('|'); i++) {
    const cells = (lines[i] as string)
      .slice(1, -1)
      .split(/(?<!\\)\|/)
      .map((cell) => cell.trim());
    const names = [...(cells[0] as string).matchAll(/`([^`]+)`/g)].map((m) => m[1] as string);
    rows.push({ names, cell: cells[1] as string });
  }
  return rows;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

const NOT_A_LITERAL = Symbol('not a literal');

/**
 * The value a Default cell states, when it is one code literal (`` `10_000` ``, `` `'ietf'` ``,
 * `` `['POST', 'PATCH']` ``, `` `Infinity` ``); {@link NOT_A_LITERAL} for words.
 */
function literal(cell: string): unknown {
  const code = /^`([^`]+)`$/.exec(cell)?.[1];
  if (code === undefined) return NOT_A_LITERAL;
  if (code === 'Infinity') return Number.POSITIVE_INFINITY;
  const json = code
    .replace(/(\d)_(?=\d)/g, '$1')
    .replace(/'([^']*)'/g, (_m, text: string) => JSON.stringify(text));
  try {
    return JSON.parse(json);
  } catch {
    return NOT_A_LITERAL;
  }
}

// ---------------------------------------------------------------------------------------------
// The code: option paths from the documented types, defaults from the constants.

const program = ts.createProgram(
  [
    'src/client/options/types.ts',
    'src/client/types.ts',
    'src/client/host/store.ts',
    'src/server/http/config.ts',
    'src/server/memory-store.ts',
    'src/redis/redis-store.ts',
  ].map((file) => join(root, file)),
  {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    skipLibCheck: true,
    noEmit: true,
    lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'],
  },
);
const checker = program.getTypeChecker();
const srcDir = join(root, 'src');

/** Types whose fields are not options (an interface to implement, a value to pass whole). */
const OPAQUE = new Set(['Clock', 'StateStore', 'RateLimitStore']);

function declaredIn(symbol: ts.Symbol): string | undefined {
  return symbol.declarations?.[0]?.getSourceFile().fileName;
}

/** The type named `name` in `file`: an interface or a type alias. */
function typeNamed(file: string, name: string): ts.Type {
  const source = program.getSourceFile(join(root, file));
  if (source === undefined) throw new Error(`${file} is not in the program`);
  for (const statement of source.statements) {
    if (
      (ts.isInterfaceDeclaration(statement) || ts.isTypeAliasDeclaration(statement)) &&
      statement.name.text === name
    ) {
      const symbol = checker.getSymbolAtLocation(statement.name);
      if (symbol) return checker.getDeclaredTypeOfSymbol(symbol);
    }
  }
  throw new Error(`${file} declares no type ${name}`);
}

/** Whether `type` is a group of options to list field by field (not a value, a function, a map). */
function isOptionGroup(type: ts.Type): boolean {
  if (!(type.flags & ts.TypeFlags.Object) && !type.isIntersection()) return false;
  if (checker.isArrayType(type) || type.getCallSignatures().length > 0) return false;
  if (checker.getIndexInfosOfType(type).length > 0) return false;
  const name = (type.aliasSymbol ?? type.getSymbol())?.name;
  if (name !== undefined && OPAQUE.has(name)) return false;
  const props = checker.getPropertiesOfType(type);
  return props.length > 0 && props.every((p) => declaredIn(p)?.startsWith(srcDir));
}

interface Walk {
  /** Paths not to descend into (they have a table of their own). */
  stop?: readonly string[];
  /** Interfaces whose fields are listed once, without their owner's path (a fault trigger). */
  shared?: readonly string[];
}

/**
 * Every option path of `type`: each field declared in src/ (a `RequestInit` field is fetch's, not
 * ours), and for a field that is a group of options (`retry: false | RetryOptions`) its own fields
 * under its path.
 */
function optionPaths(type: ts.Type, walk: Walk = {}, prefix = ''): Set<string> {
  const out = new Set<string>();
  // A union's options are those of any of its members (each algorithm's parameters).
  const byName = new Map<string, ts.Symbol>();
  for (const member of type.isUnion() ? type.types : [type]) {
    for (const prop of checker.getPropertiesOfType(member)) {
      if (!byName.has(prop.name)) byName.set(prop.name, prop);
    }
  }
  const props = [...byName.values()];
  for (const prop of props) {
    if (!declaredIn(prop)?.startsWith(srcDir)) continue;
    const owner = prop.declarations?.[0]?.parent;
    const sharedField =
      owner !== undefined &&
      ts.isInterfaceDeclaration(owner) &&
      (walk.shared ?? []).includes(owner.name.text);
    const path = sharedField ? prop.name : `${prefix}${prop.name}`;
    out.add(path);
    if (walk.stop?.includes(path)) continue;
    const propType = checker.getNonNullableType(checker.getTypeOfSymbol(prop));
    const parts = (propType.isUnion() ? propType.types : [propType]).filter(
      (t) => !(t.flags & ts.TypeFlags.BooleanLike),
    );
    if (parts.length > 0 && parts.every(isOptionGroup)) {
      const group = parts.length === 1 ? (parts[0] as ts.Type) : propType;
      for (const inner of optionPaths(group, walk, `${path}.`)) out.add(inner);
    }
  }
  return out;
}

/** How many keys a default `MemoryStateStore` keeps: it fills one until a key is dropped. */
function memoryStateStoreMaxKeys(): number {
  const store = new MemoryStateStore();
  const put = { run: () => [{}, undefined] as [object, undefined] };
  for (let i = 0; i < 1_000_000; i++) {
    store.update(`k${i}`, put, 60_000);
    if (store.size <= i) return i;
  }
  return Number.POSITIVE_INFINITY;
}

/** `{ a: { b: 1 } }` as `[['a.b', 1]]`; arrays are values. */
function flatten(value: object, prefix = ''): [string, unknown][] {
  return Object.entries(value).flatMap(([key, v]) =>
    typeof v === 'object' && v !== null && !Array.isArray(v)
      ? flatten(v, `${prefix}${key}.`)
      : [[`${prefix}${key}`, v] as [string, unknown]],
  );
}

/**
 * The client's defaults by path: as `DEFAULTS` spells them, and `initialWindow` also as the option
 * it is the default of, `coldStart.initialWindow`.
 */
const clientDefaults = new Map(flatten(DEFAULTS));
clientDefaults.set('coldStart.initialWindow', DEFAULTS.initialWindow);

// ---------------------------------------------------------------------------------------------

const policy = optionPaths(typeNamed('src/client/options/types.ts', 'HostOptions'));
const client = optionPaths(typeNamed('src/client/options/types.ts', 'LimitedClientOptions'));
const callInit = optionPaths(typeNamed('src/client/types.ts', 'LimitedRequestInit'));

/** Each table: the options it must list, and the defaults its rows must state. */
const TABLES: { heading: string; options: Set<string>; defaults: Map<string, unknown> }[] = [
  { heading: 'Client options', options: policy, defaults: clientDefaults },
  {
    heading: 'Client-wide options',
    options: new Set([...client].filter((path) => !policy.has(path))),
    defaults: clientDefaults,
  },
  // A call's own options default to the client's options, which the rows name in words.
  { heading: "A call's own options", options: callInit, defaults: new Map() },
  // Every entry of `DEFAULTS` whose path is not an option's, as `DEFAULTS` spells it (issue 23:
  // `initialWindow` stands at its top level, the option is `coldStart.initialWindow`).
  {
    heading: 'Other defaults',
    options: new Set(flatten(DEFAULTS).flatMap(([path]) => (client.has(path) ? [] : [path]))),
    defaults: clientDefaults,
  },
  {
    heading: 'Mock server options',
    options: optionPaths(typeNamed('src/server/http/config.ts', 'MockServerConfig')),
    defaults: new Map(flatten(SERVER_DEFAULTS)),
  },
  {
    heading: 'Route options',
    options: optionPaths(typeNamed('src/server/http/config.ts', 'RouteConfig'), {
      stop: ['faults'],
    }),
    defaults: new Map(flatten(ROUTE_DEFAULTS)),
  },
  {
    heading: 'Limit options',
    options: optionPaths(typeNamed('src/server/http/config.ts', 'LimitConfig')),
    defaults: new Map<string, unknown>([
      ...flatten(LIMIT_DEFAULTS),
      ['retryAfterMs', CONCURRENCY_RETRY_AFTER_MS],
    ]),
  },
  {
    heading: 'Fault options',
    options: optionPaths(typeNamed('src/server/http/config.ts', 'FaultsConfig'), {
      shared: ['FaultTrigger'],
    }),
    defaults: new Map(flatten(FAULT_DEFAULTS)),
  },
  {
    heading: 'MemoryStateStore',
    options: optionPaths(typeNamed('src/client/host/store.ts', 'MemoryStateStoreOptions')),
    // Measured, not read: a constant in the core would cost its browser bundle bytes.
    defaults: new Map([['maxKeys', memoryStateStoreMaxKeys()]]),
  },
  {
    heading: 'MemoryStore',
    options: optionPaths(typeNamed('src/server/memory-store.ts', 'MemoryStoreOptions')),
    defaults: new Map(flatten(MEMORY_STORE_DEFAULTS)),
  },
  {
    heading: 'RedisStore',
    options: optionPaths(typeNamed('src/redis/redis-store.ts', 'RedisStoreOptions')),
    defaults: new Map(flatten(REDIS_STORE_DEFAULTS)),
  },
];

const COUNT_WORDS = ['no', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine'];

describe('docs/options.md', () => {
  it('says how many values DEFAULTS holds besides the options, as many as its table lists', () => {
    const extra = flatten(DEFAULTS).filter(([path]) => !client.has(path));
    const said = /`DEFAULTS` also holds (\w+) values?/.exec(page)?.[1];
    expect(said).toBe(COUNT_WORDS[extra.length]);
    expect(table('Other defaults').flatMap((row) => row.names)).toEqual(
      extra.map(([path]) => path),
    );
  });

  it('reads the option types (a check of the reader itself)', () => {
    expect([...policy]).toEqual(
      expect.arrayContaining(['rate', 'retry', 'retry.retries', 'coldStart.initialWindow']),
    );
    expect(client.has('hosts') && !client.has('hosts.rate') && !client.has('store.update')).toBe(
      true,
    );
    expect(callInit.has('retry.retries') && !callInit.has('method')).toBe(true);
    expect(literal('`10_000`')).toBe(10_000);
    expect(literal("`['POST', 'PATCH']`")).toEqual(['POST', 'PATCH']);
    expect(literal('`Infinity`')).toBe(Number.POSITIVE_INFINITY);
    expect(literal('none')).toBe(NOT_A_LITERAL);
    expect(literal('`max(1, ceil(rate))`')).toBe(NOT_A_LITERAL);
  });

  for (const { heading, options, defaults } of TABLES) {
    describe(heading, () => {
      const rows = table(heading);

      it('lists exactly the options of its type', () => {
        const listed = rows.flatMap((row) => row.names);
        expect([...new Set(listed)].sort()).toEqual([...options].sort());
      });

      it('states every default as the code declares it, and no other', () => {
        const stated = new Map<string, unknown>();
        for (const row of rows) {
          const value = literal(row.cell);
          if (value === NOT_A_LITERAL) continue;
          for (const name of row.names) stated.set(name, value);
        }
        const wrong: string[] = [];
        for (const [path, value] of defaults) {
          if (!options.has(path)) continue; // another table's
          if (!stated.has(path)) wrong.push(`${path}: default ${String(value)} not stated`);
          else if (!Object.is(stated.get(path), value) && !sameArray(stated.get(path), value)) {
            wrong.push(`${path}: says ${String(stated.get(path))}, code ${String(value)}`);
          }
        }
        for (const path of stated.keys()) {
          if (!defaults.has(path))
            wrong.push(`${path}: a literal default the code does not declare`);
        }
        expect(wrong).toEqual([]);
      });
    });
  }

  it('every default the code declares is in a table', () => {
    const covered = (defaults: Map<string, unknown>) =>
      [...defaults.keys()].filter(
        (path) => !TABLES.some((t) => t.defaults === defaults && t.options.has(path)),
      );
    for (const { heading, defaults } of TABLES) expect(covered(defaults), heading).toEqual([]);
  });
});

function sameArray(a: unknown, b: unknown): boolean {
  return Array.isArray(a) && Array.isArray(b) && JSON.stringify(a) === JSON.stringify(b);
}

/**
 * The `@default` tags of the option types against `DEFAULTS`, so that a doc comment cannot drift
 * from the value the code applies: a tag written as a literal (`3`, `10_000`, `'Idempotency-Key'`,
 * `['POST', 'PATCH']`, `Infinity`, `{ initialWindow: 1 }`) must equal the default at its path, a tag
 * in words ("none", "learned from the host's answers") must sit on an option without one, and
 * every default of an option must have a tag. The internal configs that repeat them
 * (`BreakerConfig`, `WaitJitter`) are held to the same.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { DEFAULTS } from '../../../src/client/options/schema.js';

const root = fileURLToPath(new URL('../../..', import.meta.url));

/** Sentinel for a tag in words: not a literal the code could hold. */
const WORDS = Symbol('words');

/** The value of a literal written in a tag, or {@link WORDS}. */
function literal(node: ts.Expression): unknown {
  if (ts.isParenthesizedExpression(node)) return literal(node.expression);
  if (ts.isNumericLiteral(node)) return Number(node.text);
  if (ts.isStringLiteral(node)) return node.text;
  if (node.kind === ts.SyntaxKind.TrueKeyword) return true;
  if (node.kind === ts.SyntaxKind.FalseKeyword) return false;
  if (ts.isIdentifier(node) && node.text === 'Infinity') return Number.POSITIVE_INFINITY;
  if (ts.isIdentifier(node) && node.text === 'undefined') return undefined;
  if (ts.isArrayLiteralExpression(node)) {
    const items = node.elements.map(literal);
    return items.includes(WORDS) ? WORDS : items;
  }
  if (ts.isObjectLiteralExpression(node)) {
    const out: Record<string, unknown> = Object.create(null);
    for (const p of node.properties) {
      if (!ts.isPropertyAssignment(p) || !ts.isIdentifier(p.name)) return WORDS;
      const value = literal(p.initializer);
      if (value === WORDS) return WORDS;
      out[p.name.text] = value;
    }
    return { ...out };
  }
  return WORDS;
}

function parseTag(text: string): unknown {
  const source = ts.createSourceFile('tag.ts', `(${text});`, ts.ScriptTarget.ES2022, true);
  const [statement] = source.statements;
  if (source.statements.length !== 1 || !statement || !ts.isExpressionStatement(statement)) {
    return WORDS;
  }
  // A parse error (words that happen to start like code) leaves diagnostics behind.
  const errors = (source as unknown as { parseDiagnostics: unknown[] }).parseDiagnostics;
  return errors.length > 0 ? WORDS : literal(statement.expression);
}

interface Tag {
  path: string;
  value: unknown;
  text: string;
}

/** Each `@default` tag of the members of `name` in `file` (nested type literals by their path). */
function tagsOf(file: string, name: string, prefix = ''): Tag[] {
  const text = readFileSync(join(root, file), 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true);
  const decl = source.statements.find(
    (s): s is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(s) && s.name.text === name,
  );
  if (!decl) throw new Error(`${file} has no interface ${name}`);
  const tags: Tag[] = [];
  const visit = (members: ts.NodeArray<ts.TypeElement>, at: string) => {
    for (const member of members) {
      if (!ts.isPropertySignature(member) || !member.name || !ts.isIdentifier(member.name)) {
        continue;
      }
      const path = at + member.name.text;
      for (const tag of ts.getJSDocTags(member)) {
        if (tag.tagName.text !== 'default') continue;
        const raw = ts.getTextOfJSDocComment(tag.comment)?.trim() ?? '';
        tags.push({ path, value: parseTag(raw), text: raw });
      }
      if (member.type && ts.isTypeLiteralNode(member.type)) visit(member.type.members, `${path}.`);
    }
  };
  visit(decl.members, prefix);
  return tags;
}

const OPTIONS = 'src/client/options/types.ts';
const tags = [
  ...tagsOf(OPTIONS, 'HostOptions'),
  ...tagsOf(OPTIONS, 'LimitedClientOptions'),
  ...tagsOf(OPTIONS, 'RetryOptions', 'retry.'),
  ...tagsOf(OPTIONS, 'RetryBudgetOptions', 'retryBudget.'),
  ...tagsOf(OPTIONS, 'CircuitBreakerOptions', 'circuitBreaker.'),
  ...tagsOf(OPTIONS, 'IdempotencyOptions', 'idempotency.'),
  ...tagsOf('src/client/rules/breaker.ts', 'BreakerConfig', 'circuitBreaker.'),
  ...tagsOf('src/client/retry/backoff.ts', 'WaitJitter', 'waitJitter.'),
];

/** The default at an option's path (`coldStart` is `{ initialWindow }` in the option's shape). */
function defaultAt(path: string): unknown {
  if (path === 'coldStart') return { initialWindow: DEFAULTS.initialWindow };
  let value: unknown = DEFAULTS;
  for (const key of path.split('.')) {
    if (typeof value !== 'object' || value === null || !Object.hasOwn(value, key)) {
      return undefined;
    }
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

/** Every option path `DEFAULTS` holds a default for (not `fallbackHoldMs`: not an option). */
function defaultPaths(): string[] {
  const paths: string[] = [];
  for (const [key, value] of Object.entries(DEFAULTS)) {
    if (key === 'fallbackHoldMs') continue;
    if (key === 'initialWindow') paths.push('coldStart');
    else if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
      for (const inner of Object.keys(value)) paths.push(`${key}.${inner}`);
    } else paths.push(key);
  }
  return paths;
}

describe('the @default tags of the options', () => {
  it('are found: one per option that has a default, and then some', () => {
    expect(tags.length).toBeGreaterThanOrEqual(defaultPaths().length);
  });

  it('say, as a literal, the value DEFAULTS holds', () => {
    const literals = tags.filter((t) => t.value !== WORDS);
    expect(literals.length).toBeGreaterThan(25);
    for (const t of literals) {
      expect({ path: t.path, value: t.value }).toEqual({ path: t.path, value: defaultAt(t.path) });
    }
  });

  it('say in words only what DEFAULTS holds no value for', () => {
    for (const t of tags.filter((tag) => tag.value === WORDS)) {
      expect({ path: t.path, text: t.text, default: defaultAt(t.path) }).toEqual({
        path: t.path,
        text: t.text,
        default: undefined,
      });
    }
  });

  it('cover every default of an option', () => {
    const tagged = new Set(tags.filter((t) => t.value !== WORDS).map((t) => t.path));
    expect(defaultPaths().filter((path) => !tagged.has(path))).toEqual([]);
  });

  it('are read as the words or the literal they are', () => {
    expect(parseTag('10_000')).toBe(10_000);
    expect(parseTag("['POST', 'PATCH']")).toEqual(['POST', 'PATCH']);
    expect(parseTag('{ initialWindow: 1 }')).toEqual({ initialWindow: 1 });
    expect(parseTag('Infinity')).toBe(Number.POSITIVE_INFINITY);
    expect(parseTag('max(1, ceil(rate))')).toBe(WORDS);
    expect(parseTag("learned from the host's answers, or listed")).toBe(WORDS);
    expect(parseTag('none')).toBe(WORDS);
  });
});

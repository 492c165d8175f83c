/**
 * What client and server share about checking options: one {@link InvalidOptionError} format,
 * `invalid option <path>: <what is allowed>, got <what was given>`, e.g.
 * `invalid option hosts["api.example.com"].retry.retries: must be an integer from 0 to 100, got 1.5`.
 *
 * Schemas carry what is allowed as each check's message, worded `must be ...`: the server's zod
 * schemas, whose first issue {@link optionError} turns into the error, and the client's own checks
 * (`client/options/parts.ts`), which find the path and the value with {@link optionPath} and
 * {@link valueAt}. Checks a schema cannot express use {@link invalidOption} for the same wording. {@link Same} checks at
 * compile time that a schema and the documented type it validates describe the same thing.
 *
 * @module
 */
import type { $ZodIssue } from 'zod/v4/core';
import { InvalidOptionError, type RequestContext } from './errors.js';

type Mutual<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

/**
 * `true` when `A` and `B` are assignable both ways and have the same keys (which catches an
 * optional field added on one side only), else `false`. Used as
 * `const check: [Same<z.input<typeof schema>, Options>] = [true]`, which stops compiling on drift.
 */
export type Same<A, B> = Mutual<A, B> extends true ? Mutual<keyof A, keyof B> : false;

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/**
 * An option's path as users write it: `retry.retries`, `routes[0].limits[1].windowMs`,
 * `hosts["api.example.com"].rate`. `prefix` goes first (`'init'` for a call's own options);
 * an empty path with no prefix is `options`.
 */
export function optionPath(path: readonly PropertyKey[], prefix = ''): string {
  let out = prefix;
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else if (typeof key === 'string' && IDENTIFIER.test(key)) out += out ? `.${key}` : key;
    else out += `[${JSON.stringify(String(key))}]`;
  }
  return out || 'options';
}

/** Longest part of a string value shown in a message, in characters. */
const SHOWN_CHARS = 40;

/**
 * A value as a message shows it: numbers, booleans and `null` as they are, strings quoted (control
 * characters escaped, cut at 40 characters with their length), anything else by its kind only
 * (`an object`, `an array`, `a function`), so that a message never carries a whole object (which
 * may hold a token) or a multi-line string. `undefined` is `nothing`.
 */
export function describeValue(value: unknown): string {
  switch (typeof value) {
    case 'undefined':
      return 'nothing';
    case 'number':
    case 'boolean':
    case 'bigint':
      return String(value);
    case 'string':
      return value.length > SHOWN_CHARS
        ? `${JSON.stringify(value.slice(0, SHOWN_CHARS))}… (${value.length} characters)`
        : JSON.stringify(value);
    case 'function':
      return 'a function';
    case 'symbol':
      return 'a symbol';
    default:
      if (value === null) return 'null';
      return Array.isArray(value) ? 'an array' : 'an object';
  }
}

/**
 * The error for an option at `path` (already formatted, see {@link optionPath}) whose value breaks
 * `problem` (`must be ...`, `must not ...`): `invalid option <path>: <problem>, got <value>`.
 * `ctx` names the call, for a call's own options.
 */
export function invalidOption(
  path: string,
  problem: string,
  value: unknown,
  ctx?: RequestContext,
): InvalidOptionError {
  return new InvalidOptionError(path, `${problem}, got ${describeValue(value)}`, ctx);
}

/** The value at `path` under `root`, or `undefined` where the path leaves the objects. */
export function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let value = root;
  for (const key of path) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

/**
 * For a union that failed, the issue of the branch that got furthest into the value (`retry:
 * { retries: -1 }` fails in the object branch at `retries`, not at `retry`), with its full path.
 * A union whose branches all failed at its own level keeps its own message.
 */
function deepest(issue: $ZodIssue): $ZodIssue {
  if (issue.code !== 'invalid_union' || 'discriminator' in issue) return issue;
  let best: $ZodIssue | undefined;
  for (const branch of issue.errors) {
    for (const sub of branch) {
      const candidate = deepest(sub);
      if (candidate.path.length > (best?.path.length ?? 0)) best = candidate;
    }
  }
  return best ? { ...best, path: [...issue.path, ...best.path] } : issue;
}

/**
 * The error for the first of a schema's `issues` about `input`: the option's path, the schema's
 * message, and the value found at that path. An unknown key reads `is not a known option (check
 * its spelling)`; a discriminated union lists the values it knows.
 *
 * @param prefix prepended to every path (`'init'`, `'routes[2]'`), or `''`.
 * @param ctx names the call, for a call's own options.
 */
export function optionError(
  issues: readonly $ZodIssue[],
  input: unknown,
  prefix = '',
  ctx?: RequestContext,
): InvalidOptionError {
  const issue = deepest(issues[0] as $ZodIssue);
  if (issue.code === 'unrecognized_keys') {
    return new InvalidOptionError(
      optionPath([...issue.path, issue.keys[0] ?? ''], prefix),
      'is not a known option (check its spelling)',
      ctx,
    );
  }
  const value = valueAt(input, issue.path);
  if (issue.code === 'invalid_union' && 'discriminator' in issue) {
    const known = (issue as { options?: unknown[] }).options ?? [];
    const list = known.map((o) => JSON.stringify(o)).join(', ');
    return invalidOption(optionPath(issue.path, prefix), `must be one of ${list}`, value, ctx);
  }
  // Every check of ours carries a message; zod's bare default says nothing useful.
  const problem = issue.message.startsWith('Invalid input') ? 'has the wrong type' : issue.message;
  return invalidOption(optionPath(issue.path, prefix), problem, value, ctx);
}

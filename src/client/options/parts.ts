/**
 * What the client's option schemas are made of: a {@link Check} per option (a leaf predicate with
 * its `must be ...` message, a strict object of fields, "`false` or an object"), and a field with a
 * documented default. A few dozen lines in the project rather than zod/mini in the core: the core
 * bundle is held to 36 KB gzipped (DESIGN.md, "Size"), and zod/mini cost it 3.5 kB of that (the
 * README's "Size"). The mock server's configuration, which is not in the core, keeps zod.
 *
 * `undefined` is an unset option everywhere: a field left out and a field written as `undefined`
 * are one thing, and are not checked.
 *
 * @module
 */
import type { RequestContext } from '../../shared/errors.js';
import { InvalidOptionError } from '../../shared/errors.js';
import { invalidOption, optionPath, valueAt } from '../../shared/option-checks.js';

/** What is wrong with a value: where under it (`['retry', 'retries']`) and what is allowed. */
export interface Problem {
  readonly at: readonly PropertyKey[];
  /** `must be ...`, or `undefined` for a key the object does not know. */
  readonly message: string | undefined;
}

/** A check of one option's value; `T` is the type it admits (for the compile-time checks). */
export interface Check<T> {
  /** The first problem with a value that is not `undefined`, or `undefined` when it passes. */
  readonly problem: (value: unknown) => Problem | undefined;
  /** An object option's fields: such options merge field by field across `hosts` layers. */
  readonly shape?: Shape;
  /** Never set: carries `T`. */
  readonly type?: T;
}
/** The fields of an object option, each with its check. */
export type Shape = { readonly [key: string]: Check<unknown> };
/** The type a check admits. */
export type TypeOf<C> = C extends Check<infer T> ? T : never;
/** The type of an object of `S`: every field optional (`undefined` is unset). */
export type ObjectOf<S extends Shape> = { [K in keyof S]?: TypeOf<S[K]> };

/** A leaf check: `ok` or else `message` (a string, or made from the value). */
export const is = <T>(
  ok: (v: unknown) => boolean,
  message: string | ((v: unknown) => string),
): Check<T> => ({
  problem: (v) =>
    ok(v) ? undefined : { at: [], message: typeof message === 'string' ? message : message(v) },
});

const isNumber = (v: unknown): v is number => typeof v === 'number';
const isObject = (v: unknown): v is object => typeof v === 'object' && v !== null;

// NaN fails every comparison below; Infinity passes `>` and fails `<=`.
export const num = (min: number, max: number, exclusiveMin = false) =>
  is<number>(
    (v) => isNumber(v) && (exclusiveMin ? v > min : v >= min) && v <= max,
    `must be a number ${exclusiveMin ? 'above' : 'from'} ${min} ${exclusiveMin ? 'and up to' : 'to'} ${max}`,
  );
export const int = (min: number, max: number) =>
  is<number>(
    (v) => Number.isInteger(v) && (v as number) >= min && (v as number) <= max,
    `must be an integer from ${min} to ${max}`,
  );
export const intOrInfinity = (min: number) =>
  is<number>(
    (v) => v === Number.POSITIVE_INFINITY || (Number.isInteger(v) && (v as number) >= min),
    `must be an integer from ${min} up, or Infinity`,
  );
export const msOrInfinity = () =>
  is<number>((v) => isNumber(v) && v > 0, 'must be a number of milliseconds above 0, or Infinity');
export const bool = () => is<boolean>((v) => typeof v === 'boolean', 'must be true or false');
export const fn = <T extends (...args: never[]) => unknown>(message: string) =>
  is<T>((v) => typeof v === 'function', message);

/**
 * An object of `shape`: an unknown key refused (a typo must not pass silently), then each field
 * that is not `undefined` checked, its problem at `[field, ...]`.
 */
export function strict<S extends Shape>(shape: S): Check<ObjectOf<S>> & { shape: S } {
  return {
    shape,
    problem(value) {
      if (!isObject(value) || Array.isArray(value)) return { at: [], message: 'must be an object' };
      const fields = value as Record<string, unknown>;
      for (const key of Object.keys(fields)) {
        if (!Object.hasOwn(shape, key)) return { at: [key], message: undefined };
      }
      for (const key of Object.keys(shape)) {
        const field = fields[key];
        const problem = field === undefined ? undefined : shape[key]?.problem(field);
        if (problem) return { at: [key, ...problem.at], message: problem.message };
      }
      return undefined;
    },
  };
}

/** An object option's check: its fields are known, to merge it field by field. */
type ObjectCheck = Check<unknown> & { readonly shape: Shape };

/** What `simple` accepts (`false`, a boolean), or an object that `object` accepts. */
export const orObject = <S, C extends ObjectCheck>(
  simple: (v: unknown) => v is S,
  object: C,
  message: string,
): Check<S | TypeOf<C>> => ({
  shape: object.shape,
  problem: (v) => (simple(v) ? undefined : isObject(v) ? object.problem(v) : { at: [], message }),
});

/** `false` (the part is off) or its options. */
export const offOr = <C extends ObjectCheck>(object: C) =>
  orObject((v): v is false => v === false, object, 'must be false or an object');

/**
 * A field whose default is `value`. Not filled in by the check: a field left out of a `hosts`
 * entry takes the global option, not the default, so the defaults are applied once the layers are
 * merged (`resolve.ts`), from `DEFAULTS`, which reads them here.
 */
export const defaulted = <T>(check: Check<T>, value: T) => ({ ...check, defaultValue: value });

/**
 * Checks `value` (skipped when `undefined`) and throws the {@link InvalidOptionError} for its
 * problem: `invalid option <prefix><path>: <message>, got <the value there>`.
 */
export function assertValid(
  check: Check<unknown>,
  value: unknown,
  prefix = '',
  ctx?: RequestContext,
): void {
  const problem = value === undefined ? undefined : check.problem(value);
  if (problem === undefined) return;
  const path = optionPath(problem.at, prefix);
  if (problem.message === undefined) {
    throw new InvalidOptionError(path, 'is not a known option (check its spelling)', ctx);
  }
  throw invalidOption(path, problem.message, valueAt(value, problem.at), ctx);
}

/**
 * The vocabulary in which `state-check.ts` lists a host state's fields (a kind per number, lists,
 * tuples, optional fields, moments bounded from the state's own time) and the walk that checks a
 * value against such a list, returning a checked copy or a {@link Refusal} naming the field.
 *
 * @module
 */
import type { LearnConfig } from './host-rules.js';

/** What the bounds of a state's fields are measured from. */
export interface Bounds {
  /** The state's time, epoch milliseconds. */
  now: number;
  /** The state's sequence number (what it admitted last). */
  seq: number;
  /** The host's learning parameters (its longest hold, its longest flight). */
  learn: LearnConfig;
  /** The configuration of the rule whose state is being checked. */
  config: unknown;
}

/** A number at most `upto(bounds)` (brought down to it), and a whole one when `int`. */
export class Upto {
  constructor(
    readonly upto: (b: Bounds) => number,
    readonly int = false,
  ) {}
}
/** A list of `of`, `min` to `max` long. */
export class List<S> {
  constructor(
    readonly of: S,
    readonly max = Number.POSITIVE_INFINITY,
    readonly min = 0,
  ) {}
}
/** A fixed list: one spec per place. */
export class Tuple<S> {
  constructor(readonly of: S) {}
}
/** A field (or a tuple's place) that may be absent (or `null`: JSON's `undefined` in a list). */
export class Opt<S> {
  constructor(readonly of: S) {}
}

/**
 * A number's kind: `count` a whole number from 0 to 2^53, `amount` a finite number from 0,
 * `number` any finite number, or bounded ({@link Upto}).
 */
type NumberSpec = 'count' | 'amount' | 'number' | Upto;
type FieldSpec<T> = undefined extends T ? Opt<Spec<Exclude<T, undefined>>> : Spec<T>;
/** How a value of type `T` is checked: derived from the type, so the two cannot drift. */
export type Spec<T> = [T] extends [number]
  ? NumberSpec
  : [T] extends [string]
    ? string extends T
      ? 'text'
      : readonly T[]
    : [T] extends [boolean]
      ? readonly T[]
      : [T] extends [readonly (infer U)[]]
        ? number extends T['length']
          ? List<Spec<U>>
          : Tuple<{ readonly [I in keyof T]-?: FieldSpec<T[I]> }>
        : { readonly [K in keyof T]-?: FieldSpec<T[K]> };

/** Any spec, as the walk reads it. */
export type AnySpec =
  | string
  | readonly unknown[]
  | Upto
  | List<AnySpec>
  | Tuple<readonly AnySpec[]>
  | Obj;
export type Obj = { readonly [key: string]: AnySpec | Opt<AnySpec> };

/**
 * What is wrong with a state: `problem`, at `path` (the keys from the state down, prepended as
 * the error goes up: no path is made while the state is fine).
 */
export class Refusal extends Error {
  readonly path: (string | number)[] = [];
  constructor(readonly problem: string) {
    super(problem);
  }
}

export function refuse(problem: string): never {
  throw new Refusal(problem);
}

/** Rethrows `error` from the field `key` (its path gets the key in front). */
export function within(error: unknown, key: string | number): never {
  if (error instanceof Refusal) error.path.unshift(key);
  throw error;
}

export const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** A field's path for a message: `quota.policies[0].key`; a stranger's key, quoted and cut. */
export function pathText(path: readonly (string | number)[]): string {
  let text = '';
  for (const key of path) {
    if (typeof key === 'number') text += `[${key}]`;
    else {
      const name = /^[A-Za-z_$][\w$]*$/.test(key) ? key : JSON.stringify(key.slice(0, 40));
      text += text === '' ? name : `.${name}`;
    }
  }
  return text;
}

/** Checks one number (see {@link NumberSpec}). */
export function number(value: unknown, kind: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) refuse('is not a finite number');
  if (kind === 'count' && !(Number.isSafeInteger(value) && value >= 0)) refuse('is not a count');
  if (kind === 'amount' && value < 0) refuse('is negative');
  return value;
}

/** Checks `value` against `spec`, returning a checked copy (see the module comment). */
export function check(value: unknown, spec: AnySpec, b: Bounds): unknown {
  if (typeof spec === 'string') {
    if (spec !== 'text') return number(value, spec);
    if (typeof value !== 'string') refuse('is not a string');
    return value;
  }
  if (Array.isArray(spec)) {
    if (!spec.includes(value)) refuse(`is not one of ${spec.join(', ')}`);
    return value;
  }
  if (spec instanceof Upto)
    return Math.min(number(value, spec.int ? 'count' : 'number'), spec.upto(b));
  if (spec instanceof List) {
    if (!Array.isArray(value)) refuse('is not a list');
    if (value.length < spec.min || value.length > spec.max) {
      refuse(`has ${value.length} items, not ${spec.min} to ${spec.max}`);
    }
    const out: unknown[] = [];
    for (let i = 0; i < value.length; i++) {
      try {
        out.push(check(value[i], spec.of, b));
      } catch (error) {
        within(error, i);
      }
    }
    return out;
  }
  if (spec instanceof Tuple) {
    const places = spec.of;
    if (!Array.isArray(value) || value.length > places.length) {
      refuse(`is not a list of ${places.length}`);
    }
    const out: unknown[] = [];
    for (let i = 0; i < places.length; i++) {
      const place = places[i];
      const item: unknown = value[i];
      if (item === undefined || item === null) {
        if (place instanceof Opt) break;
        within(new Refusal('is missing'), i);
      }
      try {
        out.push(check(item, place instanceof Opt ? place.of : place, b));
      } catch (error) {
        within(error, i);
      }
    }
    return out;
  }
  return object(value, spec as Obj, b);
}

/** An object spec's fields, listed once: `[key, spec, optional]`. */
type Fields = [string, AnySpec, boolean][];
const FIELDS = new WeakMap<Obj, Fields>();
function fieldsOf(spec: Obj): Fields {
  let fields = FIELDS.get(spec);
  if (fields === undefined) {
    fields = Object.keys(spec).map((key) => {
      const field = spec[key] as AnySpec | Opt<AnySpec>;
      return field instanceof Opt ? [key, field.of, true] : [key, field, false];
    });
    FIELDS.set(spec, fields);
  }
  return fields;
}

/**
 * Checks an object of `spec`'s fields. A field `spec` does not list is left out of the copy, not
 * refused: within one format version fields are only added, and optional, so an older reader in a
 * rolling deploy keeps the rest of a newer writer's state (its holds above all) instead of none.
 */
function object(value: unknown, spec: Obj, b: Bounds): Record<string, unknown> {
  if (!isObject(value)) refuse('is not an object');
  const out: Record<string, unknown> = {};
  for (const [key, field, optional] of fieldsOf(spec)) {
    const item = value[key];
    if (item === undefined) {
      if (optional) continue;
      within(new Refusal('is missing'), key);
    }
    try {
      out[key] = check(item, field, b);
    } catch (error) {
      within(error, key);
    }
  }
  return out;
}

/**
 * The check of a host's state read from outside this process (another process's JSON, from a
 * shared store): every field, its type and its bounds, so that what another writer left (another
 * version of the package in a rolling deploy, a bug, anything else writing to the key) can neither
 * crash a rule nor hold the host longer than this client would have itself.
 *
 * - **Shape.** A state of another format version (`v`), a field of the wrong type, a field this
 *   version does not know, a count that is not a whole number: the state is refused, with the
 *   field named (`quota.policies[0].probes is not a count`). The store then runs on no state,
 *   reports it and writes over it (`Transaction.check`).
 * - **Bounds.** A moment past what the rules ever record is brought back to it: a hold's end to
 *   `maxHoldMs` and its jitter from now, a reset to `maxHoldMs`, the server's own end to the
 *   longest delay the parser reports (366 days), the time a request is taken as lost to the
 *   longest a request counts in flight, a last refill or a last cut to now, a sequence number to
 *   the state's. So no wait read from shared state is longer than the client records on its own.
 *
 * The fields are listed once, in {@link SPEC}, whose type is derived from `HostState`: a field
 * added to a rule's state does not compile until it is listed here, with its kind. The check
 * walks the state along the list (never deeper: a state nested 100,000 deep is refused at its
 * first level) and returns a copy, so a read-only state (a store's own) is never changed.
 * It runs once per state read from the store, not per request. `RedisStore` offers it to the
 * pipeline (`STATE_CHECK` in `store.ts`), which is how it stays out of the core bundle.
 *
 * @module
 */
import { MAX_DELAY_MS } from '../../headers/values.js';
import type { BucketConfig } from './bucket.js';
import { type BudgetConfig, budget } from './budget.js';
import { type HostState, type LearnConfig, type RuleSet, STATE_VERSION } from './host-rules.js';
import type { LearnedPolicy } from './learned-policy.js';
import { pace } from './pace.js';
import { SLOTS } from './sliding-counts.js';

/** What the bounds of a state's fields are measured from. */
interface Bounds {
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
class Upto {
  constructor(
    readonly upto: (b: Bounds) => number,
    readonly int = false,
  ) {}
}
/** A list of `of`, `min` to `max` long. */
class List<S> {
  constructor(
    readonly of: S,
    readonly max = Number.POSITIVE_INFINITY,
    readonly min = 0,
  ) {}
}
/** A fixed list: one spec per place. */
class Tuple<S> {
  constructor(readonly of: S) {}
}
/** A field (or a tuple's place) that may be absent (or `null`: JSON's `undefined` in a list). */
class Opt<S> {
  constructor(readonly of: S) {}
}

/**
 * A number's kind: `count` a whole number from 0 to 2^53, `amount` a finite number from 0,
 * `number` any finite number, or bounded ({@link Upto}).
 */
type NumberSpec = 'count' | 'amount' | 'number' | Upto;
type FieldSpec<T> = undefined extends T ? Opt<Spec<Exclude<T, undefined>>> : Spec<T>;
/** How a value of type `T` is checked: derived from the type, so the two cannot drift. */
type Spec<T> = [T] extends [number]
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
type AnySpec = string | readonly unknown[] | Upto | List<AnySpec> | Tuple<readonly AnySpec[]> | Obj;
type Obj = { readonly [key: string]: AnySpec | Opt<AnySpec> };

/** Bounds of the moments (see the module comment). */
const PAST = new Upto((b) => b.now);
const SEQ = new Upto((b) => b.seq, true);
const SERVER = new Upto((b) => b.now + MAX_DELAY_MS);
const HOLD = new Upto(
  (b) => b.now + (b.learn.maxHoldMs ?? MAX_DELAY_MS) + b.learn.jitter.maxMs + 1,
);
const FLIGHT = new Upto((b) => {
  const ms = Math.max(b.learn.flightTtlMs, b.learn.longestFlightMs ?? 0);
  // A request's time is rounded up to a grain of a second or a thirty-second of it (flights.ts).
  return b.now + ms + Math.max(1000, ms / 32) + 1000;
});

const UNITS: Spec<[string, number][]> = new List(new Tuple(['text', 'amount'] as const));
const POLICY: Spec<LearnedPolicy> = {
  key: 'text',
  name: new Opt('text'),
  limit: new Opt('amount'),
  windowMs: new Opt('amount'),
  unit: new Opt('text'),
  remaining: new Opt('number'),
  // A reset is capped at `maxHoldMs`; the timed quota's is the end of a hold (jitter included).
  resetAt: new Opt(HOLD),
  probes: 'count',
  probesUntil: new Opt(FLIGHT),
  serverResetAt: new Opt(SERVER),
  // How its units come back (refill.ts): moments the model or the server's reset sets, as far
  // as the longest delay the parser reports (a day's quota refills over a day).
  peak: new Opt('amount'),
  refill: new Opt(['gradual', 'at-once'] as const),
  refillAt: new Opt(SERVER),
  paceAt: new Opt(SERVER),
  notBefore: new Opt(SERVER),
  trialAt: new Opt(SERVER),
  partialReset: new Opt([true] as const),
  // Where its reset runs late (late-reset.ts).
  windowBoundMs: new Opt('amount'),
  windowFirstAt: new Opt(PAST),
  lateReset: new Opt([true, false] as const),
  exactReset: new Opt([true] as const),
  windows: new Opt('count'),
  windowFloorMs: new Opt('amount'),
  wholeSeconds: new Opt([false] as const),
};
const ring: Spec<number[]> = new List('amount', SLOTS, SLOTS);

/** Every field of a host's state and how it is checked (see the module comment). */
const SPEC: Spec<HostState> = {
  v: 'count',
  mode: ['cold', 'blind', 'declared'],
  seq: 'count',
  flights: new Opt({
    units: 'amount',
    requests: 'count',
    other: new Opt(UNITS),
    list: new List(new Tuple([FLIGHT, 'count', 'amount', new Opt(UNITS)] as const)),
    open: new Opt('amount'),
  }),
  hold: new Opt({ until: HOLD, base: new Opt(SERVER), seq: new Opt(SEQ) }),
  refusal: new Opt({ since: PAST, count: 'count', calls: new Opt('count') }),
  ramp: new Opt({
    window: 'amount',
    seq0: new Upto((b) => b.seq + 1, true),
    sent: 'count',
    answered: 'count',
    accepted: 'count',
    lastAt: PAST,
    minRttMs: new Opt('amount'),
  }),
  quota: new Opt({ policies: new List(POLICY), applied: SEQ }),
  timed: new Opt({ successes: 'count', policy: new Opt(POLICY) }),
  pace: new Opt({
    sent: {
      slot: new Upto((b) => pace.fresh({}, b.now).sent.slot, true),
      sent: ring,
      ok: ring,
    },
    rate: new Opt('amount'),
    peak: new Opt('amount'),
    floor: new Opt('amount'),
    ceiling: new Opt('amount'),
    cutAt: new Opt(PAST),
    cutSeq: new Opt(SEQ),
    okAt: new Opt(PAST),
    tokens: new Opt('number'),
    at: new Opt(PAST),
    misses: new Opt('count'),
    stretchAt: new Opt(PAST),
    stretchOk: new Opt('count'),
    growAt: new Opt(PAST),
  }),
  bucket: new Opt({
    tokens: new Upto((b) => (b.config as BucketConfig).burst),
    at: PAST,
  }),
  budget: new Opt({
    slot: new Upto((b) => budget.fresh(b.config as BudgetConfig, b.now).slot, true),
    requests: ring,
    retries: ring,
  }),
};

/**
 * What is wrong with a state: `problem`, at `path` (the keys from the state down, prepended as
 * the error goes up: no path is made while the state is fine).
 */
class Refusal extends Error {
  readonly path: (string | number)[] = [];
  constructor(readonly problem: string) {
    super(problem);
  }
}

function refuse(problem: string): never {
  throw new Refusal(problem);
}

/** Rethrows `error` from the field `key` (its path gets the key in front). */
function within(error: unknown, key: string | number): never {
  if (error instanceof Refusal) error.path.unshift(key);
  throw error;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** A field's path for a message: `quota.policies[0].key`; a stranger's key, quoted and cut. */
function pathText(path: readonly (string | number)[]): string {
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
function number(value: unknown, kind: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) refuse('is not a finite number');
  if (kind === 'count' && !(Number.isSafeInteger(value) && value >= 0)) refuse('is not a count');
  if (kind === 'amount' && value < 0) refuse('is negative');
  return value;
}

/** Checks `value` against `spec`, returning a checked copy (see the module comment). */
function check(value: unknown, spec: AnySpec, b: Bounds): unknown {
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

/** Checks an object of `spec`'s fields, and no other (see {@link check}). */
function object(value: unknown, spec: Obj, b: Bounds): Record<string, unknown> {
  if (!isObject(value)) refuse('is not an object');
  for (const key of Object.keys(value)) {
    if (!Object.hasOwn(spec, key)) within(new Refusal('is not a field of the state'), key);
  }
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

/**
 * Checks a state read from outside this process for a host running `rules`, at the state's time
 * `now` (epoch milliseconds): returns a checked copy, whose moments are within their bounds, or
 * throws an `Error` naming what is wrong (see the module comment). The state of a rule the host
 * does not run is left out (no rule would read it).
 */
export function checkHostState(value: unknown, rules: RuleSet, now: number): HostState {
  try {
    return checkState(value, rules, now);
  } catch (error) {
    if (!(error instanceof Refusal)) throw error;
    const path = error.path.length === 0 ? 'the state' : pathText(error.path);
    throw new Error(`${path} ${error.problem}`);
  }
}

/** {@link checkHostState}, throwing a {@link Refusal}. */
function checkState(value: unknown, rules: RuleSet, now: number): HostState {
  if (!isObject(value)) refuse('is not an object');
  if (value.v !== STATE_VERSION) {
    const v = JSON.stringify(value.v ?? null).slice(0, 20);
    refuse(`is of another format (v: ${v}; this version reads v: ${STATE_VERSION})`);
  }
  const top = SPEC as unknown as Obj;
  for (const key of Object.keys(value)) {
    if (!Object.hasOwn(top, key)) within(new Refusal('is not a field of the state'), key);
  }
  let seq: number;
  let mode: unknown;
  try {
    seq = number(value.seq, 'count');
  } catch (error) {
    within(error, 'seq');
  }
  // Learning's parameters are the requests in flight's (the rules that learn run only with it).
  const learn = rules.all.find((rule) => rule.key === 'flights')?.config as LearnConfig;
  const b: Bounds = { now, seq, learn, config: undefined };
  try {
    mode = check(value.mode, top.mode as AnySpec, b);
  } catch (error) {
    within(error, 'mode');
  }
  const out: Record<string, unknown> = { v: STATE_VERSION, mode, seq };
  for (const rule of rules.all) {
    const own = value[rule.key];
    const field = top[rule.key];
    if (own === undefined || !(field instanceof Opt)) continue;
    b.config = rule.config;
    try {
      out[rule.key] = check(own, field.of, b);
    } catch (error) {
      within(error, rule.key);
    }
  }
  return out as unknown as HostState;
}

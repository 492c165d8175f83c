/**
 * The schema of the client's options: each option's check, with its allowed range, and its
 * default; the checks that run them are in `check.ts`.
 *
 * Written with the project's own checks (`parts.ts`), not zod: the core bundle's budget. The
 * documented types in `types.ts` and `../types.ts` are checked against the schemas at compile
 * time, both ways ({@link Same}), and {@link DEFAULTS} is read from the schemas.
 *
 * @module
 */
import { CLOCK_PROBLEM, type Clock, isClock } from '../../shared/clock.js';
import type { Same } from '../../shared/option-checks.js';
import { type CostVector, costOf, costProblem } from '../call/cost.js';
import type { StateStore } from '../host/store.js';
import type { LimitedInitOptions, LimitedRequestInit, ShouldRetry } from '../types.js';
import {
  bool,
  type Check,
  defaulted,
  fn,
  int,
  intOrInfinity,
  is,
  msOrInfinity,
  num,
  offOr,
  orObject,
  type Shape,
  strict,
  type TypeOf,
} from './parts.js';
import type {
  CircuitBreakerOptions,
  CostContext,
  Defaults,
  HostOptions,
  IdempotencyOptions,
  LimitedClientOptions,
  RetryBudgetOptions,
  RetryOptions,
} from './types.js';

const DAY_MS = 86_400_000;

/** Longest partition name, in characters (see the `partition` option). */
export const MAX_PARTITION_LENGTH = 256;

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

type DefaultsOf<S> = {
  readonly [K in keyof S as S[K] extends { defaultValue: unknown } ? K : never]: S[K] extends {
    defaultValue: infer V;
  }
    ? V
    : never;
};
/** The defaults declared in a shape, frozen (arrays too). */
function defaultsOf<S extends Shape>(shape: S): DefaultsOf<S> {
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(shape)) {
    if ('defaultValue' in field) {
      const value: unknown = field.defaultValue;
      out[key] = Array.isArray(value) ? Object.freeze([...value]) : value;
    }
  }
  return Object.freeze(out) as DefaultsOf<S>;
}

const retryShape = {
  retries: defaulted(int(0, 100), 3),
  baseDelayMs: defaulted(num(0, DAY_MS), 100),
  maxDelayMs: defaulted(num(0, DAY_MS), 10_000),
  shouldRetry: fn<ShouldRetry>('must be a function (context) => boolean'),
};
const retryBudgetShape = {
  ratio: defaulted(num(0, 10), 0.1),
  minPerSecond: defaulted(num(0, 1e6), 1),
  windowMs: defaulted(num(10, DAY_MS), 10_000),
};
const circuitBreakerShape = {
  failureRatio: defaulted(num(0, 1, true), 0.5),
  minRequests: defaulted(int(1, 1e9), 10),
  windowMs: defaulted(num(10, DAY_MS), 10_000),
  consecutiveFailures: defaulted(int(1, 1e9), 5),
  coolDownMs: defaulted(num(0, DAY_MS), 1_000),
  maxCoolDownMs: defaulted(num(0, DAY_MS), 30_000),
  halfOpenProbes: defaulted(int(1, 1000), 1),
};
const idempotencyShape = {
  header: defaulted(
    is<string>((v) => typeof v === 'string' && TOKEN.test(v), 'must be a header name'),
    'Idempotency-Key',
  ),
  methods: defaulted(
    is<string[]>(
      (v) => Array.isArray(v) && v.every((m) => typeof m === 'string' && TOKEN.test(m)),
      'must be an array of HTTP methods',
    ),
    ['POST', 'PATCH'],
  ),
  honoured: bool(),
  knownProviders: defaulted(bool(), true),
};
const coldStartShape = { initialWindow: defaulted(int(1, 1000), 1) };
const waitJitterShape = {
  ratio: defaulted(num(0, 1), 0.05),
  maxMs: defaulted(num(0, 3_600_000), 1000),
};

const retrySchema = strict(retryShape);
const retryBudgetSchema = strict(retryBudgetShape);
const circuitBreakerSchema = strict(circuitBreakerShape);
const idempotencySchema = strict(idempotencyShape);

const hostShape = {
  rate: num(0, 1e9, true),
  burst: num(1, 1e9),
  concurrency: defaulted(intOrInfinity(1), Number.POSITIVE_INFINITY),
  maxQueue: defaulted(intOrInfinity(0), 10_000),
  queueTimeoutMs: defaulted(msOrInfinity(), Number.POSITIVE_INFINITY),
  maxRetryAfterMs: defaulted(num(0, 366 * DAY_MS), 60_000),
  learnLimits: defaulted(bool(), true),
  bodyLimits: bool(),
  coldStart: orObject(
    (v): v is boolean => typeof v === 'boolean',
    strict(coldStartShape),
    'must be a boolean or { initialWindow }',
  ),
  waitJitter: strict(waitJitterShape),
  timeoutMs: defaulted(msOrInfinity(), Number.POSITIVE_INFINITY),
  attemptTimeoutMs: defaulted(msOrInfinity(), Number.POSITIVE_INFINITY),
  retry: offOr(retrySchema),
  retryBudget: offOr(retryBudgetSchema),
  circuitBreaker: offOr(circuitBreakerSchema),
  idempotency: offOr(idempotencySchema),
  cost: defaulted(
    is<number | CostVector | ((request: CostContext) => number | CostVector)>(
      (v) => typeof v === 'function' || costOf(v) !== undefined,
      (v) => `${costProblem(v)}, or a function returning one`,
    ),
    1,
  ),
};
export const hostSchema = strict(hostShape);

/** The options whose value is an object (or `false`/`true`), merged field by field across layers. */
export const OBJECT_OPTIONS: ReadonlySet<string> = new Set(
  Object.keys(hostShape).filter((key) => hostShape[key as keyof typeof hostShape].shape),
);

/** A `HeadersInit` fetch would accept on every call (no CR or LF in a value, no bad name). */
const headersSchema: Check<HeadersInit> = {
  problem(value) {
    if (typeof value !== 'object' || value === null) {
      return { at: [], message: 'must be a Headers, an object or an array of pairs' };
    }
    try {
      new Headers(value as HeadersInit);
      return undefined;
    } catch (error) {
      // The runtime's message quotes the value: keep a CR or LF in it visible, on one line.
      const reason = (error instanceof Error ? error.message : String(error))
        .replaceAll('\r', '\\r')
        .replaceAll('\n', '\\n');
      return { at: [], message: `must be valid header fields (${reason})` };
    }
  },
};

const clientShape = {
  // Each entry is checked by `parseOptions`, by its pattern, into a new object (a `__proto__`
  // entry is checked and kept like any other).
  hosts: is<Record<string, HostOptions>>(
    (v) => typeof v === 'object' && v !== null && !Array.isArray(v),
    'must be an object of host patterns',
  ),
  headers: headersSchema,
  fetch: fn<typeof fetch>('must be a fetch function'),
  partition: fn<(request: CostContext) => string | undefined>(
    'must be a function (request) => string | undefined',
  ),
  store: is<StateStore>(
    (v) =>
      typeof v === 'object' &&
      v !== null &&
      typeof (v as StateStore).update === 'function' &&
      typeof (v as StateStore).delete === 'function',
    'must be a StateStore (an object with update() and delete())',
  ),
  clock: is<Clock>(isClock, CLOCK_PROBLEM),
  maxHosts: defaulted(int(1, 1e7), 1000),
  hostIdleMs: defaulted(num(1, 366 * DAY_MS), 300_000),
};
export const optionsSchema = strict({ ...hostShape, ...clientShape });

/** A call's own options: the keys `LimitedRequestInit` adds to `RequestInit`, each on its own. */
export const callShape = {
  // Checked where it is read, once, against the host's burst (`readCall` in attempt.ts): a getter
  // read here and again there could answer differently the second time.
  cost: is<number | CostVector>(() => true, ''),
  // What a header value may hold: no CR, LF or NUL (fetch would refuse, or worse, split).
  idempotencyKey: is<string | false>(
    (v) => v === false || (typeof v === 'string' && !/[\r\n\0]/.test(v)),
    'must be a header value (a string without CR, LF or NUL), or false',
  ),
  createBody: fn<() => BodyInit>('must be a function () => BodyInit'),
  timeoutMs: msOrInfinity(),
  attemptTimeoutMs: msOrInfinity(),
  partition: is<string>(
    (v) => typeof v === 'string' && v.length <= MAX_PARTITION_LENGTH,
    `must be a string of at most ${MAX_PARTITION_LENGTH} characters`,
  ),
  retry: offOr(strict({ retries: retryShape.retries, shouldRetry: retryShape.shouldRetry })),
};
export const CALL_KEYS = Object.keys(callShape) as (keyof typeof callShape)[];

/**
 * What `limitedInit` takes: a call's own options but `createBody`, the cost checked at once. Made
 * on first use, so that a bundle without `limitedInit` carries none of it.
 */
export function makeInitSchema() {
  const { createBody, ...rest } = callShape;
  return strict({
    ...rest,
    cost: is<number | CostVector>(
      (v) => costOf(v) !== undefined,
      (v) => costProblem(v),
    ),
  });
}

// The schemas and the documented types must describe the same thing (see `Same`): a field added,
// removed or retyped on one side only stops this from compiling.
type CallOptions = Omit<LimitedRequestInit, keyof RequestInit>;
const schemasMatchTypes: [
  Same<TypeOf<typeof optionsSchema>, LimitedClientOptions>,
  Same<TypeOf<typeof hostSchema>, HostOptions>,
  Same<TypeOf<typeof retrySchema>, RetryOptions>,
  Same<TypeOf<typeof retryBudgetSchema>, RetryBudgetOptions>,
  Same<TypeOf<typeof circuitBreakerSchema>, CircuitBreakerOptions>,
  Same<TypeOf<typeof idempotencySchema>, IdempotencyOptions>,
  Same<TypeOf<ReturnType<typeof strict<typeof callShape>>>, CallOptions>,
  Same<TypeOf<ReturnType<typeof makeInitSchema>>, LimitedInitOptions>,
] = [true, true, true, true, true, true, true, true];
void schemasMatchTypes;

const declaredDefaults = {
  ...defaultsOf(hostShape),
  initialWindow: defaultsOf(coldStartShape).initialWindow,
  fallbackHoldMs: 1000,
  waitJitter: defaultsOf(waitJitterShape),
  retry: defaultsOf(retryShape),
  retryBudget: defaultsOf(retryBudgetShape),
  circuitBreaker: defaultsOf(circuitBreakerShape),
  idempotency: defaultsOf(idempotencyShape),
  ...defaultsOf(clientShape),
};
// A default declared in the schema must be in the documented type of DEFAULTS, and back.
const defaultsMatchType: Same<typeof declaredDefaults, Defaults> = true;
void defaultsMatchType;

/**
 * Every default, in one place: the value an option takes when it is `undefined`, as the schema
 * declares it. Times are in milliseconds, rates in units per second; `Infinity` means "no bound".
 * See each option's doc comment for its meaning, and {@link Defaults} for the two entries that
 * are not options of the same name.
 */
export const DEFAULTS: Defaults = Object.freeze(declaredDefaults);

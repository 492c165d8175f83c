/**
 * The schema of the client's options, with each option's allowed range and default, and the two
 * checks built on it: {@link parseOptions} at construction (unknown keys refused: a typo must not
 * pass silently) and {@link checkCallOptions} on every call (its own keys only: a `RequestInit`
 * has many others). A mistake reads `invalid option retry.retries: must be an integer from 0 to
 * 100, got 1.5` (see `option-checks.ts`).
 *
 * Written with `zod/mini`, zod's tree-shakable form, so that the core stays small in a browser
 * bundle. The documented types in `types.ts` and `../types.ts` are checked against the schemas at
 * compile time, both ways ({@link Same}), and {@link DEFAULTS} is read from the schemas.
 *
 * @module
 */
import * as z from 'zod/mini';
import { CLOCK_PROBLEM, type Clock, isClock } from '../../clock.js';
import { InvalidOptionError } from '../../errors.js';
import { invalidOption, optionError, type Same } from '../../option-checks.js';
import { type CostVector, costOf, costProblem } from '../cost.js';
import { hostPatternProblem } from '../host-match.js';
import type { StateStore } from '../store.js';
import type { LimitedInitOptions, LimitedRequestInit, ShouldRetry } from '../types.js';
import { checkBurst, checkBurstHasRate } from './cross-checks.js';
import {
  bool,
  defaulted,
  fn,
  int,
  intOrInfinity,
  msOrInfinity,
  num,
  offOr,
  optional,
  orObject,
  strictObject,
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

type DefaultsOf<Shape> = {
  readonly [K in keyof Shape as Shape[K] extends { defaultValue: unknown }
    ? K
    : never]: Shape[K] extends {
    defaultValue: infer V;
  }
    ? V
    : never;
};
/** The defaults declared in a shape, frozen (arrays too). */
function defaultsOf<Shape extends object>(shape: Shape): DefaultsOf<Shape> {
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(shape)) {
    if ('defaultValue' in field) {
      const value: unknown = field.defaultValue;
      out[key] = Array.isArray(value) ? Object.freeze([...value]) : value;
    }
  }
  return Object.freeze(out) as DefaultsOf<Shape>;
}

const retryShape = {
  retries: defaulted(int(0, 100), 3),
  baseDelayMs: defaulted(num(0, DAY_MS), 100),
  maxDelayMs: defaulted(num(0, DAY_MS), 10_000),
  shouldRetry: optional(fn<ShouldRetry>('must be a function (context) => boolean')),
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
    z.custom<string>((v) => typeof v === 'string' && TOKEN.test(v), {
      error: 'must be a header name',
    }),
    'Idempotency-Key',
  ),
  // A custom check rather than z.array: one schema kind less in the core bundle.
  methods: defaulted(
    z.custom<string[]>(
      (v) => Array.isArray(v) && v.every((m) => typeof m === 'string' && TOKEN.test(m)),
      { error: 'must be an array of HTTP methods' },
    ),
    ['POST', 'PATCH'],
  ),
  honoured: optional(bool('must be true or false')),
  knownProviders: defaulted(bool('must be true or false'), true),
};
const coldStartShape = { initialWindow: defaulted(int(1, 1000), 1) };
const waitJitterShape = {
  ratio: defaulted(num(0, 1), 0.05),
  maxMs: defaulted(num(0, 3_600_000), 1000),
};

const retrySchema = strictObject(retryShape);
const retryBudgetSchema = strictObject(retryBudgetShape);
const circuitBreakerSchema = strictObject(circuitBreakerShape);
const idempotencySchema = strictObject(idempotencyShape);

const hostShape = {
  rate: optional(num(0, 1e9, true)),
  burst: optional(num(1, 1e9)),
  concurrency: defaulted(intOrInfinity(1), Number.POSITIVE_INFINITY),
  maxQueue: defaulted(intOrInfinity(0), 10_000),
  queueTimeoutMs: defaulted(msOrInfinity(), Number.POSITIVE_INFINITY),
  maxRetryAfterMs: defaulted(num(0, 366 * DAY_MS), 60_000),
  learnLimits: defaulted(bool('must be true or false'), true),
  bodyLimits: optional(bool('must be true or false')),
  coldStart: optional(
    orObject(
      (v): v is boolean => typeof v === 'boolean',
      strictObject(coldStartShape),
      'must be a boolean or { initialWindow }',
    ),
  ),
  waitJitter: optional(strictObject(waitJitterShape)),
  timeoutMs: defaulted(msOrInfinity(), Number.POSITIVE_INFINITY),
  attemptTimeoutMs: defaulted(msOrInfinity(), Number.POSITIVE_INFINITY),
  retry: offOr(retrySchema),
  retryBudget: offOr(retryBudgetSchema),
  circuitBreaker: offOr(circuitBreakerSchema),
  idempotency: offOr(idempotencySchema),
  cost: defaulted(
    z.custom<number | CostVector | ((request: CostContext) => number | CostVector)>(
      (v) => typeof v === 'function' || costOf(v) !== undefined,
      { error: (issue) => `${costProblem(issue.input)}, or a function returning one` },
    ),
    1,
  ),
};
const hostSchema = strictObject(hostShape);

/** A `HeadersInit` fetch would accept on every call (no CR or LF in a value, no bad name). */
const headersSchema = z
  .custom<HeadersInit>((v) => typeof v === 'object' && v !== null, {
    error: 'must be a Headers, an object or an array of pairs',
  })
  .check(
    z.superRefine((value, ctx) => {
      try {
        new Headers(value);
      } catch (error) {
        // The runtime's message quotes the value: keep a CR or LF in it visible, on one line.
        const reason = (error instanceof Error ? error.message : String(error))
          .replaceAll('\r', '\\r')
          .replaceAll('\n', '\\n');
        ctx.addIssue({ code: 'custom', message: `must be valid header fields (${reason})` });
      }
    }),
  );

const clientShape = {
  // Each entry is checked by `parseOptions`, by its pattern (a z.record would cost the core bundle
  // a schema kind, and drop a `__proto__` entry unchecked).
  hosts: optional(
    z.custom<Record<string, HostOptions>>(
      (v) => typeof v === 'object' && v !== null && !Array.isArray(v),
      { error: 'must be an object of host patterns' },
    ),
  ),
  headers: optional(headersSchema),
  fetch: optional(fn<typeof fetch>('must be a fetch function')),
  partition: optional(
    fn<(request: CostContext) => string | undefined>(
      'must be a function (request) => string | undefined',
    ),
  ),
  store: optional(
    z.custom<StateStore>(
      (v) =>
        typeof v === 'object' &&
        v !== null &&
        typeof (v as StateStore).update === 'function' &&
        typeof (v as StateStore).delete === 'function',
      { error: 'must be a StateStore (an object with update() and delete())' },
    ),
  ),
  clock: optional(z.custom<Clock>(isClock, { error: CLOCK_PROBLEM })),
  maxHosts: defaulted(int(1, 1e7), 1000),
  hostIdleMs: defaulted(num(1, 366 * DAY_MS), 300_000),
};
const optionsSchema = strictObject({ ...hostShape, ...clientShape });

const HEADER_VALUE = 'must be a header value (a string without CR, LF or NUL), or false';

/** A call's own options: the keys `LimitedRequestInit` adds to `RequestInit`, each on its own. */
const callShape = {
  // Checked where it is read, once, against the host's burst (`readCall` in attempt.ts): a getter
  // read here and again there could answer differently the second time.
  cost: optional(z.custom<number | CostVector>(() => true)),
  idempotencyKey: optional(
    // What a header value may hold: no CR, LF or NUL (fetch would refuse, or worse, split).
    z.custom<string | false>((v) => v === false || (typeof v === 'string' && !/[\r\n\0]/.test(v)), {
      error: HEADER_VALUE,
    }),
  ),
  createBody: optional(fn<() => BodyInit>('must be a function () => BodyInit')),
  timeoutMs: optional(msOrInfinity()),
  attemptTimeoutMs: optional(msOrInfinity()),
  partition: optional(
    z.custom<string>((v) => typeof v === 'string' && v.length <= MAX_PARTITION_LENGTH, {
      error: `must be a string of at most ${MAX_PARTITION_LENGTH} characters`,
    }),
  ),
  retry: offOr(
    strictObject({
      retries: retryShape.retries,
      shouldRetry: retryShape.shouldRetry,
    }),
  ),
};
const CALL_KEYS = Object.keys(callShape) as (keyof typeof callShape)[];
/** The same as one object, for the compile-time check against `LimitedRequestInit`. */
const callSchema = strictObject(callShape);

/**
 * What `limitedInit` takes: a call's own options but `createBody`, the cost checked at once. Made
 * on first use, so that a bundle without `limitedInit` carries none of it.
 */
function makeInitSchema() {
  return strictObject({
    cost: optional(
      z.custom<number | CostVector>((v) => costOf(v) !== undefined, {
        error: (issue) => costProblem(issue.input),
      }),
    ),
    idempotencyKey: callShape.idempotencyKey,
    timeoutMs: callShape.timeoutMs,
    attemptTimeoutMs: callShape.attemptTimeoutMs,
    partition: callShape.partition,
    retry: callShape.retry,
  });
}
let initSchema: ReturnType<typeof makeInitSchema> | undefined;

// The schemas and the documented types must describe the same thing (see `Same`): a field added,
// removed or retyped on one side only stops this from compiling.
type CallOptions = Omit<LimitedRequestInit, keyof RequestInit>;
const schemasMatchTypes: [
  Same<z.input<typeof optionsSchema>, LimitedClientOptions>,
  Same<z.output<typeof optionsSchema>, LimitedClientOptions>,
  Same<z.input<typeof hostSchema>, HostOptions>,
  Same<z.input<typeof retrySchema>, RetryOptions>,
  Same<z.input<typeof retryBudgetSchema>, RetryBudgetOptions>,
  Same<z.input<typeof circuitBreakerSchema>, CircuitBreakerOptions>,
  Same<z.input<typeof idempotencySchema>, IdempotencyOptions>,
  Same<z.input<typeof callSchema>, CallOptions>,
  Same<z.input<ReturnType<typeof makeInitSchema>>, LimitedInitOptions>,
] = [true, true, true, true, true, true, true, true, true];
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

/**
 * Validates the options of `LimitedClient` or `wrapFetch` and returns them as parsed (functions,
 * the store, the clock and headers passed through as given). Throws {@link InvalidOptionError}
 * naming the option, the value given and what is allowed: `invalid option
 * hosts["api.example.com"].rate: must be a number above 0 and up to 1000000000, got -1`.
 */
export function parseOptions(options: unknown): LimitedClientOptions {
  const input = options ?? {};
  const result = optionsSchema.safeParse(input);
  if (!result.success) throw optionError(result.error.issues, input);
  const parsed: LimitedClientOptions = result.data;
  if (parsed.hosts !== undefined) parsed.hosts = parseHosts(parsed.hosts);
  checkBurst(parsed, 'options');
  for (const [pattern, host] of Object.entries(parsed.hosts ?? {})) {
    checkBurst({ ...parsed, ...host }, `hosts[${JSON.stringify(pattern)}]`);
  }
  checkBurstHasRate(parsed);
  return parsed;
}

/** Each `hosts` entry: its pattern, then its options, as parsed (a new object, own keys only). */
function parseHosts(hosts: Record<string, unknown>): Record<string, HostOptions> {
  const entries: [string, HostOptions][] = [];
  for (const pattern of Object.keys(hosts)) {
    const path = `hosts[${JSON.stringify(pattern)}]`;
    const problem = hostPatternProblem(pattern);
    if (problem) throw new InvalidOptionError(path, problem);
    const entry = hostSchema.safeParse(hosts[pattern]);
    if (!entry.success) throw optionError(entry.error.issues, hosts[pattern], path);
    entries.push([pattern, entry.data]);
  }
  // Defines each key as an own property, `__proto__` included.
  return Object.fromEntries(entries);
}

/**
 * Checks a call's own options (`cost`, `retry`, `timeoutMs`... of a `LimitedRequestInit`) before
 * anything is sent; other keys are fetch's. Throws {@link InvalidOptionError} naming the option
 * under `init` (`init.retry.retries`) and the call (its method, from `init` or `input`, and
 * `url`). On the path of every call: a call that sets none of them costs seven property reads,
 * and each one set is checked alone (tens of nanoseconds for a number), never the whole `init`.
 */
export function checkCallOptions(
  init: LimitedRequestInit | undefined,
  url: string,
  input?: Request,
): void {
  if (init === undefined || init === null) return;
  for (const key of CALL_KEYS) {
    if (init[key] !== undefined) checkCallOption(init, key, url, input);
  }
}

function checkCallOption(
  init: LimitedRequestInit,
  key: keyof typeof callShape,
  url: string,
  input: Request | undefined,
): void {
  const value = init[key];
  const result = callShape[key].safeParse(value);
  if (result.success) return;
  const method = (init.method ?? input?.method ?? 'GET').toUpperCase();
  throw optionError(result.error.issues, value, `init.${key}`, { method, url });
}

/**
 * The options of `limitedInit`, copied into a new object (each read once, getters included; a
 * key `__proto__` stays a key) and checked. Throws {@link InvalidOptionError} naming the option
 * (`limitedInit.cost`), the value and what is allowed; for an unknown key (`createBody` included)
 * or anything but an object. A cost is checked against the most any cost may be here, and
 * against the host's burst on each call.
 */
export function parseInitOptions(options: unknown): LimitedInitOptions {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw invalidOption('limitedInit', "must be an object of a call's own options", options);
  }
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(options)) {
    const value = (options as Record<string, unknown>)[key];
    if (value !== undefined) Object.defineProperty(copy, key, { value, enumerable: true });
  }
  initSchema ??= makeInitSchema();
  const result = initSchema.safeParse(copy);
  if (!result.success) throw optionError(result.error.issues, copy, 'limitedInit');
  return copy as LimitedInitOptions;
}

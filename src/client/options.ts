/**
 * The client's options: their public shape, the one defaults constant, the zod schema that checks
 * them at construction, and the normalising step that turns them, once per host, into the internal
 * {@link HostPolicy} the pipeline runs on.
 *
 * @module
 */
import { z } from 'zod';
import type { Clock } from '../clock.js';
import { InvalidOptionError } from '../errors.js';
import { HostMatcher, hostPatternProblem } from './host-match.js';
import type { HostStateConfig } from './host-state.js';
import type { BreakerConfig } from './policies/circuit-breaker.js';
import type { StateStore } from './store.js';
import type { ShouldRetry } from './types.js';

/** What a `cost` function is given. */
export interface CostContext {
  method: string;
  url: string;
}

/** Retry options. */
export interface RetryOptions {
  /** Retries after the first attempt, at most. @default 3 */
  retries?: number;
  /** Backoff ceiling before the first retry, in milliseconds (doubles per retry). @default 100 */
  baseDelayMs?: number;
  /** Largest backoff ceiling, in milliseconds. @default 10_000 */
  maxDelayMs?: number;
  /**
   * Replaces the rule that decides whether an outcome is worth a retry (see `defaultShouldRetry`,
   * which you may call from yours). The budget, the breaker, `retries` and body replayability still
   * apply after it.
   */
  shouldRetry?: ShouldRetry;
}

/** Retry budget options (see `retry-budget.ts`). */
export interface RetryBudgetOptions {
  /** Retries allowed per request sent, over the window. @default 0.1 */
  ratio?: number;
  /** Retries allowed per second whatever the traffic. @default 1 */
  minPerSecond?: number;
  /** The window, in milliseconds. @default 10_000 */
  windowMs?: number;
}

/** Circuit breaker options (see `circuit-breaker.ts`). */
export interface CircuitBreakerOptions {
  /** Failure share over the window that opens the circuit. @default 0.5 */
  failureRatio?: number;
  /** Fewest outcomes in the window before the ratio counts. @default 10 */
  minRequests?: number;
  /** Sliding window, in milliseconds. @default 10_000 */
  windowMs?: number;
  /** Failures in a row that open the circuit. @default 5 */
  consecutiveFailures?: number;
  /** Time open before probing, in milliseconds. @default 5_000 */
  coolDownMs?: number;
  /** Probes when half-open; all must succeed to close. @default 1 */
  halfOpenProbes?: number;
}

/** Idempotency key options. */
export interface IdempotencyOptions {
  /** Header that carries the key. @default 'Idempotency-Key' */
  header?: string;
  /** Methods that get a key when the caller did not set one. @default ['POST', 'PATCH'] */
  methods?: string[];
}

/** Options that `options.hosts` may override per host. */
export interface PolicyOptions {
  /** Client-side rate limit, in units per second (a token bucket). @default none */
  rate?: number;
  /** Capacity of that bucket, in units. @default max(1, ceil(rate)) */
  burst?: number;
  /** Requests in flight to the host at once, at most. @default Infinity */
  concurrency?: number;
  /** Requests waiting for the host at once, at most; past it, `QueueFullError`. @default 10_000 */
  maxQueue?: number;
  /** Longest wait in the queue, in milliseconds; past it, `QueueTimeoutError`. @default Infinity */
  queueTimeoutMs?: number;
  /**
   * Longest wait for the server's limit, in milliseconds. A 429 or 503 asking for longer is
   * returned at once instead of retried; a request that a learned limit would hold longer is
   * rejected with `RateLimitError` instead of waiting.
   * @default 60_000
   */
  maxRetryAfterMs?: number;
  /** Read every response's rate-limit headers and hold requests the server would refuse. @default true */
  learnLimits?: boolean;
  /**
   * Send `initialWindow` requests to a host the client knows nothing about, and open up when it
   * answers. Costs one round trip per new host; `false` turns it off.
   * @default { initialWindow: 1 }
   */
  coldStart?: boolean | { initialWindow?: number };
  /** Random extra on server-given waits, so a fleet does not wake at once. */
  waitJitter?: { /** @default 0.05 */ ratio?: number /** @default 1000 */; maxMs?: number };
  /** Overall limit per call (retries and waits included), in milliseconds. @default Infinity */
  timeoutMs?: number;
  /** Limit per attempt, in milliseconds. @default Infinity */
  attemptTimeoutMs?: number;
  /** Retries; `false` turns them off. */
  retry?: false | RetryOptions;
  /** The host's retry budget; `false` turns it off. */
  retryBudget?: false | RetryBudgetOptions;
  /** The host's circuit breaker; `false` turns it off. */
  circuitBreaker?: false | CircuitBreakerOptions;
  /** Idempotency keys on writes; `false` turns them off. */
  idempotency?: false | IdempotencyOptions;
  /** Units a request costs: a number or a function of the request. @default 1 */
  cost?: number | ((request: CostContext) => number);
}

/** Options of `LimitedClient` and `wrapFetch`. */
export interface LimitedClientOptions extends PolicyOptions {
  /** Overrides per host: exact (`api.example.com`, `127.0.0.1:8080`) or `*.example.com`. */
  hosts?: Record<string, PolicyOptions>;
  /** Headers sent with every request of a `LimitedClient` (the call's own headers win). */
  headers?: HeadersInit;
  /** The fetch to call. @default globalThis.fetch, looked up at each call */
  fetch?: typeof fetch;
  /** Where shared state lives. @default a new MemoryStore */
  store?: StateStore;
  /** Time and chance. @default systemClock */
  clock?: Clock;
  /** Hosts kept at once; the least recently used idle host is dropped past it. @default 1000 */
  maxHosts?: number;
  /** A host unused this long is dropped, in milliseconds. @default 300_000 */
  hostIdleMs?: number;
}

/** Every default, in one place. */
export const DEFAULTS = Object.freeze({
  concurrency: Number.POSITIVE_INFINITY,
  maxQueue: 10_000,
  queueTimeoutMs: Number.POSITIVE_INFINITY,
  maxRetryAfterMs: 60_000,
  learnLimits: true,
  initialWindow: 1,
  fallbackHoldMs: 1000,
  waitJitter: Object.freeze({ ratio: 0.05, maxMs: 1000 }),
  timeoutMs: Number.POSITIVE_INFINITY,
  attemptTimeoutMs: Number.POSITIVE_INFINITY,
  retry: Object.freeze({ retries: 3, baseDelayMs: 100, maxDelayMs: 10_000 }),
  retryBudget: Object.freeze({ ratio: 0.1, minPerSecond: 1, windowMs: 10_000 }),
  circuitBreaker: Object.freeze({
    failureRatio: 0.5,
    minRequests: 10,
    windowMs: 10_000,
    consecutiveFailures: 5,
    coolDownMs: 5_000,
    halfOpenProbes: 1,
  }),
  idempotency: Object.freeze({ header: 'Idempotency-Key', methods: ['POST', 'PATCH'] }),
  cost: 1,
  maxHosts: 1000,
  hostIdleMs: 300_000,
});

// ---------------------------------------------------------------------------------------------
// Schema. Each check carries the allowed range as its message; `parseOptions` adds the option's
// path and the value that was given.

const DAY_MS = 86_400_000;
const num = (min: number, max: number, exclusiveMin = false) => {
  const d = `a number ${exclusiveMin ? 'above' : 'from'} ${min} ${exclusiveMin ? 'and up to' : 'to'} ${max}`;
  const base = z.number({ error: d }).max(max, { error: d });
  return exclusiveMin ? base.gt(min, { error: d }) : base.min(min, { error: d });
};
const int = (min: number, max: number) => {
  const d = `an integer from ${min} to ${max}`;
  return z.number({ error: d }).int({ error: d }).min(min, { error: d }).max(max, { error: d });
};
const intOrInfinity = (min: number) => {
  const d = `an integer from ${min} up, or Infinity`;
  return z.union(
    [
      z.number({ error: d }).int({ error: d }).min(min, { error: d }),
      z.literal(Number.POSITIVE_INFINITY, { error: d }),
    ],
    { error: d },
  );
};
const msOrInfinity = () => {
  const d = 'a number of milliseconds above 0, or Infinity';
  return z.union(
    [z.number({ error: d }).gt(0, { error: d }), z.literal(Number.POSITIVE_INFINITY, { error: d })],
    { error: d },
  );
};
const fn = (d: string) =>
  z.custom<(...args: never[]) => unknown>((v) => typeof v === 'function', { error: d });
const off = z.literal(false, { error: 'false or an object' });
/** `false` (the policy is off) or the policy's options. */
const offOr = <T extends z.ZodType>(schema: T) =>
  z.union([off, schema], { error: 'false or an object' }).optional();

const METHOD = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const policySchema = z
  .object({
    rate: num(0, 1e9, true).optional(),
    burst: num(1, 1e9).optional(),
    concurrency: intOrInfinity(1).optional(),
    maxQueue: intOrInfinity(0).optional(),
    queueTimeoutMs: msOrInfinity().optional(),
    maxRetryAfterMs: num(0, 366 * DAY_MS).optional(),
    learnLimits: z.boolean({ error: 'true or false' }).optional(),
    coldStart: z
      .union([z.boolean(), z.object({ initialWindow: int(1, 1000).optional() }).strict()], {
        error: 'a boolean or { initialWindow }',
      })
      .optional(),
    waitJitter: z
      .object({ ratio: num(0, 1).optional(), maxMs: num(0, 3_600_000).optional() })
      .strict()
      .optional(),
    timeoutMs: msOrInfinity().optional(),
    attemptTimeoutMs: msOrInfinity().optional(),
    retry: offOr(
      z
        .object({
          retries: int(0, 100).optional(),
          baseDelayMs: num(0, DAY_MS).optional(),
          maxDelayMs: num(0, DAY_MS).optional(),
          shouldRetry: fn('a function (context) => boolean').optional(),
        })
        .strict(),
    ),
    retryBudget: offOr(
      z
        .object({
          ratio: num(0, 10).optional(),
          minPerSecond: num(0, 1e6).optional(),
          windowMs: num(10, DAY_MS).optional(),
        })
        .strict(),
    ),
    circuitBreaker: offOr(
      z
        .object({
          failureRatio: num(0, 1, true).optional(),
          minRequests: int(1, 1e9).optional(),
          windowMs: num(10, DAY_MS).optional(),
          consecutiveFailures: int(1, 1e9).optional(),
          coolDownMs: num(0, DAY_MS).optional(),
          halfOpenProbes: int(1, 1000).optional(),
        })
        .strict(),
    ),
    idempotency: offOr(
      z
        .object({
          header: z
            .string({ error: 'a header name' })
            .regex(METHOD, { error: 'a header name' })
            .optional(),
          methods: z
            .array(z.string().regex(METHOD, { error: 'an HTTP method' }), {
              error: 'an array of HTTP methods',
            })
            .optional(),
        })
        .strict(),
    ),
    cost: z
      .union([num(0, 1e9), fn('a function (request) => number')], {
        error: 'a number from 0 to 1000000000, or a function',
      })
      .optional(),
  })
  .strict();

const optionsSchema = policySchema
  .extend({
    hosts: z.record(z.string(), policySchema, { error: 'an object of host patterns' }).optional(),
    headers: z
      .custom<HeadersInit>((v) => typeof v === 'object' && v !== null, {
        error: 'a Headers, an object or an array of pairs',
      })
      .optional(),
    fetch: fn('a fetch function').optional(),
    store: z
      .custom<StateStore>(
        (v) =>
          typeof v === 'object' &&
          v !== null &&
          typeof (v as StateStore).update === 'function' &&
          typeof (v as StateStore).delete === 'function',
        { error: 'a StateStore (update, delete)' },
      )
      .optional(),
    clock: z
      .custom<Clock>(
        (v) =>
          typeof v === 'object' &&
          v !== null &&
          ['now', 'sleep', 'random'].every(
            (k) => typeof (v as Record<string, unknown>)[k] === 'function',
          ),
        { error: 'a Clock (now, sleep, random)' },
      )
      .optional(),
    maxHosts: int(1, 1e7).optional(),
    hostIdleMs: num(1, 366 * DAY_MS).optional(),
  })
  .strict();

/**
 * For a union that failed, the issue of the branch that got furthest into the value (`retry:
 * { retries: -1 }` fails in the object branch at `retries`, not at `retry`), with its full path.
 */
function deepest(issue: z.core.$ZodIssue): z.core.$ZodIssue {
  if (issue.code !== 'invalid_union') return issue;
  let best: z.core.$ZodIssue | undefined;
  for (const branch of issue.errors) {
    for (const sub of branch) {
      const candidate = deepest(sub);
      if (candidate.path.length > (best?.path.length ?? 0)) best = candidate;
    }
  }
  return best ? { ...best, path: [...issue.path, ...best.path] } : issue;
}

function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else if (typeof key === 'string' && /^[A-Za-z_$][\w$]*$/.test(key))
      out += out ? `.${key}` : key;
    else out += `[${JSON.stringify(String(key))}]`;
  }
  return out || 'options';
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let value = root;
  for (const key of path) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

function show(value: unknown): string {
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  if (value === undefined) return 'undefined';
  try {
    const text = JSON.stringify(value);
    return text.length > 60 ? `${text.slice(0, 57)}...` : text;
  } catch {
    return String(value);
  }
}

/**
 * Validates user options. Throws {@link InvalidOptionError} naming the option, the value given and
 * what is allowed: `invalid option hosts["api.example.com"].rate: must be a number above 0 and up
 * to 1000000000 (got -1)`.
 */
export function parseOptions(options: unknown): LimitedClientOptions {
  const result = optionsSchema.safeParse(options ?? {});
  if (!result.success) {
    const issue = deepest(result.error.issues[0] as z.core.$ZodIssue);
    if (issue.code === 'unrecognized_keys') {
      const keys = issue.keys.map((k) => formatPath([...issue.path, k]));
      throw new InvalidOptionError(keys.join(', '), 'unknown option (check the spelling)');
    }
    const name = formatPath(issue.path);
    throw new InvalidOptionError(
      name,
      `must be ${issue.message} (got ${show(valueAt(options, issue.path))})`,
    );
  }
  const parsed = options as LimitedClientOptions | undefined;
  for (const pattern of Object.keys(parsed?.hosts ?? {})) {
    const problem = hostPatternProblem(pattern);
    if (problem) throw new InvalidOptionError(`hosts[${JSON.stringify(pattern)}]`, problem);
  }
  checkBurst(parsed ?? {}, 'options');
  for (const [pattern, host] of Object.entries(parsed?.hosts ?? {})) {
    checkBurst({ ...parsed, ...host }, `hosts[${JSON.stringify(pattern)}]`);
  }
  return parsed ?? {};
}

function checkBurst(options: PolicyOptions, where: string): void {
  if (typeof options.cost === 'number' && options.rate !== undefined) {
    const burst = options.burst ?? Math.max(1, Math.ceil(options.rate));
    if (options.cost > burst) {
      throw new InvalidOptionError(
        `${where}.cost`,
        `must not exceed burst ${burst} (got ${options.cost}): such a request could never be sent`,
      );
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Normalised, per host.

/** Resolved retry parameters. */
export interface RetryPolicy {
  retries: number;
  baseDelayMs: number;
  maxDelayMs: number;
  shouldRetry: ShouldRetry | undefined;
}

/** Everything one host's pipeline needs, resolved once when the host is first seen. */
export interface HostPolicy {
  concurrency: number;
  maxQueue: number;
  queueTimeoutMs: number;
  maxRetryAfterMs: number;
  timeoutMs: number;
  attemptTimeoutMs: number;
  cost: number | ((request: CostContext) => number);
  /** Largest cost the bucket can pay (Infinity without a bucket). */
  maxCost: number;
  retry: RetryPolicy;
  idempotency: { header: string; methods: ReadonlySet<string> } | undefined;
  breaker: BreakerConfig | undefined;
  state: HostStateConfig;
  /** Time-to-live of the host's shared state, in milliseconds. */
  stateTtlMs: number;
}

function mergeObject<T extends object>(
  base: T | false | undefined,
  override: T | boolean | undefined,
): T | false | undefined {
  if (override === undefined) return base;
  if (override === false) return false;
  if (override === true) return base === false ? ({} as T) : (base ?? ({} as T));
  return { ...(base || {}), ...override } as T;
}

function merge(layers: readonly PolicyOptions[]): PolicyOptions {
  const out: PolicyOptions = {};
  for (const layer of layers) {
    for (const key of Object.keys(layer) as (keyof PolicyOptions)[]) {
      const value = layer[key];
      if (value === undefined) continue;
      if (
        key === 'retry' ||
        key === 'retryBudget' ||
        key === 'circuitBreaker' ||
        key === 'idempotency' ||
        key === 'waitJitter'
      ) {
        (out as Record<string, unknown>)[key] = mergeObject(
          out[key] as object | false | undefined,
          value as object | boolean,
        );
      } else if (key === 'coldStart') {
        out.coldStart = mergeObject(
          out.coldStart as { initialWindow?: number } | false | undefined,
          value as boolean | { initialWindow?: number },
        );
      } else {
        (out as Record<string, unknown>)[key] = value;
      }
    }
  }
  return out;
}

function resolve(o: PolicyOptions, hostIdleMs: number): HostPolicy {
  const d = DEFAULTS;
  const retry = o.retry === false ? { retries: 0 } : (o.retry ?? {});
  const budget = o.retryBudget === false ? undefined : { ...d.retryBudget, ...o.retryBudget };
  const breaker =
    o.circuitBreaker === false ? undefined : { ...d.circuitBreaker, ...o.circuitBreaker };
  const idem = o.idempotency === false ? undefined : { ...d.idempotency, ...o.idempotency };
  const cold = o.coldStart === false ? undefined : o.coldStart === true ? {} : (o.coldStart ?? {});
  const bucket =
    o.rate === undefined
      ? undefined
      : { rate: o.rate, burst: o.burst ?? Math.max(1, Math.ceil(o.rate)) };
  const learn = o.learnLimits ?? d.learnLimits;
  return {
    concurrency: o.concurrency ?? d.concurrency,
    maxQueue: o.maxQueue ?? d.maxQueue,
    queueTimeoutMs: o.queueTimeoutMs ?? d.queueTimeoutMs,
    maxRetryAfterMs: o.maxRetryAfterMs ?? d.maxRetryAfterMs,
    timeoutMs: o.timeoutMs ?? d.timeoutMs,
    attemptTimeoutMs: o.attemptTimeoutMs ?? d.attemptTimeoutMs,
    cost: o.cost ?? d.cost,
    maxCost: bucket ? bucket.burst : Number.POSITIVE_INFINITY,
    retry: {
      retries: retry.retries ?? d.retry.retries,
      baseDelayMs: retry.baseDelayMs ?? d.retry.baseDelayMs,
      maxDelayMs: retry.maxDelayMs ?? d.retry.maxDelayMs,
      shouldRetry: retry.shouldRetry,
    },
    idempotency: idem
      ? { header: idem.header, methods: new Set(idem.methods.map((m) => m.toUpperCase())) }
      : undefined,
    breaker,
    state: {
      limits: learn
        ? {
            initialWindow: cold ? (cold.initialWindow ?? d.initialWindow) : undefined,
            jitter: { ...d.waitJitter, ...o.waitJitter },
            fallbackHoldMs: d.fallbackHoldMs,
          }
        : undefined,
      bucket,
      budget,
    },
    stateTtlMs: hostIdleMs,
  };
}

/** The options of a client, resolved: global settings, and a policy per host on demand. */
export class ResolvedOptions {
  readonly store: StateStore | undefined;
  readonly clock: Clock | undefined;
  readonly fetch: typeof fetch | undefined;
  readonly headers: HeadersInit | undefined;
  readonly maxHosts: number;
  readonly hostIdleMs: number;
  private readonly base: PolicyOptions;
  private readonly matcher: HostMatcher<PolicyOptions>;
  private defaultPolicy: HostPolicy | undefined;

  /** Validates `options` (throws {@link InvalidOptionError}) and keeps them for per-host resolution. */
  constructor(options: unknown) {
    const o = parseOptions(options);
    const { hosts, headers, fetch, store, clock, maxHosts, hostIdleMs, ...base } = o;
    this.store = store;
    this.clock = clock;
    this.fetch = fetch;
    this.headers = headers;
    this.maxHosts = maxHosts ?? DEFAULTS.maxHosts;
    this.hostIdleMs = hostIdleMs ?? DEFAULTS.hostIdleMs;
    this.base = base;
    this.matcher = new HostMatcher(hosts ?? {});
    // Resolve every host entry now, so that a bad combination fails at construction.
    this.defaultPolicy = resolve(base, this.hostIdleMs);
  }

  /** The policy of a host: the global options merged with every matching `hosts` entry. */
  forHost(hostname: string, host: string): HostPolicy {
    const layers = this.matcher.match(hostname, host);
    if (layers.length === 0) {
      this.defaultPolicy ??= resolve(this.base, this.hostIdleMs);
      return this.defaultPolicy;
    }
    return resolve(merge([this.base, ...layers]), this.hostIdleMs);
  }
}

/**
 * Resolving options per host: the global options merged with every matching `hosts` entry, from
 * the least to the most specific, then normalised once into the internal {@link HostConfig} the
 * pipeline runs on (defaults filled in from `DEFAULTS`, parts turned off with `false` become `undefined`).
 *
 * @module
 */
import type { Clock } from '../../shared/clock.js';
import type { CostVector } from '../call/cost.js';
import { listedProvider } from '../call/key-honour.js';
import { HostMatcher } from '../host/host-match.js';
import type { StateStore } from '../host/store.js';
import type { WaitJitter } from '../retry/backoff.js';
import type { BreakerConfig } from '../rules/breaker.js';
import { FLIGHT_TTL_MS } from '../rules/flights.js';
import { bindRules, type HostRulesConfig, type RuleSet } from '../rules/host-rules.js';
import { type AnyRuleModule, RULES } from '../rules/registry.js';
import type { ShouldRetry } from '../types.js';
import { parseOptions } from './check.js';
import { DEFAULTS, OBJECT_OPTIONS } from './schema.js';
import type {
  CircuitBreakerOptions,
  CostContext,
  HostOptions,
  IdempotencyOptions,
  RetryBudgetOptions,
} from './types.js';

/** Resolved retry parameters. */
export interface RetryPolicy {
  retries: number;
  baseDelayMs: number;
  maxDelayMs: number;
  shouldRetry: ShouldRetry | undefined;
}

/** Everything one host's pipeline needs, resolved once when the host is first seen. */
export interface HostConfig {
  concurrency: number;
  maxQueue: number;
  queueTimeoutMs: number;
  maxRetryAfterMs: number;
  timeoutMs: number;
  attemptTimeoutMs: number;
  cost: number | CostVector | ((request: CostContext) => number | CostVector);
  /** Largest cost the bucket can pay (Infinity without a bucket). */
  maxCost: number;
  /** The look at answers' bodies: every call, none, or `undefined` by URL and body (`body/`). */
  bodyLimits: boolean | undefined;
  retry: RetryPolicy;
  /** Random extra on server-given waits. */
  jitter: WaitJitter;
  /**
   * Keys on writes, off when `undefined`. `honoured`: whether the host honours them, as declared
   * or listed (`undefined`: learned from its answers, see `key-honour.ts`).
   */
  idempotency:
    | {
        header: string;
        methods: ReadonlySet<string>;
        honoured: boolean | undefined;
        knownProviders: boolean;
      }
    | undefined;
  breaker: BreakerConfig | undefined;
  /** What the host's rules read of its options (see `rules/contract.ts`). */
  rules: HostRulesConfig;
  /** The rules of the registry that are on for this host, bound to their configuration. */
  ruleSet: RuleSet;
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

/** The layers, least specific first: an object option (the schema says which) merges field by field. */
function merge(layers: readonly HostOptions[]): HostOptions {
  const out: Record<string, unknown> = {};
  for (const layer of layers) {
    for (const [key, value] of Object.entries(layer)) {
      if (value === undefined) continue;
      out[key] = OBJECT_OPTIONS.has(key)
        ? mergeObject(out[key] as object | false | undefined, value as object | boolean)
        : value;
    }
  }
  return out as HostOptions;
}

/**
 * `defaults` with every field of `given` that is not `undefined`: an option written as
 * `{ coolDownMs: undefined }` takes its default, as an absent one does.
 */
function withDefaults<T extends object>(defaults: Readonly<Required<T>>, given: T | undefined) {
  const out = { ...defaults } as Required<T>;
  if (given === undefined) return out;
  for (const key of Object.keys(given) as (keyof T)[]) {
    const value = given[key];
    if (value !== undefined) out[key] = value as Required<T>[keyof T];
  }
  return out;
}

/** The options of one value that have a default. */
type Scalars = Pick<
  HostOptions,
  | 'concurrency'
  | 'maxQueue'
  | 'queueTimeoutMs'
  | 'maxRetryAfterMs'
  | 'learnLimits'
  | 'timeoutMs'
  | 'attemptTimeoutMs'
  | 'cost'
>;

function resolve(
  o: HostOptions,
  hostIdleMs: number,
  modules: readonly AnyRuleModule[],
): HostConfig {
  const d = DEFAULTS;
  const retry = o.retry === false ? { retries: 0 } : (o.retry ?? {});
  const budget =
    o.retryBudget === false
      ? undefined
      : withDefaults<RetryBudgetOptions>(d.retryBudget, o.retryBudget);
  const breaker =
    o.circuitBreaker === false
      ? undefined
      : withDefaults<CircuitBreakerOptions>(d.circuitBreaker, o.circuitBreaker);
  const idem =
    o.idempotency === false
      ? undefined
      : withDefaults<Omit<IdempotencyOptions, 'honoured'>>(d.idempotency, o.idempotency);
  const cold = o.coldStart === false ? undefined : o.coldStart === true ? {} : (o.coldStart ?? {});
  const bucket =
    o.rate === undefined
      ? undefined
      : { rate: o.rate, burst: o.burst ?? Math.max(1, Math.ceil(o.rate)) };
  // The options of one value, each with its default where it is unset.
  const t = withDefaults<Scalars>(d, o);
  const { concurrency, maxRetryAfterMs } = t;
  const jitter = withDefaults<{ ratio?: number; maxMs?: number }>(d.waitJitter, o.waitJitter);
  const rules: HostRulesConfig = {
    learn: t.learnLimits
      ? {
          initialWindow: cold ? (cold.initialWindow ?? d.initialWindow) : undefined,
          ...(Number.isFinite(concurrency) ? { openWindow: concurrency } : {}),
          jitter,
          fallbackHoldMs: d.fallbackHoldMs,
          // A wait the caller would not honour is recorded for no longer than one it would.
          maxHoldMs: Math.max(maxRetryAfterMs, d.fallbackHoldMs),
          // For attempts without a timeout of their own (the pipeline passes the others').
          flightTtlMs: FLIGHT_TTL_MS,
          longestFlightMs: Math.max(FLIGHT_TTL_MS, (o.attemptTimeoutMs ?? 0) + 1000),
        }
      : undefined,
    bucket,
    budget,
  };
  return {
    concurrency,
    maxQueue: t.maxQueue,
    queueTimeoutMs: t.queueTimeoutMs,
    maxRetryAfterMs,
    timeoutMs: t.timeoutMs,
    attemptTimeoutMs: t.attemptTimeoutMs,
    cost: t.cost,
    maxCost: bucket ? bucket.burst : Number.POSITIVE_INFINITY,
    bodyLimits: o.bodyLimits,
    retry: { ...withDefaults(d.retry, retry), shouldRetry: retry.shouldRetry },
    jitter,
    idempotency: idem
      ? {
          header: idem.header,
          methods: new Set(idem.methods.map((m) => m.toUpperCase())),
          honoured: o.idempotency ? o.idempotency.honoured : undefined,
          knownProviders: idem.knownProviders,
        }
      : undefined,
    breaker,
    rules,
    ruleSet: bindRules(rules, modules),
    stateTtlMs: hostIdleMs,
  };
}

/** The options of a client, resolved: global settings, and a policy per host on demand. */
export class ResolvedOptions {
  readonly store: StateStore | undefined;
  readonly clock: Clock | undefined;
  readonly fetch: typeof fetch | undefined;
  readonly headers: HeadersInit | undefined;
  readonly partition: ((request: CostContext) => string | undefined) | undefined;
  readonly maxHosts: number;
  readonly hostIdleMs: number;
  readonly #base: HostOptions;
  readonly #matcher: HostMatcher<HostOptions>;
  #defaultConfig: HostConfig | undefined;
  readonly #modules: readonly AnyRuleModule[];

  /**
   * Validates `options` (throws {@link InvalidOptionError}) and keeps them for per-host resolution.
   * @param modules the rules every host runs, in order: the registry's (`rules/registry.ts`).
   */
  constructor(options: unknown, modules: readonly AnyRuleModule[] = RULES) {
    const o = parseOptions(options);
    const { hosts, headers, fetch, partition, store, clock, maxHosts, hostIdleMs, ...base } = o;
    this.store = store;
    this.clock = clock;
    this.fetch = fetch;
    this.headers = headers;
    this.partition = partition;
    this.maxHosts = maxHosts ?? DEFAULTS.maxHosts;
    this.hostIdleMs = hostIdleMs ?? DEFAULTS.hostIdleMs;
    this.#base = base;
    this.#matcher = new HostMatcher(hosts ?? {});
    this.#modules = modules;
    // Resolve every host entry now, so that a bad combination fails at construction.
    this.#defaultConfig = resolve(base, this.hostIdleMs, modules);
  }

  /**
   * The policy of a host: the global options merged with every matching `hosts` entry, and the
   * host taken as honouring idempotency keys when it is a known provider (see `key-honour.ts`).
   */
  forHost(hostname: string, host: string): HostConfig {
    const layers = this.#matcher.match(hostname, host);
    let config: HostConfig;
    if (layers.length === 0) {
      this.#defaultConfig ??= resolve(this.#base, this.hostIdleMs, this.#modules);
      config = this.#defaultConfig;
    } else config = resolve(merge([this.#base, ...layers]), this.hostIdleMs, this.#modules);
    const idem = config.idempotency;
    if (
      idem?.honoured === undefined &&
      idem?.knownProviders &&
      listedProvider(idem.header, hostname)
    ) {
      return { ...config, idempotency: { ...idem, honoured: true } };
    }
    return config;
  }
}

/**
 * The client's options as users write them, documented field by field. The schema that checks
 * them, checked against these types at compile time both ways, and the one constant that holds
 * every default (`DEFAULTS`, read from the schema) are in `schema.ts`; the step that
 * resolves them per host is in `resolve.ts`.
 *
 * @module
 */
import type { Clock } from '../../shared/clock.js';
import type { CostVector } from '../call/cost.js';
import type { CostContext } from '../call/request-view.js';
import type { StateStore } from '../host/store.js';
import type { ShouldRetry } from '../types.js';

export type { CostContext } from '../call/request-view.js';

/** Retry options. */
export interface RetryOptions {
  /**
   * Retries after the first attempt, at most. A retry that waits for the host's pace (after a bare
   * 429 with no `Retry-After`, or for the probes of a lockout) is not counted: the pace caps what
   * the host is sent, and such retries are bounded by time instead, `maxRetryAfterMs` (ms) from
   * the call's first one, after which the call ends with its last response (`hold-too-long`).
   * `0`: no retry at all, paced ones included. @default 3
   */
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

/** Retry budget options (see `rules/budget.ts`). */
export interface RetryBudgetOptions {
  /** Retries allowed per request sent, over the window. @default 0.1 */
  ratio?: number;
  /** Retries allowed per second whatever the traffic. @default 1 */
  minPerSecond?: number;
  /** The window, in milliseconds. @default 10_000 */
  windowMs?: number;
}

/** Circuit breaker options (see `rules/breaker.ts`). */
export interface CircuitBreakerOptions {
  /** Failure share over the window that opens the circuit. @default 0.5 */
  failureRatio?: number;
  /** Fewest outcomes in the window before the ratio counts. @default 10 */
  minRequests?: number;
  /** Sliding window, in milliseconds. @default 10_000 */
  windowMs?: number;
  /** Failures in a row that open the circuit. @default 5 */
  consecutiveFailures?: number;
  /**
   * Time open before the first probe, in milliseconds; each failed probe doubles it, up to
   * `maxCoolDownMs`, and it starts over when the breaker closes (0: probe at once, every time).
   * @default 1_000
   */
  coolDownMs?: number;
  /** Longest time open between probes, in milliseconds (never below `coolDownMs`). @default 30_000 */
  maxCoolDownMs?: number;
  /** Probes when half-open; all must succeed to close. @default 1 */
  halfOpenProbes?: number;
}

/** Idempotency key options. */
export interface IdempotencyOptions {
  /** Header that carries the key. @default 'Idempotency-Key' */
  header?: string;
  /** Methods that get a key when the caller did not set one. @default ['POST', 'PATCH'] */
  methods?: string[];
  /**
   * Whether the host honours the key: a repeat of a request with it gets the first one's answer,
   * and its side effect runs once. Where it does, a write that carries a key is retried like a GET
   * (after a 5xx, a reset, an attempt timeout, and a 409 while the first still runs); elsewhere a
   * write is sent again only after an answer that proves it was not processed (a 429, a refused
   * connection). `true`: it does. `false`: take it that it never does, whatever it answers or
   * lists. Left out: learned, per host and process, from the first answer that shows it
   * (`Idempotent-Replayed`, or the request's key echoed in its header), or from the list of
   * `knownProviders`.
   * @default learned from the host's answers, or listed
   */
  honoured?: boolean;
  /**
   * Take the providers whose API references document deduplicating by `Idempotency-Key`
   * (`api.stripe.com`, `*.adyen.com`, `api.gocardless.com`) as `honoured: true`, when the key's
   * header is `Idempotency-Key`.
   * @default true
   */
  knownProviders?: boolean;
}

/** Options that `options.hosts` may override per host. */
export interface HostOptions {
  /** Client-side rate limit, in units per second (a token bucket). @default none */
  rate?: number;
  /** Capacity of that bucket, in units. @default max(1, ceil(rate)) */
  burst?: number;
  /**
   * Requests in flight to the host at once, at most. A request counts until its response's body
   * ends (read, cancelled or failed), and for 1 s at most while nobody reads it. @default Infinity
   */
  concurrency?: number;
  /** Requests waiting for the host at once, at most; past it, `QueueFullError`. @default 10_000 */
  maxQueue?: number;
  /** Longest wait in the queue, in milliseconds; past it, `QueueTimeoutError`. @default Infinity */
  queueTimeoutMs?: number;
  /**
   * Longest wait for the server's limit, in milliseconds. A 429 or 503 asking for longer is
   * returned at once instead of retried; a request that a learned limit would hold longer is
   * rejected with `RateLimitError` instead of waiting. Such a long wait is recorded as a hold of at
   * most `max(maxRetryAfterMs, 1000)`, after which one probe goes, so that a server that sent a
   * wrong `Retry-After` or reset (a timestamp as seconds) can correct it. A host that has refused
   * every attempt for this long (at least 5 in a row) is taken as refusing: the calls waiting for
   * it end at once, and one probe at a time goes.
   * @default 60_000
   */
  maxRetryAfterMs?: number;
  /** Read every response's rate-limit headers and hold requests the server would refuse. @default true */
  learnLimits?: boolean;
  /**
   * Read the limits a GraphQL API reports in its JSON answer (Shopify's `extensions.cost`,
   * GitHub's `data.rateLimit`; docs/body-limits.md) from a bounded look at a clone of the body
   * (64 KiB, 1 s): `true` for every call to the host, `false` for none. Unset: calls whose URL path
   * ends in `/graphql` or `/graphql.json`, or whose body is a JSON object string with a `"query"`.
   * @default undefined
   */
  bodyLimits?: boolean;
  /**
   * Send `initialWindow` requests to a host the client knows nothing about, and open up when it
   * answers. Costs the calls made before that first answer one round trip, or 1 s at most when
   * the first request is slow (an unanswered request stops holding the others back after 1 s);
   * `false` turns it off.
   * @default { initialWindow: 1 }
   */
  coldStart?: boolean | { initialWindow?: number };
  /** Random extra on server-given waits, so a fleet does not wake at once. */
  waitJitter?: {
    /** Largest extra wait, as a fraction of the server's wait. @default 0.05 */
    ratio?: number;
    /** Largest extra wait, in milliseconds. @default 1000 */
    maxMs?: number;
  };
  /**
   * Limit per call, in milliseconds: from the call until the headers of the response it resolves
   * to, with the queue, holds, attempts and waits between them. Reading the body is not covered
   * (the call has returned by then): bound that with a signal of your own, e.g.
   * `AbortSignal.timeout(ms)`, which also reaches the body.
   * @default Infinity
   */
  timeoutMs?: number;
  /**
   * Limit per attempt, in milliseconds: from sending until its response headers arrive. An attempt
   * that times out may be retried (see `retry`). The body is not covered. Also how long, plus a
   * second, the attempt counts as in flight in a shared state if its process dies with it out
   * (60 s without a limit).
   * @default Infinity
   */
  attemptTimeoutMs?: number;
  /** Retries; `false` turns them off. */
  retry?: false | RetryOptions;
  /** The host's retry budget; `false` turns it off. */
  retryBudget?: false | RetryBudgetOptions;
  /** The host's circuit breaker; `false` turns it off. */
  circuitBreaker?: false | CircuitBreakerOptions;
  /** Idempotency keys on writes; `false` turns them off. */
  idempotency?: false | IdempotencyOptions;
  /**
   * What a request costs: a number (units of the `requests` kind: a search the server counts as 3
   * requests costs 3), a vector per unit (`{ requests: 1, tokens: 1200 }`: each of the server's
   * policies is charged the cost of its unit, see the README's "Costs per unit"), or a function of
   * the request returning either, synchronously, once per call (not per attempt). The function sees
   * the method, URL, headers and, when it is text of at most 1 MiB, the body (`CostContext`: the
   * body is decoded and parsed only if it asks). The `requests` part must not exceed `burst` when
   * `rate` is set. A call's own `cost` wins over the option (the function is not called then).
   * @default 1
   * @example
   * cost: ({ json }) => {
   *   const body = json() as { max_tokens?: unknown } | undefined;
   *   return { requests: 1, tokens: typeof body?.max_tokens === 'number' ? body.max_tokens : 1000 };
   * }
   */
  cost?: number | CostVector | ((request: CostContext) => number | CostVector);
}

/** Options of `LimitedClient` and `wrapFetch`. */
export interface LimitedClientOptions extends HostOptions {
  /** Overrides per host: exact (`api.example.com`, `127.0.0.1:8080`) or `*.example.com`. */
  hosts?: Record<string, HostOptions>;
  /**
   * Splits a host into partitions that learn and hold apart: a request whose partition is a
   * non-empty string goes through its own pipeline, keyed `${origin}#${partition}`, with its own
   * learned limits, holds, queue, concurrency cap, client rate, retry budget and breaker (each
   * with the host's options). Use it when one host enforces separate limits on separate routes:
   * GitHub's `search` resource (30 requests a minute) beside `core` (5,000 an hour), Discord's
   * per-route buckets, Azure OpenAI's deployments (one per path). Without it, the whole host is
   * one partition, so a spent `search` quota would also hold every `core` request until its reset.
   * `undefined` or `''` puts the request in the host's own partition; a call's `partition` wins
   * over this function. It sees what a `cost` function sees (`CostContext`: method, URL, headers,
   * a text body of at most 1 MiB), and the same object: a body parsed for one is parsed for both.
   * Called once per call, before the queue; it must be cheap and must not throw (a throw rejects
   * the call with that error). At most 256 characters.
   * @default every request of a host in one partition
   * @example
   * partition: ({ url }) => (url.includes('/search/') ? 'search' : undefined)
   */
  partition?: (request: CostContext) => string | undefined;
  /** Headers sent with every request of a `LimitedClient` (the call's own headers win). */
  headers?: HeadersInit;
  /**
   * The fetch to call. When it is itself a pipeline of this package (a `wrapFetch`, a
   * `LimitedClient`'s `fetch`, or the global fetch replaced by one), calls pass through to it
   * instead of running two pipelines (see docs/client.md).
   * @default globalThis.fetch, looked up at each call
   */
  fetch?: typeof fetch;
  /** Where shared state lives. @default a new MemoryStateStore */
  store?: StateStore;
  /** Time and chance. @default systemClock */
  clock?: Clock;
  /**
   * Pipelines kept at once (one per host, and one per partition of a host); the least recently
   * used idle one is dropped past it. @default 1000
   */
  maxHosts?: number;
  /** A host unused this long is dropped, in milliseconds. @default 300_000 */
  hostIdleMs?: number;
}

type Resolved<T> = Readonly<Required<T>>;

/**
 * The type of `DEFAULTS`: each option that has a default, with it (`coldStart.initialWindow` as
 * `initialWindow`), and `fallbackHoldMs`, how long a pushback that reports a policy spent but gives
 * no reset (or a reset already past, with `Retry-After: 0` or none) holds its host, in
 * milliseconds.
 */
export type Defaults = Resolved<
  Pick<
    HostOptions,
    | 'concurrency'
    | 'maxQueue'
    | 'queueTimeoutMs'
    | 'maxRetryAfterMs'
    | 'learnLimits'
    | 'timeoutMs'
    | 'attemptTimeoutMs'
    | 'cost'
  > &
    Pick<LimitedClientOptions, 'maxHosts' | 'hostIdleMs'>
> & {
  readonly initialWindow: number;
  readonly fallbackHoldMs: number;
  readonly waitJitter: Resolved<NonNullable<HostOptions['waitJitter']>>;
  readonly retry: Resolved<Omit<RetryOptions, 'shouldRetry'>>;
  readonly retryBudget: Resolved<RetryBudgetOptions>;
  readonly circuitBreaker: Resolved<CircuitBreakerOptions>;
  readonly idempotency: Resolved<Omit<IdempotencyOptions, 'honoured'>>;
};

/**
 * Public types of the client: the per-call options, the retry predicate's context, the events and
 * the statistics.
 *
 * @module
 */

import type { CostVector } from './call/cost.js';
import type { CircuitState } from './rules/breaker.js';
import type { WaitReason } from './rules/contract.js';

export type { ClientStats, HostStats, PolicyStats, ScopeStats } from './host/stats-types.js';

/**
 * Options of one call, on top of `RequestInit`. Each overrides the client's option for this call;
 * a bad one rejects the call with `InvalidOptionError` (`init.retry.retries`) before it is sent.
 */
export interface LimitedRequestInit extends RequestInit {
  /**
   * What this request costs: a number (units of the `requests` kind, spent from the client's
   * bucket and the server's request quotas: a search the server counts as 3 requests costs 3), or a
   * vector per unit (`{ requests: 1, tokens: 1200 }`). Its requests must not exceed `burst`.
   * @default the `cost` option, itself 1 by default
   */
  cost?: number | CostVector;
  /**
   * The idempotency key to send, or `false` to send none. By default POST and PATCH get a fresh
   * `crypto.randomUUID()` unless their headers already carry one. The key is the same on every
   * retry of this call. A write is retried after a 5xx, a reset or a timeout only with a key and
   * to a host that honours keys (`idempotency.honoured`); otherwise only after an answer that
   * proves it was not processed (a 429, a refused connection...).
   */
  idempotencyKey?: string | false;
  /**
   * Re-creates the body for each attempt. Needed to retry a request whose body is a stream (a
   * stream can be sent once); called for every attempt, the first included.
   */
  createBody?: () => BodyInit;
  /**
   * Time limit for this call, in milliseconds, until the headers of the response it resolves to
   * (queue, holds, retries and waits included; not the body: see the `timeoutMs` option).
   */
  timeoutMs?: number;
  /** Time limit of each attempt until its response headers, in milliseconds. */
  attemptTimeoutMs?: number;
  /**
   * The partition of the host this call belongs to (see the `partition` option), overriding the
   * option's function. A non-empty string of at most 256 characters; `''` is the host's own.
   */
  partition?: string;
  /** `false` to never retry this call; or overrides of the retry options. */
  retry?: false | { retries?: number; shouldRetry?: ShouldRetry };
}

/**
 * The options {@link LimitedInit} carries: a call's own options (see {@link LimitedRequestInit}),
 * all but `createBody`, which would replace the body an SDK made.
 */
export type LimitedInitOptions = Omit<LimitedRequestInit, keyof RequestInit | 'createBody'>;

/**
 * A call's own options as a `RequestInit` without `body`, `headers`, `method` and `signal` (the
 * fields an SDK sets itself): the type an SDK's `fetchOptions` takes (OpenAI's, Anthropic's...),
 * so that per-call options reach the `wrapFetch` given as the SDK's `fetch`. Made by `limitedInit`.
 */
export type LimitedInit = Readonly<LimitedInitOptions> &
  Omit<RequestInit, 'body' | 'headers' | 'method' | 'signal'>;

/** Everything the retry predicate may look at. */
export interface RetryContext {
  /** HTTP method, upper case. */
  method: string;
  /** The request URL. */
  url: string;
  /** Attempts made so far, this one included (1 after the first). */
  attempt: number;
  /** The response of this attempt, when it got one. */
  response?: Response;
  /** The error of this attempt, when it got no response. */
  error?: unknown;
  /** The server's `Retry-After` (or `retry-after-ms`), in milliseconds, when it sent one. */
  retryAfterMs?: number;
  /**
   * The server pushed back: a 429, a 503 that says when to come back, a 403 about a rate limit
   * (`Retry-After`, or a spent policy), a GraphQL refusal in the body (`THROTTLED`, `RATE_LIMITED`:
   * docs/body-limits.md), or a load shedder's 502/503/504 as the host's rules guess it
   * (a fast plain 5xx while other requests get through). The guess slows the host down; it does
   * not prove the request unprocessed (see `unprocessed`).
   */
  pushback: boolean;
  /**
   * The outcome proves the server did not process the request: a 429; a 503 or 403 whose headers
   * say it is a rate limit (`Retry-After`, or a spent policy for a 403); a GraphQL refusal in the
   * body (`THROTTLED`, `RATE_LIMITED`), whatever the status; a refused connection (nothing reached
   * a server). Any request may be sent again after it, a write included.
   */
  unprocessed: boolean;
  /**
   * The request may be repeated safely: its method is idempotent (GET, HEAD, OPTIONS, PUT,
   * DELETE), or it carries an idempotency key and the host honours keys (`keysHonoured`).
   */
  idempotent: boolean;
  /** The request carries an idempotency key (its own, or one the client added). */
  hasIdempotencyKey: boolean;
  /**
   * The host is known to honour idempotency keys (a repeat with the key gets the first answer;
   * the side effect runs once): declared (`idempotency.honoured`), learned from one of its answers
   * (`Idempotent-Replayed`, or the request's key echoed in its header), or listed
   * (`idempotency.knownProviders`). False with `idempotency: false`.
   */
  keysHonoured: boolean;
  /** True when `error` is a transient network failure (reset, refused, hang up, DNS EAI_AGAIN). */
  networkError: boolean;
}

/** Decides whether an attempt's outcome is worth another attempt. */
export type ShouldRetry = (context: RetryContext) => boolean;

/** Fields every event carries. */
export interface EventBase {
  /** The host's origin, e.g. `https://api.example.com`. */
  origin: string;
  /** The host's partition, when the request has one (see the `partition` option). */
  partition?: string;
  /** HTTP method, upper case. */
  method: string;
  /** The request URL. */
  url: string;
}

/** Why a request stopped being retried. */
export type GiveUpReason =
  | 'retries-exhausted'
  | 'retry-after-too-long'
  | 'body-not-replayable'
  | 'budget-exhausted'
  | 'circuit-open'
  | 'deadline'
  | 'queue-full'
  | 'queue-timeout'
  | 'hold-too-long'
  | 'cost-too-high'
  | 'store-error';

/**
 * A store call a request survived: `settle` (taking an answer into the shared state) or
 * `retry-budget` (asking the budget for a retry, which a failing store cannot grant).
 */
export type StoreOperation = 'settle' | 'retry-budget';

/** Every event the client emits, by name. */
export interface ClientEvents {
  /** A request had to wait in the host's queue (the concurrency cap or a hold was in the way). */
  queued: EventBase & { /** Requests waiting, this one included. */ queueLength: number };
  /**
   * A request waits for a limit: `learned-limit` (a policy the server declared is spent until its
   * reset), `retry-after` (the host is held after a 429 or 503), `cold-start` (the host has not
   * answered yet), `probe` (a probe after a reset is out), `pace` (the adaptive pace after a
   * refusal the headers did not explain), `refusing` (the host refuses everything: one probe at a
   * time), `client-rate` (the client's own bucket).
   * Emitted once per request and reason.
   */
  held: EventBase & {
    reason: WaitReason;
    /** Milliseconds until the limit lifts, when known. */
    waitMs: number | undefined;
    /** The server's name for the policy, when there is one. */
    policy?: string;
  };
  /** The server pushed back: a 429, or a 503 with `Retry-After`. */
  'rate-limited': EventBase & {
    status: number;
    /** The server's `Retry-After`, in milliseconds. */
    retryAfterMs: number | undefined;
    /** The exhausted policy's name, when the headers named it. */
    policy?: string;
  };
  /** A retry is scheduled. */
  retry: EventBase & {
    /** The attempt about to be made (2 for the first retry). */
    attempt: number;
    /**
     * Milliseconds until it is made: the backoff it sleeps, or after a pushback (with learning
     * on) what is left of the host's hold, which it waits for (others may extend that hold).
     */
    delayMs: number;
    /**
     * `retry-after`: the server's timing (`Retry-After`, or the reset of a spent policy);
     * `fallback-hold`: the host's short hold after a spent policy that gave no reset (1 s, plus
     * jitter); `pace`: after a pushback without timing, the host's adaptive pace (the retry waits
     * in the host's queue); `backoff`: the client's jittered backoff.
     */
    delaySource: 'retry-after' | 'fallback-hold' | 'pace' | 'backoff';
    /** The previous attempt's status, or `undefined` when it failed without a response. */
    status: number | undefined;
    /** The previous attempt's error, when it had no response. */
    error?: unknown;
  };
  /** A retry was refused because the host's retry budget is spent. */
  'budget-exhausted': EventBase & { attempt: number };
  /** A request or a retry was refused because the host's circuit is open. */
  'circuit-open': EventBase & { retryAt: number };
  /** The circuit of a host changed state. */
  'circuit-state': { origin: string; partition?: string; from: CircuitState; to: CircuitState };
  /**
   * The state store failed and the request went on without it: the caller still gets the response
   * (or the error) of its attempt, and its slot is given back. See {@link StoreOperation}.
   */
  'store-error': EventBase & { operation: StoreOperation; error: unknown };
  /**
   * An attempt goes out, after its waits. `waitedMs`: milliseconds since the call arrived (first
   * attempt) or since its retry was planned and slept its backoff: the queue and the holds.
   * `waitReason`: the last limit that held it (see `held`), `queue` when it only waited in line,
   * `undefined` when nothing held it. Built only when someone listens (for metrics, not logs).
   */
  sent: EventBase & {
    attempt: number;
    waitedMs: number;
    waitReason: WaitReason | 'queue' | undefined;
  };
  /**
   * An attempt got its answer: a `status`, or an `error` without a response (`undefined` status).
   * `durationMs`: from its send to its response headers (or error), in milliseconds.
   */
  answered: EventBase & {
    attempt: number;
    status: number | undefined;
    error?: unknown;
    durationMs: number;
  };
  /**
   * A call ended: it resolved to a response (`status`) or rejected (`error`, a refusal included).
   * `durationMs`: from its arrival to that end (response headers), in milliseconds.
   */
  done: EventBase & { status: number | undefined; error?: unknown; durationMs: number };
  /**
   * A request that needed another attempt stopped without one: it resolves to its last response or
   * rejects with its last error (or the refusal).
   */
  'give-up': EventBase & {
    reason: GiveUpReason;
    attempts: number;
    status: number | undefined;
    error?: unknown;
  };
}

/**
 * Typed errors. Every error this package throws or rejects with is a {@link LimitedClientError}
 * with a stable `code`; each reason has its own subclass and an `isX()` guard. The guards check a
 * brand (`Symbol.for`) rather than `instanceof`, so they work across realms and across duplicated
 * copies of the package (an ESM and a CJS copy in one process, say).
 *
 * Messages name the method, the URL and the reason:
 * `GET https://api.example.com/x: circuit open until 2026-11-30T12:00:05.000Z`.
 *
 * @module
 */

const BRAND = Symbol.for('limited-client.error');

/** Every stable error code, one per subclass. */
export type LimitedClientErrorCode =
  | 'ERR_RATE_LIMITED'
  | 'ERR_COST_TOO_HIGH'
  | 'ERR_CIRCUIT_OPEN'
  | 'ERR_RETRY_BUDGET_EXHAUSTED'
  | 'ERR_QUEUE_FULL'
  | 'ERR_QUEUE_TIMEOUT'
  | 'ERR_TIMEOUT'
  | 'ERR_INVALID_OPTION'
  | 'ERR_CLIENT_CLOSED'
  | 'ERR_STORE_UNAVAILABLE';

/** Where a request-scoped error happened. Both fields are optional for errors outside a request. */
export interface RequestContext {
  /** HTTP method, upper case. */
  method?: string;
  /** The request URL (as given, without credentials). */
  url?: string;
}

function prefix(ctx: RequestContext | undefined): string {
  if (!ctx?.method && !ctx?.url) return '';
  return `${[ctx.method, ctx.url].filter(Boolean).join(' ')}: `;
}

/** Base class of every error thrown by limited-client. */
export class LimitedClientError extends Error {
  /** Stable, machine-readable reason; safe to switch on. */
  readonly code: LimitedClientErrorCode;
  /** HTTP method of the request this error belongs to, when there is one. */
  readonly method: string | undefined;
  /** URL of the request this error belongs to, when there is one. */
  readonly url: string | undefined;

  constructor(
    code: LimitedClientErrorCode,
    reason: string,
    ctx?: RequestContext,
    options?: { cause?: unknown },
  ) {
    super(`${prefix(ctx)}${reason}`, options);
    this.name = new.target.name;
    this.code = code;
    this.method = ctx?.method;
    this.url = ctx?.url;
    Object.defineProperty(this, BRAND, { value: true });
  }
}

/**
 * The client refused to send because the server's limit (learned from its headers or a 429) would
 * hold the request longer than the caller allows, or because the host refuses every request.
 * The message says the wait the server asked for and the cap that refused it, apart from when the
 * host may be tried again: `rate limited: the server asks for a wait of 125000 ms, more than the
 * 60000 ms the caller allows (maxRetryAfterMs); a probe may go in 60412 ms`.
 */
export class RateLimitError extends LimitedClientError {
  /**
   * How long, in milliseconds from when the error was raised, until a request may be admitted:
   * the probe of a long wait that was recorded for at most `maxRetryAfterMs`, or the end of the
   * wait.
   */
  readonly retryAfterMs: number;
  /** Name of the policy that holds the request, when the server named it. */
  readonly policy: string | undefined;
  /**
   * The wait the server asked for, in milliseconds from when the error was raised (its
   * `Retry-After`, or the reset of a spent policy), whatever the client recorded of it;
   * `Infinity` when the host refuses every request; `undefined` when not known.
   */
  readonly serverWaitMs: number | undefined;

  /**
   * @param detail `limitMs`: the most the caller waits (`maxRetryAfterMs`); `serverWaitMs`: see
   *   the field.
   */
  constructor(
    retryAfterMs: number,
    ctx?: RequestContext,
    detail?: { policy?: string; limitMs?: number; serverWaitMs?: number },
  ) {
    const policy = detail?.policy ? ` by policy "${detail.policy}"` : '';
    const asked = detail?.serverWaitMs;
    const limit = detail?.limitMs;
    let reason = ` for another ${retryAfterMs} ms`;
    if (asked === Number.POSITIVE_INFINITY) {
      reason = `: the host refuses every request; the next probe may go in ${retryAfterMs} ms`;
    } else if (asked !== undefined && limit !== undefined) {
      reason = `: the server asks for a wait of ${asked} ms, more than the ${limit} ms the caller allows (maxRetryAfterMs)`;
      if (asked > retryAfterMs) reason += `; a probe may go in ${retryAfterMs} ms`;
    }
    super('ERR_RATE_LIMITED', `rate limited${policy}${reason}`, ctx);
    this.retryAfterMs = retryAfterMs;
    this.policy = detail?.policy;
    this.serverWaitMs = asked;
  }
}

/**
 * The call costs more than the whole limit of one of the server's policies (a prompt estimated at
 * 200,000 tokens against a policy of 150,000 a minute): it could never go, so it is refused at once,
 * unsent, instead of waiting forever.
 */
export class CostTooHighError extends LimitedClientError {
  /** The policy the cost exceeds, by the server's name. */
  readonly policy: string | undefined;

  constructor(ctx?: RequestContext, policy?: string) {
    super(
      'ERR_COST_TOO_HIGH',
      `costs more than the whole limit of policy "${policy ?? 'unnamed'}": it could never be sent`,
      ctx,
    );
    this.policy = policy;
  }
}

/** The host's circuit breaker is open: calls fail fast until it half-opens at `retryAt`. */
export class CircuitOpenError extends LimitedClientError {
  /** Epoch milliseconds at which the breaker lets a probe through. */
  readonly retryAt: number;
  /** Milliseconds from when the error was raised until `retryAt` (never negative). */
  readonly retryAfterMs: number;

  constructor(retryAt: number, now: number, ctx?: RequestContext, cause?: unknown) {
    super(
      'ERR_CIRCUIT_OPEN',
      `circuit open until ${new Date(retryAt).toISOString()}`,
      ctx,
      cause === undefined ? undefined : { cause },
    );
    this.retryAt = retryAt;
    this.retryAfterMs = Math.max(0, retryAt - now);
  }
}

/**
 * A retry was needed but the host's retry budget is spent, and there is no response to return
 * (the last attempt failed without one). `cause` holds that attempt's error.
 */
export class RetryBudgetExhaustedError extends LimitedClientError {
  /** Attempts made for this logical request, including the first. */
  readonly attempts: number;

  constructor(attempts: number, ctx?: RequestContext, cause?: unknown) {
    super(
      'ERR_RETRY_BUDGET_EXHAUSTED',
      `retry budget exhausted after ${attempts} attempt(s)`,
      ctx,
      {
        cause,
      },
    );
    this.attempts = attempts;
  }
}

/** The host's queue already holds `maxQueue` waiting requests. */
export class QueueFullError extends LimitedClientError {
  /** The queue bound that was reached, in requests. */
  readonly maxQueue: number;

  constructor(maxQueue: number, ctx?: RequestContext) {
    super('ERR_QUEUE_FULL', `queue full (${maxQueue} requests waiting)`, ctx);
    this.maxQueue = maxQueue;
  }
}

/** A request waited in the host's queue longer than `queueTimeoutMs` and left it unsent. */
export class QueueTimeoutError extends LimitedClientError {
  /** The queue timeout that elapsed, in milliseconds. */
  readonly timeoutMs: number;

  constructor(timeoutMs: number, ctx?: RequestContext) {
    super('ERR_QUEUE_TIMEOUT', `waited ${timeoutMs} ms in the queue without being sent`, ctx);
    this.timeoutMs = timeoutMs;
  }
}

/** An attempt, or the whole logical request, took longer than its timeout. */
export class TimeoutError extends LimitedClientError {
  /** The timeout that elapsed, in milliseconds. */
  readonly timeoutMs: number;
  /** `attempt`: one try timed out; `total`: the request with all its retries did. */
  readonly scope: 'attempt' | 'total';

  constructor(timeoutMs: number, scope: 'attempt' | 'total', ctx?: RequestContext) {
    super(
      'ERR_TIMEOUT',
      scope === 'total'
        ? `timed out after ${timeoutMs} ms in total`
        : `attempt timed out after ${timeoutMs} ms`,
      ctx,
    );
    this.timeoutMs = timeoutMs;
    this.scope = scope;
  }
}

/**
 * An option or configuration value is invalid. Thrown at construction; for a call's own options
 * (`init.retry`, `init.cost`...), the call rejects with it before anything is sent, and the
 * message names the call: `POST https://api.example.com/x: invalid option init.retry.retries: must
 * be an integer from 0 to 100, got -1`.
 */
export class InvalidOptionError extends LimitedClientError {
  /**
   * Path of the offending option, e.g. `hosts["api.example.com"].rate`, `routes[0].cost`, or
   * `init.timeoutMs` for a call's own option.
   */
  readonly option: string;

  constructor(option: string, problem: string, ctx?: RequestContext) {
    super('ERR_INVALID_OPTION', `invalid option ${option}: ${problem}`, ctx);
    this.option = option;
  }
}

/** The client was closed with `close()`: the request was refused, or was waiting and was dropped. */
export class ClientClosedError extends LimitedClientError {
  constructor(ctx?: RequestContext) {
    super('ERR_CLIENT_CLOSED', 'the client is closed', ctx);
  }
}

/**
 * A shared state store (Redis) did not answer within its timeout, failed, or is known to be down
 * and was not asked. Whoever holds the store decides what happens next: the mock server fails open
 * (to a local share of each limit) or closed (503), per route; the client falls back to local state.
 */
export class StoreUnavailableError extends LimitedClientError {
  /** The store operation that failed: `take`, `peek`, `refund`, `update`, `delete`. */
  readonly operation: string;
  /** The time limit that elapsed, in milliseconds, when the store timed out; else `undefined`. */
  readonly timeoutMs: number | undefined;

  constructor(
    operation: string,
    problem: string,
    detail?: { timeoutMs?: number; cause?: unknown },
  ) {
    super('ERR_STORE_UNAVAILABLE', `store ${operation}: ${problem}`, undefined, {
      cause: detail?.cause,
    });
    this.operation = operation;
    this.timeoutMs = detail?.timeoutMs;
  }
}

function hasCode(error: unknown, code: LimitedClientErrorCode): boolean {
  return isLimitedClientError(error) && error.code === code;
}

/** True for any error thrown by limited-client (any copy of it, any realm). */
export function isLimitedClientError(error: unknown): error is LimitedClientError {
  return (
    typeof error === 'object' &&
    error !== null &&
    (error as Record<symbol, unknown>)[BRAND] === true
  );
}
/** True for a {@link RateLimitError}. */
export const isRateLimitError = (e: unknown): e is RateLimitError => hasCode(e, 'ERR_RATE_LIMITED');
/** True for a {@link CostTooHighError}. */
export const isCostTooHighError = (e: unknown): e is CostTooHighError =>
  hasCode(e, 'ERR_COST_TOO_HIGH');
/** True for a {@link CircuitOpenError}. */
export const isCircuitOpenError = (e: unknown): e is CircuitOpenError =>
  hasCode(e, 'ERR_CIRCUIT_OPEN');
/** True for a {@link RetryBudgetExhaustedError}. */
export const isRetryBudgetExhaustedError = (e: unknown): e is RetryBudgetExhaustedError =>
  hasCode(e, 'ERR_RETRY_BUDGET_EXHAUSTED');
/** True for a {@link QueueFullError}. */
export const isQueueFullError = (e: unknown): e is QueueFullError => hasCode(e, 'ERR_QUEUE_FULL');
/** True for a {@link QueueTimeoutError}. */
export const isQueueTimeoutError = (e: unknown): e is QueueTimeoutError =>
  hasCode(e, 'ERR_QUEUE_TIMEOUT');
/** True for a {@link TimeoutError}. */
export const isTimeoutError = (e: unknown): e is TimeoutError => hasCode(e, 'ERR_TIMEOUT');
/** True for an {@link InvalidOptionError}. */
export const isInvalidOptionError = (e: unknown): e is InvalidOptionError =>
  hasCode(e, 'ERR_INVALID_OPTION');
/** True for a {@link ClientClosedError}. */
export const isClientClosedError = (e: unknown): e is ClientClosedError =>
  hasCode(e, 'ERR_CLIENT_CLOSED');
/** True for a {@link StoreUnavailableError}. */
export const isStoreUnavailableError = (e: unknown): e is StoreUnavailableError =>
  hasCode(e, 'ERR_STORE_UNAVAILABLE');

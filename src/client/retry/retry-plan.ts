/**
 * The retry decision for one outcome, as a pure function: is it worth another attempt, may it be
 * made (retries left, a body to resend, a server wait the caller accepts, time before the
 * deadline), and after how long. The stateful checks that follow (circuit breaker, retry budget)
 * are the pipeline's.
 *
 * @module
 */
import type { RateLimitInfo } from '../../headers/types.js';
import { provesUnprocessed } from '../call/answer.js';
import type { Call, Outcome } from '../call/attempt.js';
import { isTransientNetworkError } from '../call/network-errors.js';
import type { PreparedRequest } from '../call/request.js';
import type { HostConfig } from '../options/resolve.js';
import { pushbackWait } from '../rules/hold.js';
import type { GiveUpReason, RetryContext, ShouldRetry } from '../types.js';
import { fullJitter, serverWait, type WaitJitter } from './backoff.js';
import { IDEMPOTENT_METHODS } from './retry-rule.js';

/** What the decision looks at. */
export interface RetryInput {
  /** The attempt's outcome. */
  response: Response | undefined;
  error: unknown;
  info: RateLimitInfo | undefined;
  /** What the retry rule is given. */
  context: RetryContext;
  shouldRetry: ShouldRetry;
  /** Attempts made so far (1 after the first). */
  attempt: number;
  /** Retries allowed after the first attempt. */
  retries: number;
  /** Whether the body can be sent again. */
  replayable: boolean;
  /** Longest server wait honoured, in milliseconds. */
  maxRetryAfterMs: number;
  /** Epoch milliseconds by which the call must be done (`Infinity`: none). */
  deadline: number;
  now: number;
  /** A number in [0, 1), for the jitter. */
  random: number;
  backoff: { baseDelayMs: number; maxDelayMs: number };
  jitter: WaitJitter;
  /**
   * The host's hold after this outcome was taken into the learned limits, epoch milliseconds;
   * `undefined` when learning is off (or the store failed). After a pushback, a retry waits for
   * that hold (its jitter was drawn once, then), rather than sleeping on its own.
   */
  holdUntil?: number;
  /** Whether the outcome is the server pushing back, as the host's rules see it. */
  pushback: boolean;
}

/** Where a retry's delay comes from (the `retry` event's `delaySource`). */
export type DelaySource = 'retry-after' | 'fallback-hold' | 'pace' | 'backoff';

/** When a retry goes. */
export interface RetryDelay {
  /** Milliseconds from now. */
  delayMs: number;
  /** The server's own wait (before jitter), when the delay comes from it. */
  serverWaitMs?: number;
  /**
   * `retry-after`: the server's timing (`Retry-After`, or the reset of a spent policy), plus
   * jitter; `fallback-hold`: the host's short hold after a spent policy that gave no reset;
   * `pace`: after a pushback without timing, the host's adaptive pace; `backoff`: full jitter over
   * the exponential ceiling.
   */
  source: DelaySource;
  /** True when the retry waits for the host's hold in the admission queue rather than sleeping. */
  hold: boolean;
}

/** The decision. */
export type RetryPlan =
  /** No retry: `reason` says why one that was wanted cannot be made; absent, the outcome is final. */
  | { retry: false; reason?: GiveUpReason }
  /** Retry after the delay it describes. */
  | ({ retry: true } & RetryDelay);

/**
 * The server's timing first: `Retry-After`, else the reset of the exhausted policy, plus a small
 * positive jitter. After a pushback, with learning on, the retry waits in the host's queue for what
 * the host's rules say (its hold, its pace) and reports the hold as it is. Otherwise full jitter
 * over the exponential ceiling.
 */
export function retryDelay(input: RetryInput): RetryDelay {
  const { response, info } = input;
  if (response && input.pushback) {
    // "Come back now" (`Retry-After: 0`, a date already past) is no timing: with no spent policy to
    // read, the retry waits for the host's pace, as after a refusal that gives no time at all.
    const wait = pushbackWait(info);
    if (input.holdUntil !== undefined) {
      const source =
        wait !== undefined ? 'retry-after' : info?.remaining === 0 ? 'fallback-hold' : 'pace';
      return {
        delayMs: Math.max(0, input.holdUntil - input.now),
        ...(wait === undefined ? {} : { serverWaitMs: wait }),
        source,
        hold: true,
      };
    }
    if (wait !== undefined) {
      return {
        delayMs: serverWait(wait, input.random, input.jitter),
        serverWaitMs: wait,
        source: 'retry-after',
        hold: false,
      };
    }
  }
  const { baseDelayMs, maxDelayMs } = input.backoff;
  return {
    delayMs: fullJitter(input.attempt - 1, baseDelayMs, maxDelayMs, input.random),
    source: 'backoff',
    hold: false,
  };
}

/** Decides whether and when to retry; see the module comment. */
export function planRetry(input: RetryInput): RetryPlan {
  if (!input.shouldRetry(input.context)) return { retry: false };
  if (input.attempt > input.retries) return { retry: false, reason: 'retries-exhausted' };
  if (!input.replayable) return { retry: false, reason: 'body-not-replayable' };
  const delay = retryDelay(input);
  if (delay.serverWaitMs !== undefined && delay.serverWaitMs > input.maxRetryAfterMs) {
    return { retry: false, reason: 'retry-after-too-long' };
  }
  if (input.now + delay.delayMs >= input.deadline) return { retry: false, reason: 'deadline' };
  return { retry: true, ...delay };
}

/** What {@link planAfter} reads of the call, its host and the attempt. */
export interface PlanContext {
  req: PreparedRequest;
  call: Call;
  /** Attempts made so far. */
  attempts: number;
  /** Epoch milliseconds by which the call must be done (`Infinity`: none). */
  deadline: number;
  policy: HostConfig;
  /** A number in [0, 1), for the jitter. */
  random: number;
  /** Whether the host is known to honour idempotency keys (declared, listed or learned). */
  keysHonoured: boolean;
}

/** {@link planRetry} for an attempt's outcome, with what the call and its host say. */
export function planAfter(outcome: Outcome, c: PlanContext): RetryPlan {
  const { req, call, attempts, policy } = c;
  const { response, error, info } = outcome;
  return planRetry({
    response,
    error,
    info,
    context: {
      method: req.method,
      url: req.url,
      attempt: attempts,
      response,
      error,
      retryAfterMs: info?.retryAfterMs,
      pushback: outcome.pushback === true,
      // A refusal in the body (GraphQL `THROTTLED`) proves it as a 429 does.
      unprocessed: outcome.refused === true || provesUnprocessed(response?.status, info, error),
      // A key makes a write safe to repeat only where the host honours it: most APIs ignore it.
      idempotent: IDEMPOTENT_METHODS.has(req.method) || (req.hasKey && c.keysHonoured),
      hasIdempotencyKey: req.hasKey,
      keysHonoured: c.keysHonoured,
      networkError: error !== undefined && isTransientNetworkError(error),
    },
    shouldRetry: call.shouldRetry,
    attempt: attempts,
    retries: call.retries,
    replayable: req.replayable || call.createBody !== undefined,
    maxRetryAfterMs: policy.maxRetryAfterMs,
    deadline: c.deadline,
    now: outcome.at,
    random: c.random,
    backoff: policy.retry,
    jitter: policy.jitter,
    // The call's own refusal (the host serves others): its own backoff, not the host's pace.
    holdUntil: outcome.ownRefusal === true ? undefined : outcome.holdUntil,
    pushback: outcome.pushback === true,
  });
}

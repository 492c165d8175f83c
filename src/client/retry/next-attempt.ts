/**
 * Steps 4 and 5 of a call's round (`call-run.ts`, drawn in `docs/how-it-works.md`): after an
 * answer, whether another attempt goes and after what wait, or how the call ends; then the wait.
 *
 * @module
 */
import type { Call, Outcome } from '../call/attempt.js';
import { circuitOpen, giveUp, letGoOf } from '../call/call-end.js';
import type { PreparedRequest } from '../call/request.js';
import type { HostParts } from '../host/host-parts.js';
import type { PacedRetries } from './paced-retries.js';
import { grantRetry } from './retry-grant.js';
import type { RetryPlan } from './retry-plan.js';

/** The answer of a step: go on (with a value), or end the call with a response. */
export type Step<T> = { go: T } | { end: Response };

/** A retry that goes, and whether it waits for the pace (it then goes behind the calls waiting). */
export interface NextAttempt {
  plan: RetryPlan & { retry: true };
  paced: boolean;
}

/** What step 4 reads of the call: its request, its state so far, and its retries for the pace. */
export interface CallSoFar {
  host: HostParts;
  req: PreparedRequest;
  call: Call;
  /** Attempts made so far. */
  attempts: number;
  /** Epoch milliseconds by which the call must be done (`Infinity`: none). */
  deadline: number;
  paced: PacedRetries;
}

/**
 * Step 4: whether another attempt goes after `outcome` (the call's last), and after what wait; or
 * the end of the call (a response), or its error (thrown).
 */
export async function planNext(run: CallSoFar, outcome: Outcome): Promise<Step<NextAttempt>> {
  const { host, call, attempts } = run;
  const { response, error } = outcome;
  const context = {
    req: run.req,
    call,
    attempts,
    deadline: run.deadline,
    policy: host.policy,
    random: host.shared.clock.random(),
    keysHonoured: host.wide.keysHonoured,
  };
  const plan = run.paced.plan(outcome, context, host.policy.maxRetryAfterMs);
  if (!plan.retry) {
    if (plan.reason) return { end: giveUp(host, call, attempts, plan.reason, outcome) };
    if (response) return { end: response };
    throw error;
  }
  const closed = host.closed(call.ctx);
  if (closed !== undefined) {
    // The attempt was on the wire at close(): it may finish, but no retry starts.
    letGoOf(outcome);
    throw closed;
  }
  const now = host.shared.clock.now();
  const openUntil = host.breaker?.openUntil(now);
  if (openUntil !== undefined)
    return { end: circuitOpen(host, call, attempts, outcome, openUntil) };
  const granted = await grantRetry(host, call, attempts, outcome, plan, now);
  if ('end' in granted) return granted;
  if (granted.paced) run.paced.granted(outcome.at);
  return { go: { plan, paced: granted.paced } };
}

/**
 * Step 5: the wait before the retry. After a pushback the host is held until the server's time,
 * and the retry waits for that hold at the front of the queue, so it goes first when the hold
 * lifts (a separate sleep would wake on its own jitter, after the line had used the quota).
 * Otherwise a sleep of the backoff; if it stops (abort, close), the `last` answer is let go.
 */
export async function waitForRetry(
  host: HostParts,
  call: Call,
  last: Outcome | undefined,
  plan: RetryPlan & { retry: true },
): Promise<void> {
  if (plan.hold) return;
  try {
    const closed = host.closed(call.ctx);
    if (closed !== undefined) throw closed;
    await host.sleepers.sleep(plan.delayMs, call.signal, call.ctx);
  } catch (stopped) {
    letGoOf(last);
    throw stopped;
  }
}

/**
 * Whether a planned retry may go: the retry budget's word, asked of the host's shared state, and the
 * `retry` event when it may.
 *
 * The budget is for the retries the client decides on. One the server asked for with its own time
 * (Retry-After, a reset), waited for in the host's hold, is the server's pacing, not a storm; so is
 * one that waits for the probes of a lockout (the host gets one request per probe, however many
 * calls wait: see `rules/pace.ts`); so is one after a bare 429 that waits for the host's adaptive
 * pace (the pace bounds what the host is sent). A store that fails cannot grant a retry: the call
 * ends with what it has. The last two kinds are {@link pacedRetry}: they spend no retry of the call
 * either, but are bounded in time per call (`call-run.ts`).
 *
 * @module
 */
import { RetryBudgetExhaustedError } from '../../shared/errors.js';
import type { Call, Outcome } from '../call/attempt.js';
import { giveUp } from '../call/call-end.js';
import type { HostParts } from '../host/host-parts.js';
import type { RetryPlan } from './retry-plan.js';

/**
 * Whether the retry follows a bare 429 (no `Retry-After` at all) and waits in the host's queue for
 * the adaptive pace: the pace, not the retry, sets how fast the host is sent to, so such retries
 * cannot amplify load. Spending the budget on them handed back the first 429 of a call once a busy
 * account's refusals had used the budget up. A 5xx (what an outage answers) and a "come back now"
 * (`Retry-After: 0`, issue 24) still ask the budget.
 */
function pacedRefusal(outcome: Outcome, plan: RetryPlan & { retry: true }): boolean {
  return (
    plan.hold &&
    plan.source === 'pace' &&
    outcome.pushback === true &&
    outcome.response?.status === 429 &&
    outcome.info?.retryAfterMs === undefined
  );
}

/**
 * Whether the retry `plan` after `outcome` waits in the host's queue for the pace: for a lockout's
 * probes, or after a bare 429 (see {@link pacedRefusal}). The host is sent no more for it (the pace
 * caps what goes), so it spends neither the retry budget nor a retry of the call; `call-run.ts`
 * bounds such retries by time instead (`maxRetryAfterMs` from the call's first one).
 */
export function pacedRetry(outcome: Outcome, plan: RetryPlan & { retry: true }): boolean {
  return (plan.hold && outcome.lockout === true) || pacedRefusal(outcome, plan);
}

/**
 * Asks for the retry `plan` of a call that made `attempts` attempts, at `now` (epoch ms): the
 * call's end (its last response, or `RetryBudgetExhaustedError`) when the budget refuses or the
 * store fails; else whether the retry waits for a lockout's probes (`lockout`), and whether it
 * waits for the pace at all (`paced`: {@link pacedRetry}).
 */
export async function grantRetry(
  host: HostParts,
  call: Call,
  attempts: number,
  outcome: Outcome,
  plan: RetryPlan & { retry: true },
  now: number,
): Promise<{ end: Response } | { lockout: boolean; paced: boolean }> {
  const { response, error } = outcome;
  const lockout = plan.hold && outcome.lockout === true;
  const paced = pacedRetry(outcome, plan);
  const serverTimed = plan.hold && plan.source === 'retry-after';
  const granted = paced || serverTimed || (await host.store.retry(now, call.ctx));
  if (granted === 'store-error')
    return { end: giveUp(host, call, attempts, 'store-error', outcome) };
  if (!granted) {
    host.report.budgetExhausted(call.ctx, attempts);
    const refusal = new RetryBudgetExhaustedError(attempts, call.ctx, error);
    return { end: giveUp(host, call, attempts, 'budget-exhausted', outcome, refusal) };
  }
  host.report.retry(call.ctx, () => ({
    attempt: attempts + 1,
    delayMs: plan.delayMs,
    delaySource: plan.source,
    status: response?.status,
    error,
  }));
  return { lockout, paced };
}

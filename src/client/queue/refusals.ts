/**
 * Which waits the queue refuses instead of waiting for, and the error each gets: a wait the server
 * set (a `Retry-After`, a learned limit, a refusing host: the reasons the rules declare
 * `serverTimed`) longer than the caller allows
 * (`maxRetryAfterMs`) gets a `RateLimitError`; a call that costs more than a policy's whole limit,
 * which no wait would let go, a `CostTooHighError`.
 *
 * @module
 */
import { CostTooHighError, RateLimitError, type RequestContext } from '../../shared/errors.js';
import type { Wait } from '../rules/contract.js';

/**
 * The error a request held by `result` gets at once, or `undefined` when it should wait.
 * @param req what the request allows: `maxWaitMs`, in milliseconds, and its context.
 * @param serverWaits the wait reasons the server sets, as the host's rules declare them
 *   (`RuleModule.reasons`): a longer wait than `maxWaitMs` for one of them is refused.
 */
export function refusalOf(
  result: Wait,
  req: { maxWaitMs: number; ctx: RequestContext },
  serverWaits: ReadonlySet<string>,
): RateLimitError | CostTooHighError | undefined {
  if (result.reason === 'cost-too-high') return new CostTooHighError(req.ctx, result.policy);
  // The server's own wait, before the client's jitter, is what the caller's limit is about.
  const wait = result.serverWaitMs ?? result.waitMs;
  if (!serverWaits.has(result.reason) || wait === undefined || wait <= req.maxWaitMs) return;
  return new RateLimitError(result.waitMs ?? 0, req.ctx, {
    policy: result.policy,
    limitMs: req.maxWaitMs,
    serverWaitMs: wait,
  });
}

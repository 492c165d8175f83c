/**
 * What an attempt's outcome means, decided once, for the rules and the breaker: was it the server
 * pushing back (slow down, come back later), and what does it say of the host's health.
 *
 * @module
 */

import type { RateLimitInfo } from '../../headers/types.js';
import { isTimeoutError } from '../../shared/errors.js';
import { comesBackNow } from '../rules/hold.js';
import { isConnectionRefused, isTransientNetworkError } from './network-errors.js';

/** Statuses that count against the circuit breaker: the server failing, not refusing. */
export const BREAKER_FAILURE_STATUSES: ReadonlySet<number> = new Set([500, 502, 503, 504]);

/**
 * Whether an answer is the server pushing back, by its status and headers alone: a 429; a 503
 * that says when to come back; a 403 that says it is about a rate limit (`Retry-After`, or a
 * policy spent: GitHub answers its primary and secondary limits so). The host's rules may find
 * more (a load shedder's 5xx: see `rules/host-rules.ts`).
 */
export function isPushback(status: number, info: RateLimitInfo | undefined): boolean {
  if (status === 429) return true;
  if (status === 503) return info?.retryAfterMs !== undefined;
  return status === 403 && (info?.retryAfterMs !== undefined || info?.remaining === 0);
}

/**
 * Whether an outcome proves that the server did not process the request, so that even a write may
 * be sent again: a pushback by its status and headers alone ({@link isPushback}: a 429, a 503 or
 * 403 that says it is about a rate limit), or a refused connection (nothing reached a server). A
 * load shedder's 5xx as the host's rules guess it, any other 5xx, a reset and a timeout prove
 * nothing: the request may have run.
 */
export function provesUnprocessed(
  status: number | undefined,
  info: RateLimitInfo | undefined,
  error: unknown,
): boolean {
  return status === undefined ? isConnectionRefused(error) : isPushback(status, info);
}

/**
 * What an outcome says of the host's health: `failure` for a 500, 502, 503 or 504 that is not a
 * pushback (a load shedder's is, and one that says when to come back), a transient network error
 * or an attempt timeout (the host did not serve); `ok` for any other response (a 429 is the server
 * protecting itself); `undefined` for anything else (an abort, an error of this process, a
 * permanent DNS failure), which says nothing about the host. A 5xx whose `Retry-After` says "come
 * back now" (0, or under `COME_BACK_NOW_MS`) spares nothing: a host that answers it forever is
 * down, and the breaker opens as for any failing host.
 */
export function healthOf(
  status: number | undefined,
  error: unknown,
  aborted: boolean,
  pushback = false,
  info?: RateLimitInfo,
): 'ok' | 'failure' | undefined {
  if (status !== undefined) {
    if (!BREAKER_FAILURE_STATUSES.has(status)) return 'ok';
    return pushback && !comesBackNow(info) ? 'ok' : 'failure';
  }
  if (aborted) return undefined;
  const hostFailed =
    isTransientNetworkError(error) || (isTimeoutError(error) && error.scope === 'attempt');
  return hostFailed ? 'failure' : undefined;
}

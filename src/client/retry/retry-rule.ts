/**
 * The default rule for what is worth another attempt.
 *
 * @module
 */
import { isTimeoutError } from '../../shared/errors.js';
import type { RetryContext } from '../types.js';

/** Methods RFC 9110 defines as idempotent (TRACE left out: nobody retries it). */
export const IDEMPOTENT_METHODS: ReadonlySet<string> = new Set([
  'GET',
  'HEAD',
  'OPTIONS',
  'PUT',
  'DELETE',
]);

/** Statuses worth a retry for a request that may be repeated. */
export const RETRY_STATUSES: ReadonlySet<number> = new Set([408, 425, 429, 500, 502, 503, 504]);

/**
 * The default retry rule:
 *
 * - an outcome that proves the request was not processed (`unprocessed`: a 429; a 503 or 403
 *   that says it is about a rate limit, by `Retry-After` or a spent policy, as GitHub answers; a
 *   GraphQL `THROTTLED` in the body of a call looked at (docs/body-limits.md); a refused
 *   connection): retried whatever the method;
 * - 408, 425, 500, 502, 503, 504, a transient network error (reset, hang-up, DNS `EAI_AGAIN`) and
 *   an attempt timeout: retried only when the request may be repeated safely (`idempotent`: an
 *   idempotent method, or an idempotency key to a host that honours keys), since the server may
 *   have acted on it. A write to a host that ignores keys (most do: GitHub) runs at most once;
 *   a load shedder's 5xx, which the host's rules only guess at, slows the host down but is not
 *   proof either;
 * - 409 for a request with an idempotency key, to a host that honours keys: the server is still
 *   processing an earlier attempt with that key (one that timed out here, say), so a later attempt
 *   will get its stored response; retried with backoff, as stripe-node does. Elsewhere a 409 is a
 *   real conflict;
 * - anything else is final.
 *
 * @example
 * // Also retry 423 Locked for requests that may be repeated:
 * new LimitedClient(url, { retry: { shouldRetry: (c) =>
 *   defaultShouldRetry(c) || (c.idempotent && c.response?.status === 423) } });
 */
export function defaultShouldRetry(context: RetryContext): boolean {
  if (context.unprocessed) return true;
  const { response } = context;
  if (response) {
    const status = response.status;
    if (status === 409) return context.hasIdempotencyKey && context.keysHonoured;
    return context.idempotent && RETRY_STATUSES.has(status);
  }
  if (!context.idempotent) return false;
  if (context.networkError) return true;
  return isTimeoutError(context.error) && context.error.scope === 'attempt';
}

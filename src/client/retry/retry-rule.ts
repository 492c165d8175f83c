/**
 * The default rule for what is worth another attempt.
 *
 * @module
 */
import { isTimeoutError } from '../../errors.js';
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
 * - a 429, a 503 with `Retry-After`, and a 403 about a rate limit (`Retry-After`, or a spent
 *   policy, as GitHub answers): retried whatever the method, since the server did not process the
 *   request;
 * - 408, 425, 500, 502, 503, 504, a transient network error (reset, refused, hang-up, DNS
 *   `EAI_AGAIN`) and an attempt timeout: retried only when the request may be repeated (an
 *   idempotent method, or an idempotency key), since the server may have acted on it;
 * - 409 for a request that carries an idempotency key: the server is still processing an earlier
 *   attempt with that key (one that timed out here, say), so a later attempt will get its stored
 *   response; retried with backoff, as stripe-node does. Without a key a 409 is a real conflict;
 * - anything else is final.
 *
 * @example
 * // Also retry 423 Locked for idempotent requests:
 * new LimitedClient(url, { retry: { shouldRetry: (c) =>
 *   defaultShouldRetry(c) || (c.idempotent && c.response?.status === 423) } });
 */
export function defaultShouldRetry(context: RetryContext): boolean {
  const { response } = context;
  if (response) {
    const status = response.status;
    if (status === 429) return true;
    // A refusal that did nothing: a 503 that says when to come back, a 403 about a rate limit.
    if ((status === 503 || status === 403) && context.pushback) return true;
    if (status === 409) return context.hasIdempotencyKey === true;
    return context.idempotent && RETRY_STATUSES.has(status);
  }
  if (!context.idempotent) return false;
  if (context.networkError) return true;
  return isTimeoutError(context.error) && context.error.scope === 'attempt';
}

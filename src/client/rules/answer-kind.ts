/**
 * What an answer is, decided before the rules take it in: the policies it declares (which move the
 * host to the `declared` mode), and whether it is the server pushing back.
 *
 * A 429, a 503 with `Retry-After` and a 403 with a rate-limit sign are pushbacks by their headers
 * (`answer.ts`). A 502, 503 or 504 without timing that comes back fast is a load shedder (nginx
 * `limit_req`, a gateway) while requests still get through: the host accepted one in the last 5 s
 * and since the pace was last cut, or the refused request was sent before that cut (too fast).
 * Otherwise the host accepts nothing, even slowed down: it is failing, and the answer is a failure
 * for the circuit breaker to count.
 *
 * @module
 */
import type { Answer } from './contract.js';
import type { PaceState } from './pace-curve.js';

/** The policies an answer reports with counts, or `undefined` when it reports none. */
export function declaredBy(answer: Answer) {
  const reported = answer.info?.policies.filter(
    (q) => q.remaining !== undefined || q.limit !== undefined,
  );
  return reported && reported.length > 0 ? reported : undefined;
}

/** Statuses a load shedder answers with (nginx `limit_req` answers 503 by default). */
const SHEDDING_STATUSES: ReadonlySet<number> = new Set([502, 503, 504]);
/** A shedder answers fast: a 5xx that took longer than this (ms) is a failing host's. */
const SHEDDING_FAST_MS = 2000;
/** A shedder refuses some while it accepts others: an acceptance this recent, at most (ms). */
const SHEDDING_RECENT_MS = 5000;

/**
 * Whether an answer is the server pushing back (see the module comment), given the host's pace
 * state before the answer is taken in.
 */
export function isPushbackOf(pace: PaceState | undefined, answer: Answer): boolean {
  const { status, info, ticket, now } = answer;
  if (answer.pushback) return true;
  if (status === undefined || !SHEDDING_STATUSES.has(status) || info?.retryAfterMs !== undefined) {
    return false;
  }
  if (now - ticket.at > SHEDDING_FAST_MS) return false;
  const { cutAt, okAt } = pace ?? {};
  // Sent before the last cut, at the old rate: the refusal of an overshoot already answered.
  if (cutAt !== undefined && ticket.at <= cutAt) return true;
  // Accepted lately, and since the last cut: the host still lets some through.
  return okAt !== undefined && now - okAt <= SHEDDING_RECENT_MS && okAt > (cutAt ?? -1);
}

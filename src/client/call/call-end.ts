/**
 * How an attempt's answer and a call end: the slot an answer holds, a response the call will not
 * return, and a call that ends without another attempt (it gives up with the last response or a
 * typed error, or is refused by an open circuit).
 *
 * @module
 */

import type { RequestContext } from '../../shared/errors.js';
import {
  CircuitOpenError,
  isCostTooHighError,
  isQueueFullError,
  isQueueTimeoutError,
  isRateLimitError,
} from '../../shared/errors.js';
import type { HostParts, OpenFlight } from '../host/host-parts.js';
import type { Ticket } from '../rules/contract.js';
import type { GiveUpReason } from '../types.js';
import type { Call, Outcome } from './attempt.js';
import type { BodySlot } from './open-bodies.js';

const noop = () => {};

/**
 * The slot of an answered attempt. It comes back now (`undefined`), unless the response may still
 * hold it: a response counts until its body ends where a slot is counted, under the host's
 * concurrency cap or in a concurrency policy the server declares; then the call holds the slot
 * until it knows whether it returns the response.
 */
export function holdSlot(
  host: HostParts,
  ticket: Ticket,
  outcome: Outcome,
  ctx: RequestContext,
): BodySlot<OpenFlight | undefined> | undefined {
  if (outcome.response !== undefined) {
    const flight = host.store.keepsFlight(outcome.info);
    if (flight || Number.isFinite(host.policy.concurrency)) {
      const held = host.bodies.hold(flight ? { ticket, ctx } : undefined);
      // The answer changed the shared state (a round of the ramp, a report): the line looks again.
      host.admission.kick();
      return held;
    }
  }
  host.admission.release();
  return undefined;
}

/** Lets a response we will not return release its connection. */
export function discard(response: Response | undefined): void {
  if (response?.body && !response.bodyUsed) response.body.cancel().catch(noop);
}

/** Lets go of an outcome the call will not return: its response's body and its attempt's scope. */
export function letGoOf(outcome: Outcome | undefined): void {
  if (outcome === undefined) return;
  discard(outcome.response);
  outcome.scope?.dispose();
}

/**
 * How long a call's attempt may stay unanswered before it is taken as lost, in milliseconds: a
 * live attempt is answered or times out within its timeout, so past it and a second more its
 * request is lost (a process that died with it out). `undefined` without an attempt timeout.
 */
export function flightTtlOf(call: Call): number | undefined {
  return Number.isFinite(call.attemptTimeoutMs) ? call.attemptTimeoutMs + 1000 : undefined;
}

/** The `give-up` reason of a refusal of the client's own (`LimitedClientError`). */
export function refusalReason(error: unknown): GiveUpReason {
  if (isQueueFullError(error)) return 'queue-full';
  if (isQueueTimeoutError(error)) return 'queue-timeout';
  if (isRateLimitError(error)) return 'hold-too-long';
  if (isCostTooHighError(error)) return 'cost-too-high';
  return 'deadline';
}

/**
 * Stops retrying: reports `give-up` and returns the last response, or throws `refusal` (when the
 * client refused) or the last error.
 */
export function giveUp(
  host: HostParts,
  call: Call,
  attempts: number,
  reason: GiveUpReason,
  last: Outcome,
  refusal?: unknown,
): Response {
  host.report.giveUp(call.ctx, reason, attempts, last);
  if (last.response) return last.response;
  throw refusal ?? last.error;
}

/**
 * Refuses a call (or its retry) because the circuit is open until `retryAt` (epoch ms): throws
 * `CircuitOpenError` on a first attempt, else gives up with the last response.
 */
export function circuitOpen(
  host: HostParts,
  call: Call,
  attempts: number,
  last: Outcome | undefined,
  retryAt: number,
): Response {
  host.report.circuitOpen(call.ctx, retryAt);
  const refusal = new CircuitOpenError(retryAt, host.shared.clock.now(), call.ctx, last?.error);
  if (!last) throw refusal;
  return giveUp(host, call, attempts, 'circuit-open', last, refusal);
}

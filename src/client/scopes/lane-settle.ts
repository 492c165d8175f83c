/**
 * Where an answer is taken in when a host has scopes (`pipeline.ts`): its lane's state, or, when
 * the answer names another scope, that scope's lane, which the call moves to with its slot.
 *
 * @module
 */
import type { RequestContext } from '../../shared/errors.js';
import type { Outcome } from '../call/attempt.js';
import type { PreparedRequest } from '../call/request.js';
import type { HostParts } from '../host/host-parts.js';
import type { Ticket } from '../rules/contract.js';

const noop = () => {};

/**
 * Settles `outcome` in the lane it belongs to and returns that lane (the call's from then on) and
 * the settle's promise when the store answers asynchronously. The lane the call was sent from
 * keeps no policy of another scope (a spent search budget must not hold its other routes): it
 * counts an acceptance (its ramp grows) and forgets a refusal; the other scope's lane takes the
 * answer in as if it had admitted the attempt.
 */
export function settleInLane(
  host: HostParts,
  req: PreparedRequest,
  ticket: Ticket,
  outcome: Outcome,
  ctx: RequestContext,
): { lane: HostParts; settled: Promise<void> | undefined } {
  const info = outcome.info;
  const lane = info === undefined ? host : host.laneOfAnswer(host, req, info, outcome.at);
  if (lane === host) return { lane, settled: host.store.settle(ticket, outcome, ctx, outcome.at) };
  const { response } = outcome;
  const accepted = response !== undefined && response.status < 400 && outcome.refused !== true;
  const forgotten = host.store.settle(ticket, accepted ? { response } : {}, ctx, outcome.at);
  host.admission.handOver(lane.admission);
  const adopted = lane.store.settle(ticket, outcome, ctx, outcome.at, true);
  const settled =
    forgotten === undefined
      ? adopted
      : adopted === undefined
        ? forgotten
        : Promise.all([forgotten, adopted]).then(noop);
  return { lane, settled };
}

/**
 * How the declared quota reads a concurrency policy's report (`qu="concurrent-requests"`): the
 * server writes `r` when it admits a request and sends it when the handler is done, so the
 * caller's requests that ended in between are still counted taken in it. The ticket carries what
 * the server counted of the caller's then (`n`, written by the requests-in-flight rule), so the
 * report is brought up to the answer's moment.
 *
 * @module
 */
import type { Ticket } from './contract.js';

/**
 * Slots left now, in the policy's units, from a report of `r` slots free at the answered request's
 * admission: `r + n - held`, the other callers' slots as of the admission plus the caller's own as
 * of now. `unanswered`: the caller's units in flight not answered yet (the answered one included:
 * its body is open); `open`: its units answered with a body still open; `limit`: the policy's
 * slots, when known, which the result never exceeds beside what is held. A ticket without `n`
 * (issued without it): `r` minus what is unanswered, plus the answered request's own slot, which
 * `r` counts already.
 */
export function slotsLeft(
  r: number,
  ticket: Pick<Ticket, 'n' | 'cost'>,
  unanswered: number,
  open: number,
  limit: number | undefined,
): number {
  if (ticket.n === undefined) return r - unanswered + ticket.cost;
  const held = unanswered + open;
  const left = r + ticket.n - held;
  return limit === undefined ? left : Math.min(left, limit - held);
}

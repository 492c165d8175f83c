/**
 * The client's rules, in the order every request meets them: the one list the loop
 * (`host-rules.ts`), the `held` event's bits, the waits refused with `RateLimitError`
 * (`refusals.ts`) and the rule order drawn in `docs/how-it-works.md` derive from. A rule earlier in
 * the list publishes in the view what later ones read (see `contract.ts`), so the requests in
 * flight come first; a rule that says "not yet" stops the check, so its wait is the answer.
 *
 * The circuit breaker is not one of them: see `breaker.ts` for why it stands apart.
 *
 * @module
 */
import { bucket } from './bucket.js';
import { budget } from './budget.js';
import type { RuleModule } from './contract.js';
import { flights } from './flights.js';
import { hold } from './hold.js';
import { pace } from './pace.js';
import { quota } from './quota.js';
import { ramp } from './ramp.js';
import { refusal } from './refusal.js';
import { timed } from './timed.js';

/** Any rule module, whatever its state and configuration. */
// biome-ignore lint/suspicious/noExplicitAny: a list of rules of different state and config types.
export type AnyRuleModule = RuleModule<any, any>;

/** The rules, in order (see the module comment). One line per rule. */
export const RULES: readonly AnyRuleModule[] = Object.freeze([
  flights, // what is out, and what is taken as lost (first: the others read it)
  refusal, // refused everything for a while: waiting calls end, one probes
  hold, // after a pushback, until the server's time
  ramp, // until the host answers; doubles per round until it refuses
  quota, // every policy the server reports has room for the cost
  timed, // what a host accepts between two refusals that give their time
  pace, // after a refusal that neither explains nor times: a cubic rate
  bucket, // the caller's own rate
  budget, // a first attempt deposits; a retry withdraws (or is refused)
]);

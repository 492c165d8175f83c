/**
 * Drives the host's rules as the pipeline does (through `rules/host-rules.ts`), one step at a time,
 * on a state the test can look into.
 */

import { isPushback } from '../../../src/client/call/answer.js';
import type { Cost } from '../../../src/client/call/cost.js';
import type { Again, Request, Ticket, Verdict } from '../../../src/client/rules/contract.js';
import { bodyEnd } from '../../../src/client/rules/flights.js';
import type { LearnConfig } from '../../../src/client/rules/host-rules.js';
import {
  type AdmitResult,
  bindRules,
  check,
  commit,
  type HostRulesConfig,
  type HostState,
  newHostState,
  prune,
  settle,
  walk,
} from '../../../src/client/rules/host-rules.js';
import { parseRateLimitHeaders } from '../../../src/headers/index.js';

/** Learning with cold start (one request before the first answer), no jitter cap games. */
export const learn: LearnConfig = {
  initialWindow: 1,
  jitter: { ratio: 0.05, maxMs: 1000 },
  fallbackHoldMs: 1000,
  flightTtlMs: 60_000,
};
/** Learning without cold start. */
export const open: LearnConfig = { ...learn, initialWindow: undefined };

/** A cost: a number of requests, or a cost per unit (`toCost({ requests: 1, tokens: 50 })`). */
type CostArg = number | Cost;

const attempt = (cost: CostArg, now: number, ttlMs?: number): Request =>
  typeof cost === 'number'
    ? { kind: 'attempt', cost, first: true, now, ttlMs }
    : { kind: 'attempt', cost: cost.requests, units: cost.units, first: true, now, ttlMs };

/** One host: its rules, and the state they run on. */
export class Host {
  state: HostState = newHostState();
  readonly rules: ReturnType<typeof bindRules>;

  constructor(config: LearnConfig | HostRulesConfig) {
    this.rules = bindRules(
      'learn' in config ? config : { learn: config, bucket: undefined, budget: undefined },
    );
  }

  /** Whether a request of `cost` may go at `now` (what is due is taken as lost first). */
  check(cost: CostArg, now: number): Verdict {
    const w = walk(this.rules, structuredClone(this.state), attempt(cost, now));
    prune(w);
    return check(w);
  }

  /** Records a request as sent, without asking (the pipeline asks first: see {@link send}). */
  commit(cost: CostArg, now: number, ttlMs?: number): Ticket {
    const w = walk(this.rules, this.state, attempt(cost, now, ttlMs));
    prune(w);
    return commit(w);
  }

  /** Prune, check, commit: the admission the pipeline runs. */
  admit(cost: CostArg, now: number, ttlMs?: number): AdmitResult {
    const w = walk(this.rules, this.state, attempt(cost, now, ttlMs));
    prune(w);
    const verdict = check(w);
    return verdict.ok ? { ok: true, ticket: commit(w) } : verdict;
  }

  /** {@link admit}, failing the test when the request is held. */
  send(now: number, cost: CostArg = 1, ttlMs?: number): Ticket {
    const result = this.admit(cost, now, ttlMs);
    if (!result.ok) throw new Error(`held: ${JSON.stringify(result)}`);
    return result.ticket;
  }

  /** Commits a ticket issued on another copy of the state (a replay) at `now`. */
  replay(ticket: Ticket, now: number): void {
    const w = walk(this.rules, this.state, {
      ...attempt({ requests: ticket.cost, units: ticket.units }, now),
      first: ticket.first,
    });
    prune(w);
    commit(w, ticket);
  }

  /** Takes what is due at `now` as lost. */
  prune(now: number): void {
    prune(walk(this.rules, this.state, attempt(0, now)));
  }

  /** An answer with `status` and these header fields; returns the hold after it. */
  answer(ticket: Ticket, status: number, headers: Record<string, string>, now: number): number {
    return this.settle(ticket, status, headers, now).holdUntil;
  }

  /**
   * {@link answer}, with all the settle says (the hold, and whether it was a pushback); `again`:
   * the call's previous refusal (see `Answer.again`).
   */
  settle(
    ticket: Ticket,
    status: number,
    headers: Record<string, string>,
    now: number,
    again?: Again,
  ) {
    const info = parseRateLimitHeaders(headers, { now });
    return settle(this.rules, this.state, {
      ticket,
      status,
      info,
      pushback: isPushback(status, info),
      now,
      random: 0.5,
      ...(again === undefined ? {} : { again }),
    });
  }

  /** No answer (a network error, or an admission given back). */
  noAnswer(ticket: Ticket, now: number): void {
    settle(this.rules, this.state, { ticket, pushback: false, now, random: 0 });
  }

  /**
   * The body of an answered request ended: what the pipeline settles after an answer that left its
   * request in flight (one declaring a concurrency policy; see `bodyEnd` in `rules/flights.ts`).
   */
  bodyEnds(ticket: Ticket, now: number): void {
    this.noAnswer(bodyEnd(ticket), now);
  }

  /** The host's hold, 0 for none. */
  get holdUntil(): number {
    return this.state.hold?.until ?? 0;
  }

  /** Units and requests in flight. */
  get inFlight(): { units: number; requests: number } {
    return { units: this.state.flights?.units ?? 0, requests: this.state.flights?.requests ?? 0 };
  }
}

/** IETF fields of one policy `s` with `r` left of `q`, resetting in `t` seconds, window `w`. */
export const ietf = (r: number, t: number, q = 10, w = 1) => ({
  'ratelimit-policy': `"s";q=${q};w=${w}`,
  ratelimit: `"s";r=${r};t=${t}`,
});

/** A ticket of an attempt issued on another copy of the state. */
export function elsewhere(fields: Partial<Ticket>): Ticket {
  return { kind: 'attempt', seq: 0, at: 0, cost: 1, first: true, ...fields };
}

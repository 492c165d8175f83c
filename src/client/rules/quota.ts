/**
 * The declared quota: what the server says about its limits, per policy, and the rule that holds a
 * request until every policy has room for it.
 *
 * For each policy the server reports, the client keeps an estimate of what is left: the reported
 * `remaining` minus every unit still in flight (they may not have been counted yet), minus every
 * unit sent since. A request goes only if every policy has room for its cost. A policy without room
 * holds requests until its reset; after the reset, one probe goes (how much came back depends on
 * the server's algorithm, which the headers do not say) and its answer tells the rest (the check of
 * one policy: `learned-policy.ts`). A report is applied only if its request was sent after the one
 * whose report was applied last, so answers that overtake each other never raise the estimate
 * above what the server had left; an overtaken answer whose report shows the server counted it
 * first gives back the units the newer report took off twice. A concurrency policy (`qu="concurrent-requests"`)
 * counts slots: a request's slot comes back when it ends, and requests wait for that rather than
 * for a time; its report, written when the server admitted the request, is read with the caller's
 * requests that ended since as free (`slots.ts`). A reset (like a hold) is recorded for `maxHoldMs`
 * at most: past it one probe goes. A policy that declares its window (so its rate) need not wait
 * for its whole-second reset: `refill.ts` learns how its units come back and when they are back.
 *
 * Policies are a list, at most {@link MAX_POLICIES}, the most restrictive: their names come from
 * the server, which may name a fresh one on every answer, and a name like `__proto__` must stay a
 * name (never a key of an object).
 *
 * @module
 */
import { compareRestrictiveness } from '../../headers/policy.js';
import type { QuotaPolicy } from '../../headers/types.js';
import { charge } from '../call/cost.js';
import {
  type Answer,
  GO,
  type Request,
  type RuleModule,
  type Verdict,
  type View,
} from './contract.js';
import { learnFillWindow, truncatedReset } from './fill-window.js';
import { learnLateReset } from './late-reset.js';
import {
  CONCURRENT,
  checkPolicy,
  expireProbes,
  type LearnedPolicy,
  spendOrProbe,
} from './learned-policy.js';
import { learnRefill, paceSpent, rateOf } from './refill.js';
import { slotsLeft } from './slots.js';

/** The declared quota of a host. */
export interface QuotaState {
  /** Known policies, at most {@link MAX_POLICIES}. */
  policies: LearnedPolicy[];
  /** Sequence number of the request whose report was applied last. */
  applied: number;
}

/** Configuration of the declared quota. */
export interface QuotaConfig {
  /** Wait before probing a spent policy whose headers give no reset, in ms. @default 1000 */
  fallbackHoldMs: number;
  /** Longest reset recorded, in milliseconds; past it one probe goes. `undefined`: no cap. */
  maxHoldMs?: number;
}

/**
 * Declared policies kept per host, at most: the most restrictive ones (`compareRestrictiveness`).
 * (The timed quota keeps one more: `timed.ts`.)
 */
export const MAX_POLICIES = 8;

/** What `p` is charged for a request (see `chargeFor`). */
function needOf(p: LearnedPolicy, request: Request) {
  return charge(request.cost, request.units, p.unit, p.name);
}

/** Units of `p`'s kind in flight, as the requests-in-flight rule counts them. */
function inFlightFor(p: LearnedPolicy, view: View): number {
  return charge(view.units, view.otherUnits, p.unit, p.name) ?? 0;
}

/** The policy kept under `key`, if any. */
export function findPolicy(state: QuotaState | undefined, key: string): LearnedPolicy | undefined {
  for (const p of state?.policies ?? []) if (p.key === key) return p;
  return undefined;
}

/**
 * The `k` most restrictive of `policies` (`compareRestrictiveness`), most restrictive first, in one
 * pass: at most `k` comparisons per policy, and one for a policy roomier than the `k` kept (the
 * parser lists them most restrictive first, so a long list costs about one comparison each).
 */
export function mostRestrictiveOf(policies: readonly QuotaPolicy[], k: number): QuotaPolicy[] {
  const kept: QuotaPolicy[] = [];
  for (const q of policies) {
    if (kept.length === k) {
      if (compareRestrictiveness(q, kept[k - 1] as QuotaPolicy) >= 0) continue;
      kept.pop();
    }
    let i = kept.length;
    // Stable: a policy goes after those it ties with.
    while (i > 0 && compareRestrictiveness(q, kept[i - 1] as QuotaPolicy) < 0) i--;
    kept.splice(i, 0, q);
  }
  return kept;
}

function policyKey(q: QuotaPolicy): string {
  return q.name ?? (q.windowMs !== undefined ? `#w${q.windowMs}` : '#');
}

/** Sets a reset `resetMs` from `now`, capped to `maxHoldMs` (see the module comment). */
function setReset(p: LearnedPolicy, now: number, resetMs: number, maxHoldMs: number | undefined) {
  if (maxHoldMs !== undefined && resetMs > maxHoldMs) {
    p.resetAt = now + maxHoldMs;
    p.serverResetAt = now + resetMs;
  } else {
    p.resetAt = now + resetMs;
    delete p.serverResetAt;
  }
}

/**
 * An answer overtaken by the report applied last (sent before it, answered after it): that report
 * took this request's units off as in flight. If the server had more left when it counted this
 * request, it counted it before that report, whose `remaining` has its units already: they were
 * taken off twice, and without this the estimate stays that low until the reset (concurrent
 * requests answered out of order, on a loaded machine, cost a whole window). Giving them back
 * never raises the estimate above what the server had left (a refill, or a reset, in between
 * only left it more). Not for a request already taken as lost (no longer counted in flight).
 */
function giveBackOvertaken(p: LearnedPolicy, q: QuotaPolicy, answer: Answer, view: View): void {
  if (p.unit === CONCURRENT || !view.counted || p.remaining === undefined) return;
  if (q.remaining === undefined || p.reported === undefined || q.remaining <= p.reported) return;
  p.remaining += charge(answer.ticket.cost, answer.ticket.units, p.unit, p.name) ?? 0;
}

/**
 * Takes a report in: every policy it names is updated (its counts only when the report is `fresh`);
 * a policy it no longer names is forgotten once its reset has passed, so a policy the server
 * stopped describing cannot hold the host forever. `view`: what is still in flight (a concurrency
 * report is brought up to now: `slots.ts`).
 */
function apply(
  state: QuotaState,
  reported: readonly QuotaPolicy[],
  fresh: boolean,
  answer: Answer,
  config: QuotaConfig,
  view: View,
): void {
  const { now, ticket } = answer;
  // Trimmed first, then applied, each found by its key in a map: a response naming 40,000 policies
  // costs one pass over them, not one pass per policy over a list that grows with them.
  const kept = mostRestrictiveOf(reported, MAX_POLICIES);
  const byKey = new Map<string, LearnedPolicy>();
  for (const p of state.policies) byKey.set(p.key, p);
  const seen = new Set<string>();
  for (const q of kept) {
    const key = policyKey(q);
    seen.add(key);
    let p = byKey.get(key);
    if (!p) {
      p = { key, probes: 0 };
      byKey.set(key, p);
      state.policies.push(p);
    }
    if (q.name !== undefined) p.name = q.name;
    if (q.limit !== undefined) p.limit = q.limit;
    if (q.windowMs !== undefined) p.windowMs = q.windowMs;
    if (q.unit !== undefined) p.unit = q.unit;
    if (!fresh) {
      giveBackOvertaken(p, q, answer, view);
      continue;
    }
    if (q.remaining !== undefined) {
      learnFillWindow(p, q, truncatedReset(answer.info?.source, now, q.resetMs));
      const before = p.remaining;
      const inFlight = inFlightFor(p, view);
      p.remaining =
        p.unit === CONCURRENT
          ? slotsLeft(q.remaining, ticket, inFlight, view.open, p.limit)
          : q.remaining - inFlight;
      if (p.unit === CONCURRENT) delete p.reported;
      else p.reported = q.remaining;
      const report = {
        before,
        remaining: q.remaining,
        need: charge(ticket.cost, ticket.units, p.unit, p.name) ?? 0,
        inFlight,
        accepted: answer.status !== undefined && answer.status < 400,
        probe: ticket.probed?.includes(p.key) ?? false,
        sentAt: ticket.at,
        now,
        resetMs: q.resetMs,
      };
      if (rateOf(p) !== undefined) learnRefill(p, report);
      else if (p.unit !== CONCURRENT) learnLateReset(p, report);
      p.probes = 0;
      if (q.resetMs !== undefined) setReset(p, now, q.resetMs, config.maxHoldMs);
      // No reset in the headers (Shopify's leaky bucket, Azure): when spent, wait a little before
      // probing rather than probing at once.
      else if (p.remaining <= 0 && p.unit !== CONCURRENT) {
        p.resetAt = now + config.fallbackHoldMs;
        delete p.serverResetAt;
      } else {
        delete p.resetAt;
        delete p.serverResetAt;
      }
    } else if (q.resetMs !== undefined) {
      setReset(p, now, q.resetMs, config.maxHoldMs);
    }
  }
  if (fresh) {
    state.policies = state.policies.filter(
      (p) => seen.has(p.key) || (p.resetAt !== undefined && p.resetAt > now),
    );
  }
  if (state.policies.length > MAX_POLICIES) {
    state.policies.sort(compareRestrictiveness);
    state.policies.length = MAX_POLICIES;
  }
}

/** See the module comment. */
export const quota = {
  key: 'quota',
  title: 'declared quota',
  reasons: [
    { reason: 'learned-limit', serverTimed: true },
    { reason: 'probe', serverTimed: false },
  ],
  configure: (host) => host.learn,
  kinds: ['attempt'],
  fresh: () => undefined,
  prune(state, now, _config, view) {
    for (const p of state.policies) {
      if (view.lostUnits > 0 && p.unit === CONCURRENT && p.remaining !== undefined) {
        p.remaining += view.lostUnits;
      }
      expireProbes(p, now);
    }
    return state;
  },
  check(state, request, _config, view) {
    let verdict: Verdict = GO;
    for (const p of state.policies) {
      const v = checkPolicy(p, needOf(p, request), request.now, view.requests);
      if (v.ok) continue;
      if (v.reason === 'cost-too-high') return v;
      // The longest known wait wins; a wait for an answer only when no policy gives a time.
      if (verdict.ok || (v.waitMs !== undefined && (verdict.waitMs ?? -1) < v.waitMs)) verdict = v;
    }
    return verdict;
  },
  commit(state, request, ticket, _config, view) {
    if (state === undefined) return undefined;
    const { now } = request;
    if (!view.replaying) {
      const probed: string[] = [];
      for (const p of state.policies) {
        if (spendOrProbe(p, needOf(p, request), ticket.expires, now)) probed.push(p.key);
      }
      ticket.probed = probed;
      return state;
    }
    // A request sent on another copy: the policies it probed there count a probe here, the others
    // spend its cost; a request already lost holds no concurrency slot and probes nothing.
    const lost = ticket.expires !== undefined && ticket.expires <= now;
    const probed = ticket.probed ?? [];
    for (const p of state.policies) {
      if (p.remaining === undefined) continue;
      if (!probed.includes(p.key)) {
        const need = needOf(p, request) ?? 0;
        if (!lost || p.unit !== CONCURRENT) p.remaining -= need;
        paceSpent(p, need, ticket.at);
      } else if (!lost) {
        p.probes++;
        if (ticket.expires !== undefined) {
          p.probesUntil = Math.max(p.probesUntil ?? 0, ticket.expires);
        }
      }
    }
    return state;
  },
  settle(current, answer, config, view) {
    const { ticket } = answer;
    const state = current ?? (view.declared ? { policies: [], applied: 0 } : undefined);
    if (state === undefined) return undefined;
    for (const p of state.policies) {
      // A concurrency slot is given back when its request ends (a fresh report overrides below).
      if (view.counted && p.unit === CONCURRENT && p.remaining !== undefined) {
        p.remaining += ticket.cost;
      }
      if (ticket.probed?.includes(p.key)) p.probes = Math.max(0, p.probes - 1);
    }
    if (answer.status === undefined || view.declared === undefined) return state;
    // Fresh: newer than the last report applied, and issued by this state. A sequence number the
    // state never issued (a shared state that expired, or was replaced by another process's copy,
    // while the request was out) would push `applied` past `seq` and make every later report look
    // old until `seq` caught up.
    const fresh = ticket.seq > state.applied && ticket.seq <= view.seq;
    if (fresh) state.applied = ticket.seq;
    apply(state, view.declared, fresh, answer, config, view);
    return state;
  },
} satisfies RuleModule<QuotaState, QuotaConfig>;

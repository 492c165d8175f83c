/**
 * The blind quota: what a server that sends only `Retry-After` teaches. The number of requests it
 * accepted before its 429 is its quota per window. The client keeps that as a policy of its own
 * (named {@link BLIND_POLICY}): after the hold, that many go at once, then one at a time until the
 * next 429 starts the next window, whose count becomes the next estimate. Once learned, about one
 * 429 per window (the probe that finds the window's end). Answers that arrive during the hold are
 * not counted: for a bucket they are partly refill, and an estimate that is short costs a round
 * trip where one that is long costs a 429.
 *
 * Lives only while the host is blind: the first answer that declares policies ends it.
 *
 * @module
 */
import type { Rule } from './contract.js';
import { checkPolicy, expireProbes, type LearnedPolicy, spendOrProbe } from './quota.js';

/** The name of the policy learned from 429s alone. */
export const BLIND_POLICY = 'retry-after';

/** The blind quota of a host. */
export interface BlindState {
  /** Answers that were not 429 since the last 429 (or since the start), outside holds. */
  successes: number;
  /** The quota learned at the last 429, once there was one. */
  policy?: LearnedPolicy;
}

/** See the module comment. */
export const blind = {
  key: 'blind',
  kinds: ['attempt'],
  fresh: () => undefined,
  prune(state, now) {
    if (state.policy) expireProbes(state.policy, now);
    return state;
  },
  check(state, { cost, now }, _config, view) {
    return state.policy ? checkPolicy(state.policy, cost, now, view.requests) : { ok: true };
  },
  commit(state, { cost, now }, ticket, _config, view) {
    const p = state?.policy;
    if (p === undefined) return state;
    if (!view.replaying) {
      ticket.blindProbe = spendOrProbe(p, cost, ticket.expires);
    } else if (!ticket.blindProbe) {
      // Sent on another copy, where it spent its cost: it spends it here too.
      if (p.remaining !== undefined) p.remaining -= cost;
    } else if (ticket.expires === undefined || ticket.expires > now) {
      // A probe there is a probe here, unless its time is already up.
      p.probes++;
      if (ticket.expires !== undefined)
        p.probesUntil = Math.max(p.probesUntil ?? 0, ticket.expires);
    }
    return state;
  },
  settle(current, answer, _config, view) {
    if (view.mode === 'declared') return undefined;
    const { status, now } = answer;
    if (answer.ticket.blindProbe && current?.policy) {
      current.policy.probes = Math.max(0, current.policy.probes - 1);
    }
    if (status === undefined || view.mode !== 'blind') return current;
    const state = current ?? { successes: 0 };
    const learned = state.policy;
    if (!answer.pushback) {
      if (learned?.resetAt === undefined || now >= learned.resetAt) state.successes++;
      return state;
    }
    if (status !== 429) return state;
    if (learned?.resetAt !== undefined && now < learned.resetAt) {
      // Another 429 of the same overshoot: the window's count is already taken.
      learned.resetAt = Math.max(learned.resetAt, view.holdUntil);
      return state;
    }
    state.policy = {
      key: BLIND_POLICY,
      name: BLIND_POLICY,
      remaining: state.successes,
      resetAt: Math.max(now, view.holdUntil),
      probes: 0,
    };
    state.successes = 0;
    return state;
  },
} satisfies Rule<BlindState, Record<string, never>>;

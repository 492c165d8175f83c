/**
 * The timed quota: what a host teaches by timing its refusals (`Retry-After`) without explaining
 * them: a server that sends only `Retry-After`, or a secondary limit beside a declared quota that
 * still has room (GitHub's). The number of requests it accepted since its last such refusal is
 * its quota per window, and the refusal's time is the window's end. The client keeps that as a
 * policy of its own (named {@link TIMED_POLICY}): when the hold lifts, that many go at once (the
 * window is fresh), then one at a time, each once the others are answered, until the next refusal
 * starts the next window, whose count becomes the next estimate, or until one of them is accepted
 * (the host takes requests again: the learned quota is dropped). About one refusal per window (the
 * probe that finds the window's end, which costs nothing: the window was full anyway), where
 * releasing every waiting call when the hold lifts would have them collide again.
 *
 * Answers that arrive during the hold are not counted: for a bucket they are partly refill, and
 * an estimate that is short costs a round trip where one that is long costs a refusal. A window
 * and one more without a timed refusal, and the learned quota is forgotten (the limit may be gone).
 *
 * @module
 */
import { GO, type RuleModule } from './contract.js';
import { timedWait } from './hold.js';
import { checkPolicy, expireProbes, type LearnedPolicy, spendOrProbe } from './learned-policy.js';

/** The name of the policy learned from timed refusals. */
export const TIMED_POLICY = 'retry-after';

/** The timed quota of a host. */
export interface TimedState {
  /** Answers accepted since the last timed refusal (or since the start), outside holds. */
  successes: number;
  /** The quota learned at the last timed refusal; `windowMs`: from it to the window's end. */
  policy?: LearnedPolicy;
}

/** See the module comment. */
export const timed = {
  key: 'timed',
  title: 'timed quota',
  reasons: [
    { reason: 'learned-limit', serverTimed: true },
    { reason: 'probe', serverTimed: false },
  ],
  configure: (host) => host.learn && {},
  kinds: ['attempt'],
  fresh: () => undefined,
  prune(state, now) {
    const p = state.policy;
    if (p === undefined) return state;
    expireProbes(p, now);
    // A window and one more without a timed refusal: the learned quota is forgotten.
    if (p.resetAt !== undefined && now >= p.resetAt + (p.windowMs ?? 0)) delete state.policy;
    return state;
  },
  check(state, { cost, now }, _config, view) {
    return state.policy ? checkPolicy(state.policy, cost, now, view.requests) : GO;
  },
  commit(state, { cost, now }, ticket, _config, view) {
    const p = state?.policy;
    if (p === undefined) return state;
    if (!view.replaying) {
      ticket.timedProbe = spendOrProbe(p, cost, ticket.expires);
    } else if (!ticket.timedProbe) {
      // Sent on another copy, where it spent its cost: it spends it here too.
      if (p.remaining !== undefined) p.remaining -= cost;
    } else if (ticket.expires === undefined || ticket.expires > now) {
      // A probe there is a probe here, unless its time is already up.
      p.probes++;
      if (ticket.expires !== undefined) {
        p.probesUntil = Math.max(p.probesUntil ?? 0, ticket.expires);
      }
    }
    return state;
  },
  settle(current, answer, _config, view) {
    const { status, now, info } = answer;
    if (answer.ticket.timedProbe && current?.policy) {
      current.policy.probes = Math.max(0, current.policy.probes - 1);
    }
    if (status === undefined) return current;
    const state = current ?? { successes: 0 };
    const learned = state.policy;
    if (!view.pushback) {
      if (status >= 500 || (learned?.resetAt !== undefined && now < learned.resetAt)) return state;
      state.successes++;
      // A probe past the window's end accepted: the host takes requests again, so the learned
      // quota has done its work (the next timed refusal teaches the next one).
      if (answer.ticket.timedProbe && learned !== undefined) delete state.policy;
      return state;
    }
    // Only a refusal that gives its time and that the headers do not explain (a spent policy is
    // the declared quota's) tells where a window ends.
    if (view.explained || timedWait(info) === undefined) return state;
    if (learned?.resetAt !== undefined && now < learned.resetAt) {
      // Another refusal of the same overshoot: the window's count is already taken.
      learned.resetAt = Math.max(learned.resetAt, view.holdUntil);
      return state;
    }
    const resetAt = Math.max(now, view.holdUntil);
    state.policy = {
      key: TIMED_POLICY,
      name: TIMED_POLICY,
      remaining: state.successes,
      resetAt,
      windowMs: resetAt - now,
      probes: 0,
    };
    state.successes = 0;
    return state;
  },
} satisfies RuleModule<TimedState, Record<string, never>>;

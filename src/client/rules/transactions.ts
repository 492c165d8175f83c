/**
 * The three transactions the pipeline runs on a host's state in the {@link StateStore} (see
 * `host-rules.ts`): admit an attempt or a retry, settle an answer, read the state. Methods in
 * object literals: see [hot-path.md](../../../docs/hot-path.md).
 *
 * @module
 */
import type { ReplayableTransaction } from '../host/store.js';
import type { Answer, Request } from './contract.js';
import {
  type AdmitResult,
  admit,
  commit,
  type HostState,
  newHostState,
  prune,
  type RuleSet,
  type Settled,
  settle,
  walk,
} from './host-rules.js';

/**
 * What the transactions of a host share besides its rules: `time`, when the store has a clock of
 * its own, reads the state's time as each run starts (the request's or the answer's `now`; see
 * `state-time.ts`); `check` checks a state the store read from outside the process
 * (`Transaction.check`, `state-check.ts`).
 */
export interface TransactionParts {
  time?: (() => number) | undefined;
  check?: ((state: unknown) => HostState) | undefined;
}

const NO_PARTS: TransactionParts = Object.freeze({});

/**
 * The transaction that admits `request` (an attempt, or a retry asking the budget): prune, check,
 * commit. On a share of the limits the rules' configuration is scaled (`Rule.scale`); a replay
 * commits the ticket the run on the other copy returned, or nothing if it was refused.
 */
export function admitTransaction(
  rules: RuleSet,
  request: Request,
  parts: TransactionParts = NO_PARTS,
): ReplayableTransaction<HostState, AdmitResult> {
  return {
    run(current, share = 1) {
      if (parts.time) request.now = parts.time();
      const w = walk(rules, current, request, share);
      return [w.state, admit(w)];
    },
    replay(current, result) {
      if (!result.ok) return current;
      const w = walk(rules, current, request);
      prune(w);
      commit(w, structuredClone(result.ticket));
      return w.state;
    },
    check: parts.check,
  };
}

/**
 * The transaction that takes an answer in: the host's hold after it, and whether it was a pushback
 * (see `settle` in `host-rules.ts`). Deterministic: a replay runs it again.
 */
export function settleTransaction(
  rules: RuleSet,
  answer: Answer,
  parts: TransactionParts = NO_PARTS,
): ReplayableTransaction<HostState, Settled> {
  return {
    run(current) {
      if (parts.time) answer.now = parts.time();
      const state = current ?? newHostState();
      return [state, settle(rules, state, answer)];
    },
    // No `this`: a store may call the methods detached from the transaction.
    replay(current) {
      const state = current ?? newHostState();
      settle(rules, state, answer);
      return state;
    },
    check: parts.check,
  };
}

/**
 * The transaction that takes in an answer to an attempt another state admitted (the lane of
 * another scope: `pipeline.ts`): it commits the attempt here as sent at `request.now` (no check:
 * it was sent), then settles the answer on it. The state learns the answer as if it had admitted
 * the attempt itself. A replay commits the same ticket again and settles again.
 */
export function adoptTransaction(
  rules: RuleSet,
  request: Request,
  answer: Answer,
  parts: TransactionParts = NO_PARTS,
): ReplayableTransaction<HostState, Settled> {
  let adopted: Answer['ticket'] | undefined;
  return {
    run(current) {
      if (parts.time) answer.now = parts.time();
      if (request.now > answer.now) request.now = answer.now;
      const w = walk(rules, current, request);
      prune(w);
      adopted = commit(w);
      answer.ticket = adopted;
      return [w.state, settle(rules, w.state, answer)];
    },
    replay(current) {
      const w = walk(rules, current, request);
      prune(w);
      commit(w, adopted && structuredClone(adopted));
      settle(rules, w.state, answer);
      return w.state;
    },
    check: parts.check,
  };
}

/** The transaction that reads the state without changing it (for `stats()`). */
export const readTransaction: ReplayableTransaction<HostState, HostState | undefined> = {
  run: (current) => [current, current],
  replay: (current) => current,
};

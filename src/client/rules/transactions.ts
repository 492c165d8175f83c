/**
 * The three transactions the pipeline runs on a host's state in the {@link StateStore} (see
 * `host-rules.ts`): admit an attempt or a retry, settle an answer, read the state. Classes, so that
 * a transaction, made per request, allocates no closures.
 *
 * @module
 */
import type { Transaction } from '../store.js';
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
 * The transaction that admits `request` (an attempt, or a retry asking the budget): prune, check,
 * commit. On a share of the limits the rules' configuration is scaled (`Rule.scale`); a replay
 * commits the ticket the run on the other copy returned, or nothing if it was refused.
 */
export function admitTransaction(
  rules: RuleSet,
  request: Request,
): Transaction<HostState, AdmitResult> {
  return new AdmitTransaction(rules, request);
}

class AdmitTransaction implements Transaction<HostState, AdmitResult> {
  readonly #rules: RuleSet;
  readonly #request: Request;

  constructor(rules: RuleSet, request: Request) {
    this.#rules = rules;
    this.#request = request;
  }

  run(current: HostState | undefined, share = 1): [HostState, AdmitResult] {
    const w = walk(this.#rules, current, this.#request, share);
    return [w.state, admit(w)];
  }

  replay(current: HostState | undefined, result: AdmitResult): HostState | undefined {
    if (!result.ok) return current;
    const w = walk(this.#rules, current, this.#request);
    prune(w);
    commit(w, structuredClone(result.ticket));
    return w.state;
  }
}

/**
 * The transaction that takes an answer in: the host's hold after it, and whether it was a pushback
 * (see `settle` in `host-rules.ts`). Deterministic: a replay runs it again.
 */
export function settleTransaction(rules: RuleSet, answer: Answer): Transaction<HostState, Settled> {
  return new SettleTransaction(rules, answer);
}

class SettleTransaction implements Transaction<HostState, Settled> {
  readonly #rules: RuleSet;
  readonly #answer: Answer;

  constructor(rules: RuleSet, answer: Answer) {
    this.#rules = rules;
    this.#answer = answer;
  }

  run(current: HostState | undefined): [HostState, Settled] {
    const state = current ?? newHostState();
    return [state, settle(this.#rules, state, this.#answer)];
  }

  replay(current: HostState | undefined): HostState | undefined {
    return this.run(current)[0];
  }
}

/** The transaction that reads the state without changing it (for `stats()`). */
export const readTransaction: Transaction<HostState, HostState | undefined> = {
  run: (current) => [current, current],
  replay: (current) => current,
};

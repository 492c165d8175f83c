/**
 * The check of a host's state read from outside this process (another process's JSON, from a
 * shared store): every field, its type and its bounds, so that what another writer left (another
 * version of the package in a rolling deploy, a bug, anything else writing to the key) can neither
 * crash a rule nor hold the host longer than this client would have itself.
 *
 * - **Shape.** A state of another format version (`v`), a field of the wrong type or missing, a
 *   count that is not a whole number: the state is refused, with the field named
 *   (`quota.policies[0].probes is not a count`). The store then runs on no state, reports it and
 *   writes over it (`Transaction.check`). A field this version does not know is dropped from the
 *   copy: a later version of the same format only adds optional fields (a change to what an
 *   existing field means takes a new `v`), so a rolling deploy shares what both versions read.
 * - **Bounds.** A moment past what the rules ever record is brought back to it: a hold's end to
 *   `maxHoldMs` and its jitter from now, a reset to `maxHoldMs`, the server's own end to the
 *   longest delay the parser reports (366 days), the time a request is taken as lost to the
 *   longest a request counts in flight, a last refill or a last cut to now, a sequence number to
 *   the state's. So no wait read from shared state is longer than the client records on its own.
 *
 * The fields are listed once, in {@link SPEC} (in the vocabulary of `state-spec.ts`), whose type is
 * derived from `HostState`: a field added to a rule's state does not compile until it is listed
 * here, with its kind. The check walks the state along the list (never deeper: a state nested
 * 100,000 deep is refused at its first level) and returns a copy, so a read-only state (a store's
 * own) is never changed.
 * It runs once per state read from the store, not per request. `RedisStore` offers it to the
 * pipeline (`STATE_CHECK` in `store.ts`), which is how it stays out of the core bundle.
 *
 * @module
 */
import { MAX_DELAY_MS } from '../../headers/values.js';
import type { BucketConfig } from './bucket.js';
import { type BudgetConfig, budget } from './budget.js';
import { type HostState, type LearnConfig, type RuleSet, STATE_VERSION } from './host-rules.js';
import type { LearnedPolicy } from './learned-policy.js';
import { pace } from './pace.js';
import { SLOTS } from './sliding-counts.js';
import {
  type AnySpec,
  type Bounds,
  check,
  isObject,
  List,
  number,
  type Obj,
  Opt,
  pathText,
  Refusal,
  refuse,
  type Spec,
  Tuple,
  Upto,
  within,
} from './state-spec.js';

/** Bounds of the moments (see the module comment). */
const PAST = new Upto((b) => b.now);
const SEQ = new Upto((b) => b.seq, true);
const SERVER = new Upto((b) => b.now + MAX_DELAY_MS);
const HOLD = new Upto(
  (b) => b.now + (b.learn.maxHoldMs ?? MAX_DELAY_MS) + b.learn.jitter.maxMs + 1,
);
const FLIGHT = new Upto((b) => {
  const ms = Math.max(b.learn.flightTtlMs, b.learn.longestFlightMs ?? 0);
  // A request's time is rounded up to a grain of a second or a thirty-second of it (flights.ts).
  return b.now + ms + Math.max(1000, ms / 32) + 1000;
});

const UNITS: Spec<[string, number][]> = new List(new Tuple(['text', 'amount'] as const));
const POLICY: Spec<LearnedPolicy> = {
  key: 'text',
  name: new Opt('text'),
  limit: new Opt('amount'),
  windowMs: new Opt('amount'),
  unit: new Opt('text'),
  remaining: new Opt('number'),
  reported: new Opt('number'),
  // A reset is capped at `maxHoldMs`; the timed quota's is the end of a hold (jitter included).
  resetAt: new Opt(HOLD),
  probes: 'count',
  probesUntil: new Opt(FLIGHT),
  serverResetAt: new Opt(SERVER),
  // How its units come back (refill.ts): moments the model or the server's reset sets, as far
  // as the longest delay the parser reports (a day's quota refills over a day).
  peak: new Opt('amount'),
  refill: new Opt(['gradual', 'at-once'] as const),
  refillAt: new Opt(SERVER),
  paceAt: new Opt(SERVER),
  notBefore: new Opt(SERVER),
  trialAt: new Opt(SERVER),
  partialReset: new Opt([true] as const),
  heardAt: new Opt(PAST),
  // Where a token policy's window is inferred from its answers (fill-window.ts).
  fillMs: new Opt('amount'),
  fillMaxMs: new Opt('amount'),
  // Where its reset runs late (late-reset.ts).
  windowBoundMs: new Opt('amount'),
  windowFirstAt: new Opt(PAST),
  lateReset: new Opt([true, false] as const),
  exactReset: new Opt([true] as const),
  windows: new Opt('count'),
  windowFloorMs: new Opt('amount'),
  wholeSeconds: new Opt([false] as const),
};
const ring: Spec<number[]> = new List('amount', SLOTS, SLOTS);

/** Every field of a host's state and how it is checked (see the module comment). */
const SPEC: Spec<HostState> = {
  v: 'count',
  mode: ['cold', 'blind', 'declared'],
  seq: 'count',
  flights: new Opt({
    units: 'amount',
    requests: 'count',
    other: new Opt(UNITS),
    list: new List(new Tuple([FLIGHT, 'count', 'amount', new Opt(UNITS)] as const)),
    open: new Opt('amount'),
  }),
  hold: new Opt({ until: HOLD, base: new Opt(SERVER), seq: new Opt(SEQ) }),
  refusal: new Opt({ since: PAST, count: 'count', calls: new Opt('count') }),
  ramp: new Opt({
    window: 'amount',
    seq0: new Upto((b) => b.seq + 1, true),
    sent: 'count',
    answered: 'count',
    accepted: 'count',
    lastAt: PAST,
    minRttMs: new Opt('amount'),
  }),
  quota: new Opt({ policies: new List(POLICY), applied: SEQ }),
  timed: new Opt({ successes: 'count', policy: new Opt(POLICY) }),
  pace: new Opt({
    sent: {
      slot: new Upto((b) => pace.fresh({}, b.now).sent.slot, true),
      sent: ring,
      ok: ring,
    },
    rate: new Opt('amount'),
    peak: new Opt('amount'),
    floor: new Opt('amount'),
    ceiling: new Opt('amount'),
    cutAt: new Opt(PAST),
    cutSeq: new Opt(SEQ),
    okAt: new Opt(PAST),
    okSentAt: new Opt(PAST),
    tokens: new Opt('number'),
    at: new Opt(PAST),
    misses: new Opt('count'),
    stretchAt: new Opt(PAST),
    stretchOk: new Opt('count'),
    growAt: new Opt(PAST),
  }),
  bucket: new Opt({
    tokens: new Upto((b) => (b.config as BucketConfig).burst),
    at: PAST,
  }),
  budget: new Opt({
    slot: new Upto((b) => budget.fresh(b.config as BudgetConfig, b.now).slot, true),
    requests: ring,
    retries: ring,
  }),
};

/**
 * Checks a state read from outside this process for a host running `rules`, at the state's time
 * `now` (epoch milliseconds): returns a checked copy, whose moments are within their bounds, or
 * throws an `Error` naming what is wrong (see the module comment). The state of a rule the host
 * does not run is left out (no rule would read it).
 */
export function checkHostState(value: unknown, rules: RuleSet, now: number): HostState {
  try {
    return checkState(value, rules, now);
  } catch (error) {
    if (!(error instanceof Refusal)) throw error;
    const path = error.path.length === 0 ? 'the state' : pathText(error.path);
    throw new Error(`${path} ${error.problem}`);
  }
}

/** {@link checkHostState}, throwing a {@link Refusal}. */
function checkState(value: unknown, rules: RuleSet, now: number): HostState {
  if (!isObject(value)) refuse('is not an object');
  if (value.v !== STATE_VERSION) {
    const v = JSON.stringify(value.v ?? null).slice(0, 20);
    refuse(`is of another format (v: ${v}; this version reads v: ${STATE_VERSION})`);
  }
  // A key SPEC does not list (a later version's rule) is not copied: see the module comment.
  const top = SPEC as unknown as Obj;
  let seq: number;
  let mode: unknown;
  try {
    seq = number(value.seq, 'count');
  } catch (error) {
    within(error, 'seq');
  }
  // Learning's parameters are the requests in flight's (the rules that learn run only with it).
  const learn = rules.all.find((rule) => rule.key === 'flights')?.config as LearnConfig;
  const b: Bounds = { now, seq, learn, config: undefined };
  try {
    mode = check(value.mode, top.mode as AnySpec, b);
  } catch (error) {
    within(error, 'mode');
  }
  const out: Record<string, unknown> = { v: STATE_VERSION, mode, seq };
  for (const rule of rules.all) {
    const own = value[rule.key];
    const field = top[rule.key];
    if (own === undefined || !(field instanceof Opt)) continue;
    b.config = rule.config;
    try {
      out[rule.key] = check(own, field.of, b);
    } catch (error) {
      within(error, rule.key);
    }
  }
  return out as unknown as HostState;
}

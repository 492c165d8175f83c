/**
 * `checkHostState`: what a state read from a shared store must be before a rule reads it. Every
 * state the rules make passes it unchanged (a property over random traffic on fake time); a state
 * of the wrong shape or of another format is refused with the field named; a moment past what the
 * rules record is brought back within its bound.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toCost } from '../../../src/client/call/cost.js';
import {
  bindRules,
  type HostRulesConfig,
  type HostState,
  STATE_VERSION,
} from '../../../src/client/rules/host-rules.js';
import { checkHostState } from '../../../src/client/rules/state-check.js';
import { MAX_DELAY_MS } from '../../../src/headers/values.js';
import { Host, learn } from './harness.js';

const NOW = 1_700_000_000_000;
const config: HostRulesConfig = {
  learn: { ...learn, maxHoldMs: 60_000, longestFlightMs: 31_000 },
  bucket: { rate: 5, burst: 10 },
  budget: { ratio: 0.1, minPerSecond: 1, windowMs: 10_000 },
};
const rules = bindRules(config);
/** The state as another process would read it: through JSON. */
const json = (state: HostState): unknown => JSON.parse(JSON.stringify(state));
/** The message the check refuses `state` with. */
function refusal(state: unknown, now = NOW): string {
  try {
    checkHostState(state, rules, now);
  } catch (error) {
    return (error as Error).message;
  }
  return 'passed';
}

/** A state with every rule's part, from real traffic. */
function busyHost(): { host: Host; now: number } {
  const host = new Host(config);
  let now = NOW;
  const first = host.send(now, toCost({ requests: 1, tokens: 20 }));
  host.answer(first, 200, { 'ratelimit-policy': '"a";q=10;w=60', ratelimit: '"a";r=3;t=40' }, now);
  now += 100;
  const second = host.send(now, 1, 5000);
  host.send(now);
  host.answer(second, 429, { 'retry-after': '2' }, now + 50);
  return { host, now: now + 50 };
}

describe('checkHostState', () => {
  it('passes every state the rules make, unchanged (random traffic, fake time)', () => {
    const step = fc.record({
      wait: fc.integer({ min: 0, max: 5000 }),
      cost: fc.oneof(
        fc.constant(1),
        fc.integer({ min: 1, max: 500 }).map((tokens) => toCost({ requests: 1, tokens })),
      ),
      ttl: fc.option(fc.integer({ min: 100, max: 30_000 }), { nil: undefined }),
      status: fc.constantFrom(200, 200, 429, 503, 500, 403, undefined),
      headers: fc.record(
        {
          'retry-after': fc.integer({ min: 0, max: 120 }).map(String),
          'ratelimit-policy': fc.constantFrom('"a";q=10;w=60', '"b";q=5;w=1, "c";q=1000;w=3600'),
          ratelimit: fc
            .tuple(fc.integer({ min: 0, max: 10 }), fc.integer({ min: 0, max: 3600 }))
            .map(([r, t]) => `"a";r=${r};t=${t}, "b";r=${r};t=1`),
          'x-ratelimit-remaining': fc.integer({ min: 0, max: 100 }).map(String),
          'x-ratelimit-reset': fc.integer({ min: 0, max: 100 }).map(String),
          // Anthropic's, alone: a token window inferred from whole-second resets (fill-window.ts).
          'anthropic-ratelimit-output-tokens-limit': fc.constant('1000'),
          'anthropic-ratelimit-output-tokens-remaining': fc
            .integer({ min: 0, max: 1000 })
            .map(String),
          'anthropic-ratelimit-output-tokens-reset': fc
            .integer({ min: 0, max: 400 })
            .map((s) => new Date(NOW + s * 1000).toISOString().replace(/\.\d+Z$/, 'Z')),
        },
        { requiredKeys: [] },
      ),
      answerLater: fc.boolean(),
    });
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 60 }), (steps) => {
        const host = new Host(config);
        let now = NOW;
        const out: ReturnType<Host['send']>[] = [];
        for (const s of steps) {
          now += s.wait;
          const admitted = host.admit(s.cost, now, s.ttl);
          if (admitted.ok) out.push(admitted.ticket);
          const ticket = s.answerLater ? out.shift() : out.pop();
          if (ticket !== undefined) {
            if (s.status === undefined) host.noAnswer(ticket, now);
            else host.answer(ticket, s.status, s.headers as Record<string, string>, now);
          }
          const state = json(host.state);
          expect(checkHostState(state, rules, now)).toEqual(state);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('refuses a state that is not an object, or of another format', () => {
    expect(refusal(42)).toBe('the state is not an object');
    expect(refusal('x')).toBe('the state is not an object');
    expect(refusal(null)).toBe('the state is not an object');
    expect(refusal([])).toBe('the state is not an object');
    expect(refusal({ mode: 'cold', seq: 0 })).toBe(
      `the state is of another format (v: null; this version reads v: ${STATE_VERSION})`,
    );
    expect(refusal({ v: 2, mode: 'cold', seq: 0 })).toMatch(/^the state is of another format/);
  });

  it('refuses a wrong shape, naming the field', () => {
    const base = { v: STATE_VERSION, mode: 'declared', seq: 3 };
    const cases: [unknown, string | RegExp][] = [
      [{ ...base, seq: -1 }, 'seq is not a count'],
      [{ ...base, seq: 1.5 }, 'seq is not a count'],
      [{ ...base, mode: 'warm' }, 'mode is not one of cold, blind, declared'],
      [{ ...base, quota: { policies: {}, applied: 0 } }, 'quota.policies is not a list'],
      [{ ...base, quota: { policies: [null], applied: 0 } }, 'quota.policies[0] is not an object'],
      [
        { ...base, quota: { policies: [{ key: 'a', probes: '1' }], applied: 0 } },
        'quota.policies[0].probes is not a finite number',
      ],
      [{ ...base, quota: { policies: [] } }, 'quota.applied is missing'],
      [
        { ...base, quota: { policies: [{ key: 'a', probes: 0, fillMaxMs: -1 }], applied: 0 } },
        /^quota\.policies\[0\]\.fillMaxMs is /,
      ],
      [{ ...base, flights: { units: 0, requests: 0, list: 5 } }, 'flights.list is not a list'],
      [
        { ...base, flights: { units: 0, requests: 0, list: [[1, 1]] } },
        'flights.list[0][2] is missing',
      ],
      [
        { ...base, flights: { units: 0, requests: 0, list: [[1, 1, 1, [], 5]] } },
        'flights.list[0] is not a list of 4',
      ],
      [{ ...base, hold: { until: 'soon' } }, 'hold.until is not a finite number'],
      [{ ...base, budget: { slot: 1, requests: [1], retries: [] } }, /budget.requests has 1 items/],
    ];
    for (const [state, message] of cases) expect(refusal(state), String(message)).toMatch(message);
  });

  it('drops the fields it does not know and keeps the rest (a newer version of the format)', () => {
    // What a later version of the same `v` could write: a field more at every level.
    const { host, now } = busyHost();
    const state = json(host.state) as Record<string, Record<string, unknown>>;
    const newer = JSON.parse(JSON.stringify(state));
    newer.extra = 1;
    newer.hold.__proto__x = 1;
    newer.quota.policies[0].later = 'x';
    const read = checkHostState(newer, rules, now);
    expect(read).toEqual(state);
    expect(Object.hasOwn(read as object, 'extra')).toBe(false);
    const proto = JSON.parse(`{"v":${STATE_VERSION},"mode":"cold","seq":0,"__proto__":{"x":1}}`);
    const cold: unknown = checkHostState(proto, rules, NOW);
    expect(cold).toEqual({ v: STATE_VERSION, mode: 'cold', seq: 0 });
    expect(Object.getPrototypeOf(cold)).toBe(Object.prototype);
  });

  it('refuses a state nested 100,000 deep at its first level, without recursion', () => {
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    const state = JSON.parse(`{"v":1,"mode":"blind","seq":1,"hold":${deep}}`);
    expect(refusal(state)).toBe('hold is not an object');
  });

  it('brings moments past what the rules record back within their bounds', () => {
    const { host, now } = busyHost();
    const state = json(host.state) as HostState & Record<string, unknown>;
    const far = 8.64e15;
    (state.hold as { until: number }).until = far;
    (state.hold as { base?: number }).base = far;
    (state.quota?.policies[0] as { resetAt?: number }).resetAt = far;
    (state.flights?.list[0] as number[])[0] = far;
    (state.bucket as { at: number }).at = far;
    (state.bucket as { tokens: number }).tokens = 1e300;
    (state.pace as { at?: number }).at = far;
    (state.budget as { slot: number }).slot = far;
    (state.quota as { applied: number }).applied = 1e15;
    const checked = checkHostState(state, rules, now);
    // The hold: maxHoldMs (60 s) and the jitter's most (1 s) from now, and a millisecond.
    expect(checked.hold?.until).toBe(now + 61_001);
    expect(checked.hold?.base).toBe(now + MAX_DELAY_MS);
    expect(checked.quota?.policies[0]?.resetAt).toBe(now + 61_001);
    // A request counts in flight for the longest of flightTtlMs (60 s) and its attempts (31 s),
    // rounded up to its grain (a second or a thirty-second of it), at most.
    expect(checked.flights?.list[0]?.[0]).toBe(now + 60_000 + 1875 + 1000);
    expect(checked.bucket).toEqual({ tokens: 10, at: now });
    expect(checked.pace?.at).toBe(now);
    expect(checked.budget?.slot).toBe(Math.floor(now / 1000));
    expect(checked.quota?.applied).toBe(state.seq);
  });

  it('returns a copy, and leaves out the state of a rule the host does not run', () => {
    const { host, now } = busyHost();
    const state = json(host.state) as HostState;
    const learnOnly = bindRules({ learn: config.learn, bucket: undefined, budget: undefined });
    const checked = checkHostState(state, learnOnly, now);
    expect(checked).not.toBe(state);
    expect(checked.hold).not.toBe(state.hold);
    expect(checked.bucket).toBeUndefined();
    expect(checked.budget).toBeUndefined();
    expect(checked.quota).toEqual(state.quota);
  });
});

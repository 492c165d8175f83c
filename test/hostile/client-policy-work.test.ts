/**
 * Issue 24, item 7: an answer declaring thousands of policies (a hostile or broken server) costs
 * the declared quota work in proportion to the policies named, not to their square: they are
 * trimmed to the `MAX_POLICIES` most restrictive first, then applied, each found by its key in a
 * map. Counted, not timed: the reads of the host's list of learned policies while one answer with
 * 1,000 or 4,000 policies is taken in (one pass per policy over a growing list made it quadratic:
 * 174 ms, 578 ms and 2.4 s per call for 10k, 20k and 40k).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_POLICIES, mostRestrictiveOf } from '../../src/client/rules/quota.js';
import { sortByRestrictiveness } from '../../src/headers/policy.js';
import type { QuotaPolicy } from '../../src/headers/types.js';
import { Host, ietf, open } from '../client/rules/harness.js';

/** IETF fields naming `n` policies, `p0` the most restrictive (the least left). */
function manyPolicies(n: number) {
  const names = Array.from({ length: n }, (_, i) => `"p${i}"`);
  return {
    'ratelimit-policy': names.map((name) => `${name};q=100000;w=60`).join(', '),
    ratelimit: names.map((name, i) => `${name};r=${i + 1};t=60`).join(', '),
  };
}

/** Reads of the list's elements through `list`, counted in `reads.count`. */
function counted(list: unknown[], reads: { count: number }): unknown[] {
  return new Proxy(list, {
    get(target, key, receiver) {
      if (typeof key === 'string' && /^\d+$/.test(key)) reads.count++;
      return Reflect.get(target, key, receiver);
    },
  });
}

describe(`an answer naming thousands of policies (kept: ${MAX_POLICIES})`, () => {
  for (const n of [1000, 4000]) {
    it(`${n} policies: the learned list is read a bounded number of times, not once per policy`, () => {
      const h = new Host(open);
      h.answer(h.send(0), 200, ietf(5, 1), 0);
      const quota = h.state.quota as { policies: unknown[] };
      const reads = { count: 0 };
      quota.policies = counted(quota.policies, reads);
      h.answer(h.send(1), 200, manyPolicies(n), 1);
      expect(reads.count).toBeLessThanOrEqual(4 * MAX_POLICIES);
      const kept = h.state.quota?.policies.map((p) => p.key);
      expect(kept).toHaveLength(MAX_POLICIES);
      expect(new Set(kept)).toEqual(
        new Set(Array.from({ length: MAX_POLICIES }, (_, i) => `p${i}`)),
      );
    });
  }
});

describe('mostRestrictiveOf', () => {
  const policy = fc.record(
    {
      limit: fc.integer({ min: 0, max: 20 }),
      remaining: fc.integer({ min: 0, max: 20 }),
      resetMs: fc.integer({ min: 0, max: 5 }),
    },
    { requiredKeys: [] },
  );

  it('keeps exactly what a full sort would keep, in the same order', () => {
    fc.assert(
      fc.property(fc.array(policy, { maxLength: 60 }), fc.integer({ min: 1, max: 10 }), (ps, k) => {
        const list = ps as QuotaPolicy[];
        expect(mostRestrictiveOf(list, k)).toEqual(sortByRestrictiveness(list).slice(0, k));
      }),
    );
  });
});

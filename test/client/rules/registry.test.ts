/**
 * The registry is the one list of rules: the drawing in docs/how-it-works.md lists its rules in
 * its order, docs/events.md lists every wait reason they declare, and what the loop derives from it
 * (the bound rules, the `held` bits, the server's waits) follows a change of the list.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { bindRules, MAX_REASONS } from '../../../src/client/rules/host-rules.js';
import { RULES } from '../../../src/client/rules/registry.js';

const read = (path: string) => readFileSync(new URL(`../../../${path}`, import.meta.url), 'utf8');

const everyRuleOn = {
  learn: { flightTtlMs: 1, jitter: { ratio: 0, maxMs: 0 }, fallbackHoldMs: 1, initialWindow: 1 },
  bucket: { rate: 1, burst: 1 },
  budget: { ratio: 0.1, minPerSecond: 1, windowMs: 1000 },
};

/** The numbered rule lines of the drawing: `│   1. requests in flight   flights   what ...`. */
function drawnRules(): { n: number; title: string; key: string }[] {
  const section = read('docs/how-it-works.md').split('## How a request flows')[1] ?? '';
  const drawing = section.split('```')[1] ?? '';
  return [...drawing.matchAll(/^\s*│\s+(\d+)\. (.+?) {2,}(\S+) {2,}/gm)].map((m) => ({
    n: Number(m[1]),
    title: m[2] as string,
    key: m[3] as string,
  }));
}

describe('the rule registry', () => {
  it('is the order docs/how-it-works.md draws, title and key', () => {
    const drawn = drawnRules();
    expect(drawn.length).toBeGreaterThan(0);
    expect(drawn).toEqual(RULES.map((r, i) => ({ n: i + 1, title: r.title, key: r.key })));
  });

  it('declares every held reason docs/events.md lists, and no other', () => {
    const row = read('docs/events.md')
      .split('\n')
      .find((line) => line.startsWith('| `held` |'));
    const documented = [...(row?.split('`reason`:')[1]?.split(';')[0] ?? '').matchAll(/`([^`]+)`/g)]
      .map((m) => m[1])
      .sort();
    const declared = [...new Set(RULES.flatMap((r) => r.reasons.map((x) => x.reason)))].sort();
    expect(documented).toEqual(declared);
  });

  it('derives the loop, the held bits and the server waits from the list', () => {
    const all = bindRules(everyRuleOn);
    expect(all.all.map((b) => b.key)).toEqual(RULES.map((r) => r.key));
    expect(all.retry.map((b) => b.key)).toEqual(['budget']);
    expect(all.delaying.map((b) => b.key)).toEqual(['hold', 'pace']);
    expect([...all.serverWaits].sort()).toEqual(['learned-limit', 'refusing', 'retry-after']);
    const bits = [...all.heldBits.values()];
    expect(new Set(bits).size).toBe(bits.length);
    expect(bits.every((b) => b > 0 && (b & (b - 1)) === 0)).toBe(true);
    // A rule whose configuration is undefined is off, and its reasons with it.
    const noBucket = bindRules({ ...everyRuleOn, bucket: undefined });
    expect(noBucket.all.map((b) => b.key)).not.toContain('bucket');
    expect(noBucket.heldBits.has('client-rate')).toBe(false);
    // Another list, another loop: reversed, the rules run reversed.
    expect(bindRules(everyRuleOn, [...RULES].reverse()).all.map((b) => b.key)).toEqual(
      RULES.map((r) => r.key).reverse(),
    );
  });

  it(`refuses more than ${MAX_REASONS} wait reasons, and takes exactly that many`, () => {
    const withReasons = (n: number) => ({
      ...(RULES[0] as (typeof RULES)[number]),
      key: 'many',
      reasons: Array.from({ length: n }, (_, i) => ({ reason: `r${i}`, serverTimed: false })),
      configure: () => ({}),
    });
    expect(
      bindRules({ ...everyRuleOn, learn: undefined, bucket: undefined, budget: undefined }, [
        withReasons(MAX_REASONS),
      ]).heldBits.size,
    ).toBe(MAX_REASONS);
    expect(() =>
      bindRules({ ...everyRuleOn, learn: undefined }, [withReasons(MAX_REASONS + 1)]),
    ).toThrow(/more than 31 wait reasons/);
  });
});

/**
 * Header names and policy names come from the server: none of them may become a key of a plain
 * object, where `__proto__` would reach Object.prototype and `constructor` would read an inherited
 * function. The parser keeps them in Maps; these tests hold it to that.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { parseRateLimitHeaders, type RateLimitInfo } from '../../src/index.js';

const NOW = Date.UTC(2026, 10, 30, 12, 0, 0);
const HOSTILE = ['__proto__', 'constructor', 'prototype', 'hasOwnProperty', 'toString'];
const POLICY_FIELDS = ['name', 'limit', 'remaining', 'resetMs', 'windowMs', 'unit', 'scope'];

function expectPrototypeUntouched(): void {
  for (const field of POLICY_FIELDS) {
    expect(Object.hasOwn(Object.prototype, field), `Object.prototype.${field}`).toBe(false);
  }
  expect(Object.getPrototypeOf({})).toBe(Object.prototype);
}

function namesOf(info: RateLimitInfo | undefined): (string | undefined)[] {
  return (info?.policies ?? []).map((p) => p.name);
}

afterEach(expectPrototypeUntouched);

describe('hostile names never become object keys', () => {
  it('IETF policy names', () => {
    const info = parseRateLimitHeaders(
      {
        'RateLimit-Policy': HOSTILE.map((n, i) => `"${n}";q=${10 + i};w=60`).join(', '),
        RateLimit: HOSTILE.map((n, i) => `"${n}";r=${i};t=5`).join(', '),
      },
      { now: NOW },
    );
    expect(namesOf(info).sort()).toEqual([...HOSTILE].sort());
    const proto = info?.policies.find((p) => p.name === '__proto__');
    expect(proto).toEqual({
      name: '__proto__',
      limit: 10,
      remaining: 0,
      resetMs: 5000,
      windowMs: 60_000,
    });
    expect(Object.getPrototypeOf(proto)).toBe(Object.prototype);
  });

  it('OpenAI-style suffixes, Anthropic dimensions and Azure counters (lower-cased field names)', () => {
    for (const name of HOSTILE.map((n) => n.toLowerCase())) {
      expect(
        namesOf(parseRateLimitHeaders({ [`x-ratelimit-remaining-${name}`]: '3' }, { now: NOW })),
      ).toEqual([name]);
      expect(
        namesOf(
          parseRateLimitHeaders({ [`anthropic-ratelimit-${name}-limit`]: '4' }, { now: NOW }),
        ),
      ).toEqual([name]);
      expect(
        namesOf(parseRateLimitHeaders({ [`x-ms-ratelimit-remaining-${name}`]: '5' }, { now: NOW })),
      ).toEqual([name]);
    }
  });

  it('GitHub resources, Discord buckets and Salesforce members', () => {
    for (const name of HOSTILE) {
      const github = parseRateLimitHeaders(
        { 'x-ratelimit-resource': name, 'x-ratelimit-remaining': '1' },
        { now: NOW },
      );
      expect(github).toMatchObject({ source: 'github', policy: name, remaining: 1 });
      const discord = parseRateLimitHeaders(
        { 'x-ratelimit-bucket': name, 'x-ratelimit-remaining': '2' },
        { now: NOW },
      );
      expect(discord).toMatchObject({ source: 'discord', policy: name, remaining: 2 });
    }
    // Salesforce member names start with a letter: `__proto__` is not one and is skipped.
    const salesforce = parseRateLimitHeaders(
      { 'Sforce-Limit-Info': '__proto__=1/10; constructor=2/10; hasOwnProperty=3/10' },
      { now: NOW },
    );
    expect(namesOf(salesforce)).toEqual(['hasOwnProperty', 'constructor']);
  });

  it('header names that are Object.prototype members, in every kind of input', () => {
    const fromJson: unknown = JSON.parse(
      '{"__proto__": "7", "constructor": "8", "toString": "9", "x-ratelimit-remaining": "3"}',
    );
    const nullProto = Object.assign(Object.create(null) as Record<string, string>, {
      __proto__: '7',
      constructor: '8',
      'X-RateLimit-Remaining': '3',
    });
    const headers = new Headers();
    for (const name of HOSTILE) headers.append(name, '7');
    headers.append('x-ratelimit-remaining', '3');
    for (const input of [fromJson, nullProto, headers]) {
      expect(parseRateLimitHeaders(input as never, { now: NOW })).toEqual({
        source: 'x-ratelimit',
        remaining: 3,
        policies: [{ remaining: 3 }],
      });
    }
    // A computed `__proto__` key is an own property whose value is an object: ignored, not merged.
    const computed = { ['__proto__']: { 'x-ratelimit-remaining': '5' }, 'retry-after': '1' };
    expect(parseRateLimitHeaders(computed as never, { now: NOW })).toEqual({
      source: 'retry-after',
      retryAfterMs: 1000,
      policies: [],
    });
  });
});

/**
 * `readFields`: which fields a response's headers yield to the parsers. No map for a response
 * without a rate-limit field (`Date` alone says nothing about limits); names in any case, from a
 * `Headers` or a plain object; `Date` kept with the fields it dates.
 */
import { describe, expect, it } from 'vitest';
import { RELEVANT, RELEVANT_INITIALS, readFields } from '../../src/headers/field-map.js';

describe('readFields', () => {
  it('gives no map for a response whose only relevant field is Date', () => {
    const date = 'Tue, 01 Dec 2026 23:00:00 GMT';
    expect(readFields(new Headers({ date, 'content-type': 'text/plain', server: 'x' }))).toBe(
      undefined,
    );
    expect(readFields({ Date: date, 'Content-Length': 2, Age: '3' })).toBe(undefined);
    expect(readFields(new Headers())).toBe(undefined);
  });

  it('keeps Date with the rate-limit fields, names lower-cased, whatever their first letter case', () => {
    const date = 'Tue, 01 Dec 2026 23:00:00 GMT';
    const fields = readFields({
      DATE: date,
      'X-RateLimit-Remaining': '4',
      'Retry-After': 7,
      'Anthropic-RateLimit-Requests-Limit': ['50'],
      'Sforce-Limit-Info': 'api-usage=1/100',
      'Content-Type': 'application/json',
      'Rate-Limited': 'no',
    });
    expect(fields && Object.fromEntries(fields)).toEqual({
      'x-ratelimit-remaining': '4',
      'retry-after': '7',
      'anthropic-ratelimit-requests-limit': '50',
      'sforce-limit-info': 'api-usage=1/100',
      date,
    });
  });

  it('joins a repeated field as Headers.get does, from a Headers too', () => {
    const headers = new Headers();
    headers.append('RateLimit', '"a";r=1');
    headers.append('ratelimit', '"b";r=2');
    expect(readFields(headers)?.get('ratelimit')).toBe('"a";r=1, "b";r=2');
  });
});

describe('RELEVANT_INITIALS', () => {
  it('holds the first letter of every name the parsers read (a raw reader skips the others)', () => {
    // The alternatives of the pattern, each a prefix or a whole name: their first letters.
    const inner = RELEVANT.source.replace(/^\^\(\?:/, '').replace(/\)$/, '');
    const firsts = inner.split('|').map((alternative) => alternative.charAt(0).toLowerCase());
    expect(firsts.length).toBeGreaterThan(5);
    for (const first of firsts) expect(RELEVANT_INITIALS).toContain(first);
    expect(RELEVANT.flags).toContain('i');
  });
});

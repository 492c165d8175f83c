/**
 * undici's raw header list read as the pipeline and the hooks read it (`src/undici/raw-headers.ts`):
 * the rate-limit parser sees the same fields as from undici's header object, names skipped at
 * their first byte are never decoded, and the whole object or `Headers` made from the list is the
 * one undici would make.
 */
import { describe, expect, it } from 'vitest';
import { parseRateLimitHeaders } from '../../src/headers/index.js';
import { AttemptHeaders } from '../../src/undici/attempt-response.js';
import { appendRaw, headersOf, RawFields } from '../../src/undici/raw-headers.js';

const b = (s: string) => Buffer.from(s, 'latin1');

/** A raw list as undici 7's parser gives it: names in the server's case, bytes. */
const RAW = [
  b('Content-Type'),
  b('text/plain'),
  b('RateLimit-Policy'),
  b('"min";q=10;w=60'),
  b('RateLimit'),
  b('"min";r=4;t=30'),
  b('Date'),
  b('Tue, 01 Dec 2026 23:00:00 GMT'),
  b('Set-Cookie'),
  b('a=1'),
  b('set-cookie'),
  b('b=2'),
  b('X-Note'),
  b('caf\xe9'),
];

describe('RawFields', () => {
  it('yields only the fields whose name may be relevant, decoded as Latin-1', () => {
    const seen: [string, string][] = [];
    new RawFields(RAW).forEach((value, name) => {
      seen.push([name, value]);
    });
    // Content-Type is skipped at its first byte; Set-Cookie and X-Note are candidates (the
    // parser's own pattern then drops them).
    expect(seen).toEqual([
      ['RateLimit-Policy', '"min";q=10;w=60'],
      ['RateLimit', '"min";r=4;t=30'],
      ['Date', 'Tue, 01 Dec 2026 23:00:00 GMT'],
      ['Set-Cookie', 'a=1'],
      ['set-cookie', 'b=2'],
      ['X-Note', 'caf\xe9'],
    ]);
    expect(new RawFields(RAW).get('ratelimit')).toBe('"min";r=4;t=30');
    expect(new RawFields(RAW).get('content-type')).toBe(null);
  });

  it('gives the parser what undici’s header object gives it', () => {
    const now = Date.parse('Tue, 01 Dec 2026 23:00:00 GMT');
    const fromRaw = parseRateLimitHeaders(new AttemptHeaders(RAW).asHeaders(), { now });
    const fromObject = parseRateLimitHeaders(new AttemptHeaders(headersOf(RAW)).asHeaders(), {
      now,
    });
    expect(fromRaw).toBeDefined();
    expect(fromRaw?.remaining).toBe(4);
    expect(fromRaw).toEqual(fromObject);
  });
});

describe('headersOf and appendRaw', () => {
  it('make undici’s object: lower-case names, a repeated field as an array, no prototype', () => {
    const headers = headersOf([...RAW, b('__proto__'), b('x')]);
    expect(Object.getPrototypeOf(headers)).toBe(null);
    expect(Object.entries(headers)).toEqual([
      ['content-type', 'text/plain'],
      ['ratelimit-policy', '"min";q=10;w=60'],
      ['ratelimit', '"min";r=4;t=30'],
      ['date', 'Tue, 01 Dec 2026 23:00:00 GMT'],
      ['set-cookie', ['a=1', 'b=2']],
      ['x-note', 'caf\xe9'],
      ['__proto__', 'x'],
    ]);
  });

  it('fill a Headers with every field, leaving out one it refuses', () => {
    const real = new Headers();
    appendRaw(real, [...RAW, b('Bad Name'), b('v'), 'X-Str', 'ok', b('X-Many'), [b('1'), b('2')]]);
    expect(real.get('ratelimit')).toBe('"min";r=4;t=30');
    expect(real.getSetCookie()).toEqual(['a=1', 'b=2']);
    expect(real.get('x-str')).toBe('ok');
    expect(real.get('x-many')).toBe('1, 2');
    expect([...real.keys()]).not.toContain('bad name');
    // The AttemptHeaders made from the list reads the same.
    expect(new AttemptHeaders(RAW).asHeaders().get('set-cookie')).toBe('a=1, b=2');
  });
});

/**
 * Request targets reduced to a path: every form, and the normalisation that keeps one resource one
 * path.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { normalizePath, parseTarget } from '../../../src/server/http/target.js';

describe('parseTarget', () => {
  it.each([
    ['/items/1', { form: 'path', path: '/items/1', query: '' }],
    ['/items/1?a=1&b', { form: 'path', path: '/items/1', query: 'a=1&b' }],
    ['/items/1#frag', { form: 'path', path: '/items/1', query: '' }],
    ['http://h/items/1', { form: 'path', path: '/items/1', query: '' }],
    ['HTTPS://user@h.example:8443/items/1?x', { form: 'path', path: '/items/1', query: 'x' }],
    ['http://h', { form: 'path', path: '/', query: '' }],
    ['http://h?x=1', { form: 'path', path: '/', query: 'x=1' }],
    ['*', { form: 'asterisk' }],
    ['h.example:443', { form: 'invalid' }],
    ['ftp://h/items/1', { form: 'invalid' }],
    ['http:///items/1', { form: 'invalid' }],
    ['items/1', { form: 'invalid' }],
    ['', { form: 'invalid' }],
  ])('%s', (target, expected) => {
    expect(parseTarget(target)).toEqual(expected);
  });
});

describe('normalizePath', () => {
  it.each([
    ['/%69tems/%31', '/items/1'],
    ['/a%2Fb', '/a%2Fb'],
    ['/a%20b', '/a%20b'],
    ['/%7E%5F%2D%2E', '/~_-.'],
    ['/a/./b', '/a/b'],
    ['/a/b/../c', '/a/c'],
    ['/a/b/..', '/a/'],
    ['/..', '/'],
    ['/../../a', '/a'],
    ['/%2E%2E/a', '/a'],
    ['/.well-known/x', '/.well-known/x'],
  ])('%s -> %s', (path, expected) => {
    expect(normalizePath(path)).toBe(expected);
  });

  it('is idempotent, and leaves no dot segment behind', () => {
    const segment = fc.oneof(
      fc.constantFrom('.', '..', '%2e', '%2E%2e', 'a', '%61', '%2F', ''),
      fc.string({ maxLength: 4 }).filter((s) => !s.includes('/')),
    );
    fc.assert(
      fc.property(fc.array(segment, { maxLength: 8 }), (segments) => {
        const once = normalizePath(`/${segments.join('/')}`);
        expect(normalizePath(once)).toBe(once);
        expect(once.startsWith('/')).toBe(true);
        expect(once.split('/').some((s) => s === '.' || s === '..')).toBe(false);
      }),
    );
  });
});

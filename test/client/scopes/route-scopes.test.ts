import { describe, expect, it } from 'vitest';
import { scopeOfAnswer } from '../../../src/client/scopes/answer-scope.js';
import { foldedSegments, majorOf, pathOf } from '../../../src/client/scopes/route-key.js';
import {
  MAX_ROUTES,
  MAX_SCOPE_NAMES,
  RouteScopes,
} from '../../../src/client/scopes/route-scopes.js';
import { parseRateLimitHeaders } from '../../../src/headers/index.js';

const API = 'https://api.example.com';
const core = { name: 'github:core', perMajor: false };
const search = { name: 'github:search', perMajor: false };

describe('routes', () => {
  it('fold identifiers and keep names', () => {
    expect(foldedSegments('/repos/nodejs/node/issues/123')).toEqual([
      'repos',
      'nodejs',
      'node',
      'issues',
      ':id',
    ]);
    expect(foldedSegments('/x/6f1c2a4e-8b3d-4c2a-9e1f-0a1b2c3d4e5f/deadbeefdeadbeef0')).toEqual([
      'x',
      ':id',
      ':id',
    ]);
    expect(foldedSegments('/v1/chat/completions')).toEqual(['v1', 'chat', 'completions']);
    expect(pathOf(`${API}/a/b?q=1#f`)).toBe('/a/b');
    expect(pathOf(API)).toBe('/');
  });

  it('read the major parameter, never a webhook token', () => {
    expect(majorOf('/api/v10/channels/123456789012345678/messages')).toBe(
      'channels/123456789012345678',
    );
    expect(majorOf('/guilds/81384788765712384/members')).toBe('guilds/81384788765712384');
    expect(majorOf('/webhooks/223704706495545344/s3cr3t-t0ken')).toBe(
      'webhooks/223704706495545344',
    );
    expect(majorOf('/users/@me')).toBe('');
  });
});

describe('the scope an answer names', () => {
  const parse = (h: Record<string, string>) => {
    const info = parseRateLimitHeaders(new Headers(h), { now: 0 });
    if (!info) throw new Error('no info');
    return info;
  };

  it('GitHub resource, Discord bucket per major, IETF pk; nothing for names alone', () => {
    expect(
      scopeOfAnswer(
        parse({
          'x-ratelimit-resource': 'search',
          'x-ratelimit-limit': '30',
          'x-ratelimit-remaining': '3',
          'x-ratelimit-reset': '100',
        }),
      ),
    ).toEqual(search);
    expect(
      scopeOfAnswer(
        parse({
          'x-ratelimit-bucket': 'abcd1234',
          'x-ratelimit-limit': '5',
          'x-ratelimit-remaining': '4',
          'x-ratelimit-reset-after': '5',
        }),
      ),
    ).toEqual({ name: 'discord:abcd1234', perMajor: true });
    expect(
      scopeOfAnswer(
        parse({
          'ratelimit-policy': '"day";q=1000;w=86400;pk=:dXNlcjE=:',
          ratelimit: '"day";r=10;t=5;pk=:dXNlcjE=:',
        }),
      ),
    ).toEqual({ name: 'pk:dXNlcjE=', perMajor: false });
    expect(
      scopeOfAnswer(parse({ 'ratelimit-policy': '"burst";q=10;w=1, "day";q=1000;w=86400' })),
    ).toBeUndefined();
    expect(
      scopeOfAnswer(
        parse({
          'x-ratelimit-limit-requests': '60',
          'x-ratelimit-remaining-requests': '59',
          'x-ratelimit-reset-requests': '1s',
        }),
      ),
    ).toBeUndefined();
  });

  it('refuses a name with control characters or longer than 128', () => {
    const long = 'x'.repeat(129);
    expect(
      scopeOfAnswer(
        parse({
          'x-ratelimit-resource': long,
          'x-ratelimit-limit': '1',
          'x-ratelimit-remaining': '1',
        }),
      ),
    ).toBeUndefined();
  });
});

describe('RouteScopes', () => {
  it('remembers a route, and gives a new route its nearest known prefix', () => {
    const r = new RouteScopes();
    r.learn('GET', `${API}/search/issues?q=1`, search);
    r.learn('GET', `${API}/repos/a/b/issues/7`, core);
    expect(r.scopeOf('GET', `${API}/search/issues?q=2`)).toBe('github:search');
    expect(r.scopeOf('GET', `${API}/search/code`)).toBe('github:search');
    expect(r.scopeOf('POST', `${API}/repos/a/b/issues`)).toBe('github:core');
    expect(r.scopeOf('GET', `${API}/repos/a/b/issues/8`)).toBe('github:core');
    expect(r.scopeOf('GET', `${API}/users/x`)).toBeUndefined();
    expect(r.scopeOf('GET', `${API}/`)).toBeUndefined();
  });

  it('splits a per-major scope by the call path', () => {
    const r = new RouteScopes();
    r.learn('POST', `${API}/channels/111111111111111111/messages`, {
      name: 'discord:b1',
      perMajor: true,
    });
    expect(r.scopeOf('POST', `${API}/channels/222222222222222222/messages`)).toBe(
      'discord:b1@channels/222222222222222222',
    );
  });

  it(`keeps at most ${MAX_ROUTES} routes and prefixes`, () => {
    const r = new RouteScopes();
    for (let i = 0; i < MAX_ROUTES * 2; i++) r.learn('GET', `${API}/r${i}/x`, core);
    expect(r.size).toBe(MAX_ROUTES);
    // The newest are kept.
    expect(r.scopeOf('GET', `${API}/r${MAX_ROUTES * 2 - 1}/x`)).toBe('github:core');
    expect(r.scopeOf('GET', `${API}/r0/x`)).toBeUndefined();
  });

  it(`turns scopes off for a host naming more than ${MAX_SCOPE_NAMES} of them`, () => {
    const r = new RouteScopes();
    for (let i = 0; i < MAX_SCOPE_NAMES; i++) {
      r.learn('GET', `${API}/a`, { name: `s${i}`, perMajor: false });
    }
    expect(r.off).toBe(false);
    expect(r.scopeOf('GET', `${API}/a`)).toBe(`s${MAX_SCOPE_NAMES - 1}`);
    r.learn('GET', `${API}/a`, { name: 'one-more', perMajor: false });
    expect(r.off).toBe(true);
    expect(r.names).toBe(MAX_SCOPE_NAMES);
    expect(r.scopeOf('GET', `${API}/a`)).toBeUndefined();
    expect(r.size).toBe(0);
  });
});

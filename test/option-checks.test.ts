/**
 * One format for every bad option, client and server alike: `invalid option <path>: <what is
 * allowed>, got <what was given>`, with values shown by kind, never whole.
 */
import { describe, expect, it } from 'vitest';
import { ResolvedOptions } from '../src/client/options/resolve.js';
import { FixedWindow } from '../src/server/algorithms/fixed-window.js';
import { createMockServer } from '../src/server/http/server.js';
import { isInvalidOptionError } from '../src/shared/errors.js';
import { describeValue, optionPath } from '../src/shared/option-checks.js';

function messageOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    if (isInvalidOptionError(error)) return error.message;
    throw error;
  }
  throw new Error('no error');
}

describe('option errors', () => {
  it('formats paths as users write them', () => {
    expect(optionPath(['retry', 'retries'])).toBe('retry.retries');
    expect(optionPath(['hosts', 'api.example.com', 'rate'])).toBe('hosts["api.example.com"].rate');
    expect(optionPath(['routes', 0, 'limits', 1, 'windowMs'])).toBe('routes[0].limits[1].windowMs');
    expect(optionPath(['retries'], 'init.retry')).toBe('init.retry.retries');
    expect(optionPath([])).toBe('options');
  });

  it('shows values by kind, never a whole object or a long string', () => {
    expect(describeValue(undefined)).toBe('nothing');
    expect(describeValue(null)).toBe('null');
    expect(describeValue(-1)).toBe('-1');
    expect(describeValue(Number.NaN)).toBe('NaN');
    expect(describeValue(false)).toBe('false');
    expect(describeValue('a\r\nb')).toBe(String.raw`"a\r\nb"`);
    expect(describeValue('x'.repeat(41))).toBe(`"${'x'.repeat(40)}"… (41 characters)`);
    expect(describeValue({ authorization: 'Bearer secret' })).toBe('an object');
    expect(describeValue(['a'])).toBe('an array');
    expect(describeValue(() => 1)).toBe('a function');
    expect(describeValue(Symbol('s'))).toBe('a symbol');
  });

  it('reads the same from the client, an algorithm and the mock server', async () => {
    expect(messageOf(() => new ResolvedOptions({ maxHosts: 0 }))).toBe(
      'invalid option maxHosts: must be an integer from 1 to 10000000, got 0',
    );
    expect(messageOf(() => new FixedWindow({ limit: 0, windowMs: 1000 }))).toBe(
      'invalid option limit: must be a positive integer, got 0',
    );
    await expect(createMockServer({ routes: [{ path: '/', cost: 0 }] })).rejects.toThrow(
      'invalid option routes[0].cost: must be a positive integer, got 0',
    );
    // Unknown keys, and the clock check, are worded once for both.
    expect(messageOf(() => new ResolvedOptions({ retry: { retires: 1 } }))).toBe(
      'invalid option retry.retires: is not a known option (check its spelling)',
    );
    expect(messageOf(() => new FixedWindow({ limit: 1, windowMs: 1000, lmit: 2 } as never))).toBe(
      'invalid option lmit: is not a known option (check its spelling)',
    );
    const clock = { now: () => 0 };
    expect(messageOf(() => new ResolvedOptions({ clock }))).toBe(
      'invalid option clock: must be a Clock (an object with now(), sleep() and random()), got an object',
    );
    expect(messageOf(() => new FixedWindow({ limit: 1, windowMs: 1, clock } as never))).toBe(
      'invalid option clock: must be a Clock (an object with now(), sleep() and random()), got an object',
    );
  });

  it('checks and keeps a `__proto__` hosts entry like any other (zod would drop it unchecked)', () => {
    const bad = JSON.parse('{"hosts": {"__proto__": {"rate": -1}}}');
    expect(messageOf(() => new ResolvedOptions(bad))).toBe(
      'invalid option hosts["__proto__"].rate: must be a number above 0 and up to 1000000000, got -1',
    );
    const good = new ResolvedOptions(JSON.parse('{"hosts": {"__proto__": {"concurrency": 2}}}'));
    expect(good.forHost('__proto__', '__proto__').concurrency).toBe(2);
    expect(good.forHost('other', 'other').concurrency).toBe(Number.POSITIVE_INFINITY);
  });

  it('passes functions, the store, the clock and headers through by identity', () => {
    const fetch = (async () => new Response()) as typeof globalThis.fetch;
    const partition = () => undefined;
    const headers = new Headers({ a: 'b' });
    const store = { update: () => [undefined, undefined], delete: () => {} } as never;
    const clock = { now: () => 0, sleep: async () => {}, random: () => 0.5 };
    const o = new ResolvedOptions({ fetch, partition, headers, store, clock });
    expect(o.fetch).toBe(fetch);
    expect(o.partition).toBe(partition);
    expect(o.headers).toBe(headers);
    expect(o.store).toBe(store);
    expect(o.clock).toBe(clock);
  });
});

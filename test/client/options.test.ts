import { describe, expect, it } from 'vitest';
import { ResolvedOptions } from '../../src/client/options/resolve.js';
import { DEFAULTS } from '../../src/client/options/schema.js';
import { type InvalidOptionError, isInvalidOptionError } from '../../src/shared/errors.js';

function problem(options: unknown): InvalidOptionError {
  try {
    new ResolvedOptions(options);
  } catch (error) {
    if (isInvalidOptionError(error)) return error;
    throw error;
  }
  throw new Error('no error');
}

describe('options', () => {
  it('resolves the defaults from the one DEFAULTS constant', () => {
    const p = new ResolvedOptions(undefined).forHost('api.example.com', 'api.example.com');
    expect(p.concurrency).toBe(DEFAULTS.concurrency);
    expect(p.maxRetryAfterMs).toBe(60_000);
    expect(p.retry).toEqual({
      retries: 3,
      baseDelayMs: 100,
      maxDelayMs: 10_000,
      shouldRetry: undefined,
    });
    expect(p.rules.budget).toEqual({ ratio: 0.1, minPerSecond: 1, windowMs: 10_000 });
    expect(p.rules.learn?.initialWindow).toBe(1);
    expect(p.rules.bucket).toBeUndefined();
    expect(p.idempotency?.header).toBe('Idempotency-Key');
    expect([...(p.idempotency?.methods ?? [])]).toEqual(['POST', 'PATCH']);
    expect(p.breaker?.coolDownMs).toBe(1000);
    expect(p.breaker?.maxCoolDownMs).toBe(30_000);
  });

  it('takes the default for a field written as undefined, as for an absent one', () => {
    const p = new ResolvedOptions({
      circuitBreaker: { coolDownMs: undefined, maxCoolDownMs: undefined },
      retryBudget: { ratio: undefined },
      idempotency: { header: undefined },
      waitJitter: { maxMs: undefined },
    }).forHost('api.example.com', 'api.example.com');
    expect(p.breaker).toMatchObject({ coolDownMs: 1000, maxCoolDownMs: 30_000 });
    expect(p.rules.budget?.ratio).toBe(0.1);
    expect(p.idempotency?.header).toBe('Idempotency-Key');
    expect(p.rules.learn?.jitter).toEqual({ ratio: 0.05, maxMs: 1000 });
  });

  it('bodyLimits: a boolean, global or per host; unset by default (by URL and body)', () => {
    const o = new ResolvedOptions({ hosts: { 'shop.example': { bodyLimits: false } } });
    expect(o.forHost('api.example.com', 'api.example.com').bodyLimits).toBeUndefined();
    expect(o.forHost('shop.example', 'shop.example').bodyLimits).toBe(false);
    const on = new ResolvedOptions({ bodyLimits: true });
    expect(on.forHost('api.example.com', 'api.example.com').bodyLimits).toBe(true);
    expect(problem({ bodyLimits: 'yes' }).message).toBe(
      'invalid option bodyLimits: must be true or false, got "yes"',
    );
    expect(problem({ hosts: { 'a.example': { bodyLimits: 1 } } }).option).toContain('bodyLimits');
  });

  it('names the option, the value and the allowed range', () => {
    const e = problem({ rate: -1 });
    expect(e.option).toBe('rate');
    expect(e.message).toBe(
      'invalid option rate: must be a number above 0 and up to 1000000000, got -1',
    );
    expect(problem({ retry: { retries: 1.5 } }).message).toBe(
      'invalid option retry.retries: must be an integer from 0 to 100, got 1.5',
    );
    expect(problem({ concurrency: 0 }).message).toContain(
      'an integer from 1 up, or Infinity, got 0',
    );
    expect(problem({ circuitBreaker: { failureRatio: 2 } }).option).toBe(
      'circuitBreaker.failureRatio',
    );
  });

  it('names an option inside a host entry with the host quoted', () => {
    const e = problem({ hosts: { 'api.example.com': { rate: 0 } } });
    expect(e.option).toBe('hosts["api.example.com"].rate');
    expect(e.message).toContain(', got 0');
  });

  it('refuses unknown options (a typo must not be silently ignored)', () => {
    const e = problem({ retry: { retires: 3 } });
    expect(e.option).toBe('retry.retires');
    expect(e.message).toContain('is not a known option');
  });

  it('refuses bad host patterns and impossible costs', () => {
    expect(problem({ hosts: { 'https://x.com': {} } }).option).toBe('hosts["https://x.com"]');
    expect(problem({ rate: 2, burst: 2, cost: 5 }).option).toBe('options.cost');
    expect(problem({ hosts: { 'a.com': { rate: 1 } }, cost: 3 }).option).toBe(
      'hosts["a.com"].cost',
    );
  });

  it('accepts Infinity where a bound may be off, and false to turn a policy off', () => {
    const p = new ResolvedOptions({
      concurrency: Number.POSITIVE_INFINITY,
      retry: false,
      retryBudget: false,
      circuitBreaker: false,
      idempotency: false,
      coldStart: false,
      learnLimits: true,
    }).forHost('a.com', 'a.com');
    expect(p.retry.retries).toBe(0);
    expect(p.rules.budget).toBeUndefined();
    expect(p.breaker).toBeUndefined();
    expect(p.idempotency).toBeUndefined();
    expect(p.rules.learn?.initialWindow).toBeUndefined();
  });

  it('merges host entries over the global options, most specific last', () => {
    const o = new ResolvedOptions({
      rate: 10,
      retry: { retries: 2 },
      retryBudget: { ratio: 0.2 },
      hosts: {
        '*.example.com': { rate: 5, retryBudget: { minPerSecond: 3 } },
        'api.example.com': { retry: { baseDelayMs: 50 }, circuitBreaker: false },
        'api.example.com:8443': { concurrency: 2 },
      },
    });
    const p = o.forHost('api.example.com', 'api.example.com:8443');
    expect(p.rules.bucket).toEqual({ rate: 5, burst: 5 });
    expect(p.retry).toMatchObject({ retries: 2, baseDelayMs: 50 });
    expect(p.rules.budget).toEqual({ ratio: 0.2, minPerSecond: 3, windowMs: 10_000 });
    expect(p.breaker).toBeUndefined();
    expect(p.concurrency).toBe(2);
    const other = o.forHost('other.org', 'other.org');
    expect(other.rules.bucket).toEqual({ rate: 10, burst: 10 });
    expect(other.breaker).toBeDefined();
    // Hosts without an entry share one resolved policy.
    expect(o.forHost('x.org', 'x.org')).toBe(other);
  });

  it('checks the injected parts by shape', () => {
    expect(problem({ clock: { now: () => 0 } }).option).toBe('clock');
    expect(problem({ store: {} }).option).toBe('store');
    expect(problem({ fetch: 'nope' }).message).toContain('a fetch function');
  });

  it('refuses at construction headers fetch would refuse on every call', () => {
    const e = problem({ headers: { 'x-a': 'b\r\nInjected: 1' } });
    expect(e.option).toBe('headers');
    expect(e.message).toContain('must be valid header fields');
    expect(problem({ headers: [['bad name', 'x']] }).option).toBe('headers');
    expect(() => new ResolvedOptions({ headers: { authorization: 'Bearer t' } })).not.toThrow();
  });

  it('refuses a burst that no rate would use', () => {
    expect(problem({ burst: 5 }).message).toBe(
      'invalid option burst: has no effect without rate (units per second): set rate as well, got 5',
    );
    expect(problem({ hosts: { 'api.example.com': { burst: 5 } } }).option).toBe(
      'hosts["api.example.com"].burst',
    );
    // A rate that reaches the hosts the burst applies to, from any side, is enough.
    for (const ok of [
      { rate: 2, burst: 5 },
      { burst: 5, hosts: { 'api.example.com': { rate: 2 } } },
      { hosts: { '*.example.com': { rate: 2 }, 'api.example.com': { burst: 5 } } },
      { hosts: { '*.example.com': { burst: 5 }, 'api.example.com': { rate: 2 } } },
      { hosts: { 'api.example.com': { rate: 2 }, 'api.example.com:8443': { burst: 5 } } },
    ]) {
      expect(() => new ResolvedOptions(ok)).not.toThrow();
    }
    expect(
      problem({ hosts: { '*.example.com': { burst: 5 }, 'api.other.org': { rate: 2 } } }).option,
    ).toBe('hosts["*.example.com"].burst');
  });
});

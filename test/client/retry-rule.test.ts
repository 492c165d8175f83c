/**
 * The default retry rule as a table: what a write may be sent again after (only what proves it was
 * not processed, unless the host honours keys), and which hosts are known to honour keys.
 */
import { describe, expect, it } from 'vitest';
import { answerHonoursKey, listedProvider } from '../../src/client/call/key-honour.js';
import { defaultShouldRetry } from '../../src/client/retry/retry-rule.js';
import { isInvalidOptionError, LimitedClient, type RetryContext } from '../../src/index.js';
import { TimeoutError } from '../../src/shared/errors.js';
import { networkError } from './helpers.js';

/** A POST's context: `unprocessed`, `pushback` and the host's keys as each case says. */
function write(over: Partial<RetryContext> & { status?: number }): RetryContext {
  const { status, ...rest } = over;
  const keysHonoured = rest.keysHonoured ?? false;
  const hasIdempotencyKey = rest.hasIdempotencyKey ?? true;
  return {
    method: 'POST',
    url: 'https://api.example.com/pay',
    attempt: 1,
    response: status === undefined ? undefined : new Response(null, { status }),
    pushback: false,
    unprocessed: false,
    idempotent: hasIdempotencyKey && keysHonoured,
    hasIdempotencyKey,
    keysHonoured,
    networkError: false,
    ...rest,
  };
}

const timeout = new TimeoutError(100, 'attempt');

describe('defaultShouldRetry for a write', () => {
  it.each([
    ['a 500', { status: 500 }],
    ['a 502', { status: 502 }],
    ['a 503', { status: 503 }],
    ['a 504', { status: 504 }],
    ['a 408', { status: 408 }],
    ["a load shedder's 503 (pushback guessed by the rules)", { status: 503, pushback: true }],
    ['a 409 (the key in use)', { status: 409 }],
    ['a reset', { error: networkError('ECONNRESET'), networkError: true }],
    ['an attempt timeout', { error: timeout }],
  ])('with a key, to a host that ignores keys: %s is final', (_name, over) => {
    expect(defaultShouldRetry(write(over))).toBe(false);
  });

  it.each([
    ['a 500', { status: 500 }],
    ['a 503', { status: 503 }],
    ['a 504', { status: 504 }],
    ['a 409 (an earlier attempt still running)', { status: 409 }],
    ['a reset', { error: networkError('ECONNRESET'), networkError: true }],
    ['an attempt timeout', { error: timeout }],
  ])('with a key, to a host that honours keys: %s is retried', (_name, over) => {
    expect(defaultShouldRetry(write({ ...over, keysHonoured: true }))).toBe(true);
  });

  it('without a key, a host that honours keys changes nothing: a 503 is final', () => {
    expect(
      defaultShouldRetry(write({ status: 503, keysHonoured: true, hasIdempotencyKey: false })),
    ).toBe(false);
  });

  it.each([
    ['a 429', { status: 429, pushback: true, unprocessed: true }],
    ['a 503 with Retry-After', { status: 503, pushback: true, unprocessed: true }],
    ['a refused connection', { error: networkError('ECONNREFUSED'), unprocessed: true }],
  ])('anything that proves the request unprocessed is retried, key or not: %s', (_n, over) => {
    expect(defaultShouldRetry(write(over))).toBe(true);
    expect(defaultShouldRetry(write({ ...over, hasIdempotencyKey: false }))).toBe(true);
  });

  it('a GET is retried after a 5xx, a reset and a timeout, as before', () => {
    const get = (over: Partial<RetryContext> & { status?: number }) =>
      write({ ...over, method: 'GET', idempotent: true, hasIdempotencyKey: false });
    expect(defaultShouldRetry(get({ status: 503 }))).toBe(true);
    expect(defaultShouldRetry(get({ status: 503, pushback: true }))).toBe(true);
    expect(defaultShouldRetry(get({ error: networkError(), networkError: true }))).toBe(true);
    expect(defaultShouldRetry(get({ error: timeout }))).toBe(true);
    expect(defaultShouldRetry(get({ status: 404 }))).toBe(false);
  });
});

describe('hosts known to honour keys', () => {
  it('lists Stripe, Adyen and GoCardless, by the header named Idempotency-Key only', () => {
    for (const host of ['api.stripe.com', 'checkout-test.adyen.com', 'api.gocardless.com']) {
      expect(listedProvider('Idempotency-Key', host)).toBe(true);
    }
    expect(listedProvider('idempotency-key', 'API.STRIPE.COM')).toBe(true);
    expect(listedProvider('X-Request-Id', 'api.stripe.com')).toBe(false);
    for (const host of ['api.github.com', 'stripe.com', 'adyen.com', 'api.stripe.com.evil.io']) {
      expect(listedProvider('Idempotency-Key', host)).toBe(false);
    }
  });

  it('learns from an answer that replays, or echoes the same key in its header', () => {
    const says = (headers: Record<string, string>) =>
      answerHonoursKey(new Headers(headers), 'Idempotency-Key', 'k1');
    expect(says({ 'idempotent-replayed': 'true' })).toBe(true);
    expect(says({ 'idempotency-key': 'k1' })).toBe(true);
    expect(says({ 'idempotency-key': 'k2' })).toBe(false);
    expect(says({})).toBe(false);
  });

  it('checks the options: honoured and knownProviders are booleans', () => {
    for (const idempotency of [{ honoured: 'yes' }, { knownProviders: 1 }]) {
      let error: unknown;
      try {
        new LimitedClient('https://api.example.com', { idempotency: idempotency as never });
      } catch (e) {
        error = e;
      }
      expect(isInvalidOptionError(error)).toBe(true);
      expect((error as Error).message).toMatch(
        /^invalid option idempotency\.(honoured|knownProviders): must be true or false/,
      );
    }
  });
});

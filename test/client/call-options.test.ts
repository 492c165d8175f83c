/**
 * A call's own options (`cost`, `retry`, `timeoutMs`, `attemptTimeoutMs`, `idempotencyKey`,
 * `partition`, `createBody`) are checked before anything is sent: a bad one rejects the call with
 * an `InvalidOptionError` naming it under `init`, and the fetch is never called. Keys that are not
 * ours (a `RequestInit` has many) are left alone.
 */
import { describe, expect, it } from 'vitest';
import {
  LimitedClient,
  type LimitedClientOptions,
  type LimitedRequestInit,
  wrapFetch,
} from '../../src/index.js';
import { InvalidOptionError, isInvalidOptionError } from '../../src/shared/errors.js';
import { FakeClock } from './helpers.js';

const URL_ = 'https://api.example.com/x';

/** A fetch that records every call it gets and answers 200. */
function spy() {
  const sent: string[] = [];
  const fn = (async (input: RequestInfo | URL) => {
    sent.push(String(input instanceof Request ? input.url : input));
    return new Response('ok');
  }) as typeof fetch;
  return { fn, sent };
}

/** The error a call with `init` rejects with, and how many requests it sent. */
async function refusal(
  init: Record<string, unknown>,
  options: LimitedClientOptions = {},
): Promise<{ error: InvalidOptionError; sent: number }> {
  const { fn, sent } = spy();
  const fetch = wrapFetch(fn, { clock: new FakeClock(), ...options });
  try {
    await fetch(URL_, init as LimitedRequestInit);
  } catch (error) {
    if (isInvalidOptionError(error)) return { error, sent: sent.length };
    throw error;
  } finally {
    await fetch.close();
  }
  throw new Error(`the call was accepted and sent ${sent.length} request(s)`);
}

describe("a call's own options", () => {
  it.each([
    [{ retry: { retries: -1 } }, 'init.retry.retries', 'must be an integer from 0 to 100, got -1'],
    [
      { retry: { retries: 2.5 } },
      'init.retry.retries',
      'must be an integer from 0 to 100, got 2.5',
    ],
    [{ retry: { retires: 1 } }, 'init.retry.retires', 'is not a known option'],
    [{ retry: true }, 'init.retry', 'must be false or an object, got true'],
    [{ retry: { shouldRetry: 'yes' } }, 'init.retry.shouldRetry', 'must be a function'],
    [
      { timeoutMs: 'abc' },
      'init.timeoutMs',
      'must be a number of milliseconds above 0, or Infinity, got "abc"',
    ],
    [{ timeoutMs: 0 }, 'init.timeoutMs', 'got 0'],
    [{ attemptTimeoutMs: -5 }, 'init.attemptTimeoutMs', 'got -5'],
    [{ attemptTimeoutMs: Number.NaN }, 'init.attemptTimeoutMs', 'got NaN'],
    [{ cost: -1 }, 'init.cost', 'must be a number from 0 to 1000000000, got -1'],
    [{ cost: '3' }, 'init.cost', 'got "3"'],
    [{ cost: { tokens: -5 } }, 'init.cost', 'must be { requests, tokens, ... }: at most 16 units'],
    [{ cost: { requests: 1, tokens: '5' } }, 'init.cost', 'any other from 0 to 1000000000'],
    [{ cost: [1] }, 'init.cost', 'or { requests, tokens, ... }, got an array'],
    [{ cost: null }, 'init.cost', 'got null'],
    [
      { cost: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`u${i}`, 1])) },
      'init.cost',
      'at most 16 units',
    ],
    [{ idempotencyKey: 42 }, 'init.idempotencyKey', 'must be a header value'],
    [{ idempotencyKey: true }, 'init.idempotencyKey', 'got true'],
    [
      { idempotencyKey: 'k\r\nX-Injected: 1' },
      'init.idempotencyKey',
      String.raw`got "k\r\nX-Injected: 1"`,
    ],
    [{ idempotencyKey: 'k\n' }, 'init.idempotencyKey', 'must be a header value'],
    [{ partition: 42 }, 'init.partition', 'must be a string of at most 256 characters, got 42'],
    [{ partition: null }, 'init.partition', 'got null'],
    [{ partition: 'p'.repeat(257) }, 'init.partition', '(257 characters)'],
    [{ createBody: 'body' }, 'init.createBody', 'must be a function () => BodyInit'],
  ])('%j is refused as %s, nothing sent', async (init, option, message) => {
    const { error, sent } = await refusal(init);
    expect(error).toBeInstanceOf(InvalidOptionError);
    expect(error.option).toBe(option);
    expect(error.message).toContain(`invalid option ${option}: `);
    expect(error.message).toContain(message);
    expect(sent).toBe(0);
  });

  it('names the call in the message', async () => {
    const { error } = await refusal({ method: 'post', retry: { retries: -1 } });
    expect(error.message).toBe(
      `POST ${URL_}: invalid option init.retry.retries: must be an integer from 0 to 100, got -1`,
    );
    expect(error.method).toBe('POST');
    expect(error.url).toBe(URL_);
  });

  it('refuses a cost above the bucket of the host, which could never be sent', async () => {
    const { error, sent } = await refusal({ cost: 3 }, { rate: 2 });
    expect(error.option).toBe('init.cost');
    expect(error.message).toContain("must be a number from 0 to 2 (the host's burst), got 3");
    expect(sent).toBe(0);
    // The host's own bucket, as `hosts` sets it.
    const perHost = await refusal(
      { cost: 6 },
      { hosts: { 'api.example.com': { rate: 1, burst: 5 } } },
    );
    expect(perHost.error.message).toContain('from 0 to 5');
  });

  it('refuses a cost per unit whose requests exceed the bucket of the host', async () => {
    const { error, sent } = await refusal({ cost: { requests: 3, tokens: 10 } }, { rate: 2 });
    expect(error.option).toBe('init.cost');
    expect(error.message).toContain("requests from 0 to 2 (the host's burst)");
    expect(sent).toBe(0);
    // Tokens are not the bucket's: any number of them fits.
    const { fn, sent: ok } = spy();
    const fetch = wrapFetch(fn, { clock: new FakeClock(), rate: 2 });
    await fetch(URL_, { cost: { requests: 1, tokens: 1e6 } });
    expect(ok).toHaveLength(1);
    await fetch.close();
  });

  it('refuses what a cost function returns out of range, naming the option', async () => {
    const { error, sent } = await refusal({}, { cost: () => -1 });
    expect(error.option).toBe('cost');
    // The real bound (1e9 without a client bucket), not "Infinity": issue 24, item 10.
    expect(error.message).toContain('cost: must return a number from 0 to 1000000000, got -1');
    expect(sent).toBe(0);
  });

  it('rejects (never throws synchronously) through every method of LimitedClient', async () => {
    const { fn, sent } = spy();
    const client = new LimitedClient('https://api.example.com', { fetch: fn });
    const bad = { retry: { retries: -1 } } as LimitedRequestInit;
    const calls = [
      () => client.get('/x', bad),
      () => client.post('/x', { a: 1 }, bad),
      () => client.request(URL_, bad),
      () => client.fetch(new Request(URL_), bad),
    ];
    for (const call of calls) {
      const pending = call();
      await expect(pending).rejects.toThrow(InvalidOptionError);
    }
    expect(sent).toHaveLength(0);
    await client.close();
  });

  it('leaves the keys of RequestInit and unknown keys alone, and accepts the bounds', async () => {
    const { fn, sent } = spy();
    const fetch = wrapFetch(fn, { clock: new FakeClock() });
    const inits = [
      { cache: 'no-store', keepalive: false, priority: 'high', somethingElse: { a: 1 } },
      { cost: 0 },
      { cost: 1e9 },
      { cost: { requests: 1, tokens: 1200 } },
      { cost: { tokens: 0, 'output-tokens': 1e9 } },
      { cost: Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`u${i}`, 1])) },
      { retry: false },
      { retry: { retries: 0 } },
      { retry: { retries: 100, shouldRetry: () => false } },
      { timeoutMs: Number.POSITIVE_INFINITY, attemptTimeoutMs: 1 },
      { idempotencyKey: false },
      { idempotencyKey: 'a key with spaces' },
      { partition: '' },
      { partition: 'p'.repeat(256) },
      { createBody: () => 'x', method: 'PUT' },
      { cost: undefined, retry: undefined, partition: undefined },
    ];
    for (const init of inits) {
      expect((await fetch(URL_, init as LimitedRequestInit)).status).toBe(200);
    }
    expect(sent).toHaveLength(inits.length);
    await fetch.close();
  });
});

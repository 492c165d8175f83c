/**
 * Issue 23 §4: what a newcomer trips over. A base URL without its scheme, or of another scheme,
 * options given where wrapFetch takes a fetch, and a `fetch` given to the undici interceptor are
 * refused at construction with an `InvalidOptionError` naming the option and the value; a
 * `RateLimitError` after `Retry-After: 125` (over real HTTP) says the wait the server asked for and
 * the cap that refused it, apart from when a probe may go.
 */
import { afterAll, describe, expect, it } from 'vitest';
import {
  isInvalidOptionError,
  isRateLimitError,
  LimitedClient,
  type RateLimitError,
  wrapFetch,
} from '../../../src/index.js';
import { limited } from '../../../src/undici/index.js';
import { closeAll, start } from './server.js';

afterAll(closeAll);

/** What `make` throws (`undefined` when it does not). */
function thrown(make: () => unknown): unknown {
  try {
    make();
  } catch (error) {
    return error;
  }
  return undefined;
}

describe('construction mistakes are InvalidOptionErrors naming the option and the value', () => {
  it.each([
    ['api.github.com', '"api.github.com"'],
    ['localhost:8080', '"localhost:8080"'],
    ['ftp://x.com', '"ftp://x.com"'],
    ['/v1', '"/v1"'],
    ['', '""'],
  ])('new LimitedClient(%j)', (baseUrl, shown) => {
    const error = thrown(() => new LimitedClient(baseUrl));
    expect(isInvalidOptionError(error)).toBe(true);
    expect((error as Error).message).toBe(
      `invalid option baseUrl: must be an absolute http: or https: URL, such as "https://api.example.com", got ${shown}`,
    );
  });

  it('takes http: and https: base URLs, as strings or URL objects', () => {
    for (const base of [
      'http://localhost:8080',
      'https://api.github.com/v3',
      new URL('http://a.b'),
    ]) {
      expect(thrown(() => new LimitedClient(base))).toBeUndefined();
    }
  });

  it('wrapFetch with its options first says what the signature is', () => {
    const error = thrown(() => wrapFetch({ concurrency: 1 } as never));
    expect(isInvalidOptionError(error)).toBe(true);
    expect((error as Error).message).toBe(
      'invalid option fetch: must be a fetch function: the signature is wrapFetch(fetch?, options?), so options go second (wrapFetch(undefined, options) wraps the global fetch), got an object',
    );
    expect(thrown(() => wrapFetch(undefined, { concurrency: 1 }).close())).toBeUndefined();
  });

  it('limited({ fetch }) is refused: the interceptor sends through its dispatcher', () => {
    const error = thrown(() => limited({ fetch: globalThis.fetch }));
    expect(isInvalidOptionError(error)).toBe(true);
    expect((error as Error).message).toBe(
      'invalid option fetch: is not an option of limited(): every request goes through the dispatcher the interceptor is composed onto, got a function',
    );
    expect(thrown(() => limited({ concurrency: 1 }))).toBeUndefined();
  });
});

describe('a RateLimitError after Retry-After: 125', () => {
  it('says the server asked for 125 s, the caller allows 60 s, and when a probe may go', async () => {
    const server = await start({
      routes: [
        {
          path: '/x',
          headers: 'none',
          // One token, back in 125 s (a window aligned to the epoch might end sooner).
          limits: [{ algorithm: 'token-bucket', capacity: 1, refillPerSecond: 0.008 }],
        },
      ],
    });
    const client = new LimitedClient(server.url);
    expect((await client.get('/x')).status).toBe(200);
    // Refused with Retry-After: 125, more than the 60 s allowed: returned, not waited.
    const refused = await client.get('/x');
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('125');
    // The hold is recorded for 60 s at most; the next call is refused at once, unsent.
    const error = (await client.get('/x').catch((e: unknown) => e)) as RateLimitError;
    expect(isRateLimitError(error)).toBe(true);
    expect(error.serverWaitMs).toBeGreaterThan(120_000);
    expect(error.serverWaitMs).toBeLessThanOrEqual(125_000);
    expect(error.retryAfterMs).toBeLessThanOrEqual(61_000);
    expect(error.message).toBe(
      `GET ${server.url}/x: rate limited: the server asks for a wait of ${error.serverWaitMs} ms, more than the 60000 ms the caller allows (maxRetryAfterMs); a probe may go in ${error.retryAfterMs} ms`,
    );
    expect(server.stats()).toMatchObject({ admitted: 1, rejected: 1 });
    await client.close();
  });
});

/**
 * Issue 13, "found on the way", over real HTTP: a response a call resolves to always has a readable
 * body, and `globalThis.fetch = wrapFetch()` puts the process's fetch through the client instead of
 * calling itself for ever.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { wrapFetch } from '../../../src/index.js';
import { type ScriptedServer, scriptedServer } from '../../hostile/helpers.js';

let server: ScriptedServer | undefined;
const original = globalThis.fetch;
afterEach(async () => {
  globalThis.fetch = original;
  await server?.close();
  server = undefined;
});

describe('responses handed to the caller', () => {
  it('are readable when the breaker opens during a retry backoff', async () => {
    server = await scriptedServer(() => ({ status: 503, body: 'down for maintenance' }));
    const f = wrapFetch(fetch);
    const url = `${server.url}/x`;
    const bodies = await Promise.all(
      Array.from({ length: 10 }, async () => {
        try {
          return await (await f(url)).text();
        } catch (error) {
          // A call refused before any answer rejects with the typed error; never a dead body.
          expect((error as { code?: string }).code).toBe('ERR_CIRCUIT_OPEN');
          return 'refused';
        }
      }),
    );
    expect(bodies.filter((b) => b === 'down for maintenance').length).toBeGreaterThan(0);
    expect(bodies.every((b) => b === 'down for maintenance' || b === 'refused')).toBe(true);
    await f.close();
  });
});

describe('globalThis.fetch = wrapFetch()', () => {
  it('sends through the fetch that was global when it was made, and settles', async () => {
    server = await scriptedServer(() => ({ status: 200, body: 'ok' }));
    const wrapped = wrapFetch();
    globalThis.fetch = wrapped;
    const response = await fetch(`${server.url}/x`);
    expect(await response.text()).toBe('ok');
    expect(server.received).toBe(1);
    // Twice over: each wrapper still ends at the real fetch.
    const twice = wrapFetch();
    globalThis.fetch = twice;
    expect(await (await fetch(`${server.url}/y`)).text()).toBe('ok');
    expect(server.received).toBe(2);
    expect(wrapped.stats().totals.requests).toBe(2);
    expect(twice.stats().totals.requests).toBe(1);
    await wrapped.close();
    await twice.close();
  });
});
